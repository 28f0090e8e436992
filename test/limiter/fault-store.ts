/** A hand-written LimiterStore fault double: answers from MemoryStore, or throws, or hangs, on command (admit, counts, peek, reset). */
import { MemoryStore } from '../../src/store/memory-store';
import type { JobCounts } from '../../src/queue/types';
import type { AdmitInput, Decision, LimiterSpec, LimiterStore, Store } from '../../src/types';

export type FaultMode = 'ok' | 'throw' | 'hang';

export class FaultStore implements Store {
  mode: FaultMode = 'ok';
  readonly calls: AdmitInput[] = [];
  probes = 0;
  private readonly inner = new MemoryStore({ clock: () => 1_800_000_000_000 });

  private fault(): Promise<never> | undefined {
    if (this.mode === 'throw') return Promise.reject(new Error('connect ECONNREFUSED'));
    if (this.mode === 'hang') return new Promise(() => {});
    return undefined;
  }

  bind(spec: LimiterSpec): LimiterStore {
    const inner = this.inner.bind(spec);
    const admit = (input: AdmitInput): Promise<Decision> => {
      this.calls.push(input);
      return this.fault() ?? inner.admit(input);
    };
    // The breaker's probe of a non-Redis store.
    const counts = (): Promise<JobCounts> => {
      this.probes += 1;
      return this.fault() ?? inner.counts();
    };
    // Admission and counts are faulted; every other operation goes to the inner store, bound to it.
    return new Proxy(inner, {
      get: (target, prop, receiver) => {
        if (prop === 'admit') return admit;
        if (prop === 'counts') return counts;
        if (prop === 'peek' || prop === 'reset') {
          return (arg: never) => {
            this.calls.push({ group: String(prop), weight: 1, cost: 1 });
            return this.fault() ?? (target[prop] as (arg: never) => Promise<unknown>)(arg);
          };
        }
        const value: unknown = Reflect.get(target, prop, receiver);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
  }
}
