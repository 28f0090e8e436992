import { MemoryStore } from '../../src/memory/memory-store';
import type { Clock, Store } from '../../src/types';
import { admissionState } from '../helpers/memory-state';
import { describeAdmissionGuarantees } from './admission-guarantees-suite';
import { describeAdaptiveCases } from './adaptive-suite';
import { describeBurstyCases } from './bursty-suite';
import { describeConcurrencyCases } from './concurrency-suite';
import { describeDestroyCases } from './destroy-suite';
import { describeOldestWaitingCases } from './oldest-waiting-suite';
import { describeOverrideCases } from './overrides-suite';
import { describeJobPlanCases } from './job-plans-suite';
import { describePlanCases } from './plans-suite';
import { describeClassCases } from './classes-suite';
import { describeConfigDriftCases } from './config-drift-suite';
import { describePeekResetCases } from './peek-reset-suite';
import { describeProbationRuleCases } from './probation-rules-suite';
import { describeRuleCases } from './rules-suite';
import { describeSettleCases } from './settle-suite';
import { describeSmallLimitCases } from './small-limit-suite';
import { describeStore, type StoreHarness } from './store-suite';

/** The limiter's state as Redis would show it: none past its TTL (reading an expired key drops it). */
const snapshot = async (store: Store, name: string): Promise<unknown> => {
  const state = admissionState(store as MemoryStore, name);
  const nowMs = Math.floor((store as MemoryStore)['clock']());
  return state === undefined || nowMs > state.expiresAtMs ? undefined : structuredClone(state);
};

/** The counterpart of probation-rules-suite's Redis count: meta, and the entries of every map. */
const entries = async (store: Store, name: string): Promise<number> => {
  const state = admissionState(store as MemoryStore, name);
  if (!state) return 0;
  return (state.meta ? 1 : 0) + state.groups.size + state.seen.size + state.probation.size + state.sighted.size;
};

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
describeBurstyCases('MemoryStore', harness);
describeOldestWaitingCases('MemoryStore', harness);
describeRuleCases('MemoryStore', harness);
describePlanCases('MemoryStore', harness);
describeClassCases('MemoryStore', harness);
describeJobPlanCases('MemoryStore', harness);
describePeekResetCases('MemoryStore', async () => ({ ...(await harness()), snapshot }));
describeConcurrencyCases('MemoryStore', harness);
describeProbationRuleCases('MemoryStore', async () => ({ ...(await harness()), entries }));
describeDestroyCases('MemoryStore', harness);
describeSettleCases('MemoryStore', harness);
describeAdaptiveCases('MemoryStore', harness);
describeConfigDriftCases('MemoryStore', harness);
describeOverrideCases('MemoryStore', harness);
