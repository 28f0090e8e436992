import { MemoryStore } from '../../src/store/memory-store';
import { describeDefer } from './defer-suite';

describeDefer('MemoryStore', (clock) => new MemoryStore({ clock }));
