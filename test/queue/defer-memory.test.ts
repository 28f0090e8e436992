import { MemoryStore } from '../../src/memory/memory-store';
import { describeDefer } from './defer-suite';

describeDefer('MemoryStore', (clock) => new MemoryStore({ clock }));
