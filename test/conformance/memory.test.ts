import { MemoryStore } from '../../src/store/memory-store';
import type { Clock, Store } from '../../src/types';
import { describeAdmissionGuarantees } from './admission-guarantees-suite';
import { describeConcurrencyCases } from './concurrency-suite';
import { describeDestroyCases } from './destroy-suite';
import { describeOldestWaitingCases } from './oldest-waiting-suite';
import { describePlanCases } from './plans-suite';
import { describePeekResetCases } from './peek-reset-suite';
import { describeRuleCases } from './rules-suite';
import { describeSmallLimitCases } from './small-limit-suite';
import { describeStore, type StoreHarness } from './store-suite';

const snapshot = async (store: Store, name: string): Promise<unknown> => structuredClone((store as MemoryStore).stateOf(name));

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
describePlanCases('MemoryStore', harness);
describePeekResetCases('MemoryStore', async () => ({ ...(await harness()), snapshot }));
describeConcurrencyCases('MemoryStore', harness);
describeDestroyCases('MemoryStore', harness);
