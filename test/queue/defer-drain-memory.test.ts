/** Deferred backlogs drain at the borrowed rate (defer-drain-suite.ts) on MemoryStore. */
import { MemoryStore } from '../../src/memory/memory-store';
import { describeDeferDrain } from './defer-drain-suite';

describeDeferDrain('MemoryStore', async () => ({
  make: (spec, clock) => {
    const limiter = new MemoryStore({ clock }).bind(spec);
    return { limiter, close: () => limiter.destroy() };
  },
  close: async () => {},
}));
