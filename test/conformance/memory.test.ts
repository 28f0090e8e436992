import { MemoryStore } from '../../src/store/memory-store';
import type { Clock } from '../../src/types';
import { describeAdmissionGuarantees } from './admission-guarantees-suite';
import { describeConcurrencyCases } from './concurrency-suite';
import { describeOldestWaitingCases } from './oldest-waiting-suite';
import { describeRuleCases } from './rules-suite';
import { describeSmallLimitCases } from './small-limit-suite';
import { describeStore, type StoreHarness } from './store-suite';

const harness = async (): Promise<StoreHarness> => {
  // One instance per clock: every handle shares it, as every process shares one Redis.
  const stores = new Map<unknown, MemoryStore>();
  return {
    make: (clock: Clock, handles = 1) => {
      let s = stores.get(clock);
      if (!s) {
        s = new MemoryStore({ clock });
        stores.set(clock, s);
      }
      return Array.from({ length: handles }, () => s!);
    },
    close: async () => {
      stores.clear();
    },
  };
};

describeStore('MemoryStore', harness);
describeAdmissionGuarantees('MemoryStore', harness);
describeSmallLimitCases('MemoryStore', harness);
describeOldestWaitingCases('MemoryStore', harness);
describeRuleCases('MemoryStore', harness);
describeConcurrencyCases('MemoryStore', harness);
