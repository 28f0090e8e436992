/** A hand-written LimiterStore fault double: answers from MemoryStore, or throws, or hangs, on command. */
import { MemoryStore } from '../../src/store/memory-store';
import type { AdmitInput, Decision, LimiterSpec, LimiterStore, Store } from '../../src/types';

export type FaultMode = 'ok' | 'throw' | 'hang';

export class FaultStore implements Store {
  mode: FaultMode = 'ok';
  readonly calls: AdmitInput[] = [];
  private readonly inner = new MemoryStore({ clock: () => 1_800_000_000_000 });

  bind(spec: LimiterSpec): LimiterStore {
    const inner = this.inner.bind(spec);
    const admit = (input: AdmitInput): Promise<Decision> => {
      this.calls.push(input);
      if (this.mode === 'throw') return Promise.reject(new Error('connect ECONNREFUSED'));
      if (this.mode === 'hang') return new Promise(() => {});
      return inner.admit(input);
    };
    // Only admission is faulted; every other operation goes to the inner store, bound to it.
    return new Proxy(inner, {
      get: (target, prop, receiver) => {
        if (prop === 'admit') return admit;
        const value: unknown = Reflect.get(target, prop, receiver);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
  }
}
