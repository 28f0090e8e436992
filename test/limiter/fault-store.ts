/** A hand-written LimiterStore fault double: answers from MemoryStore, or throws, or hangs, on command (admit, counts, peek, reset). */
import { MemoryStore } from '../../src/memory/memory-store';
import type { JobCounts } from '../../src/types';
import type { AdmitInput, Decision, LimiterSpec, LimiterStore, Store } from '../../src/types';

export type FaultMode = 'ok' | 'throw' | 'hang';

export class FaultStore implements Store {
  mode: FaultMode = 'ok';
  /** What a call rejects with in mode 'throw'. */
  error: Error = new Error('connect ECONNREFUSED');
  readonly calls: AdmitInput[] = [];
  probes = 0;
  private readonly inner = new MemoryStore({ clock: () => 1_800_000_000_000 });

  private fault(): Promise<never> | undefined {
    if (this.mode === 'throw') return Promise.reject(this.error);
    if (this.mode === 'hang') return new Promise(() => {});
    return undefined;
  }

  bind(spec: LimiterSpec): LimiterStore {
    const inner = this.inner.bind(spec);
    const recorded = <T>(op: string, run: () => Promise<T>): Promise<T> => {
      this.calls.push({ group: op, weight: 1, cost: 1 });
      return this.fault() ?? run();
    };
    // The breaker's probe of a non-Redis store.
    const counts = (): Promise<JobCounts> => {
      this.probes += 1;
      return this.fault() ?? inner.queue.counts();
    };
    // Admission, peek, reset and the queue's counts are faulted; everything else is the inner store's.
    const queue = new Proxy(inner.queue, {
      get: (target, prop, receiver) => {
        if (prop === 'counts') return counts;
        const value: unknown = Reflect.get(target, prop, receiver);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    return {
      ...inner,
      queue,
      admit: (input: AdmitInput): Promise<Decision> => {
        this.calls.push(input);
        return this.fault() ?? inner.admit(input);
      },
      peek: (input) => recorded('peek', () => inner.peek(input)),
      reset: (group) => recorded('reset', () => inner.reset(group)),
    };
  }
}
