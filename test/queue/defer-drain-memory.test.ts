/** Deferred backlogs drain at the borrowed rate (defer-drain-suite.ts) on MemoryStore. */
import { MemoryStore } from '../../src/store/memory-store';
import { describeDeferDrain } from './defer-drain-suite';

describeDeferDrain('MemoryStore', async () => ({
  make: (spec, clock) => {
    const store = new MemoryStore({ clock });
    const limiter = store.bind(spec);
    return {
      limiter,
      takeReady: async () => {
        await limiter.counts(); // creates the limiter's queue
        return store.queueOf(spec.name)!.ready.splice(0);
      },
      close: () => limiter.destroy(),
    };
  },
  close: async () => {},
}));
