/**
 * An in-process store's admission without a promise: the MemoryStore decides synchronously, so the outage guard
 * asks it directly instead of racing a promise against `timeoutMs` (a synchronous call cannot outlive its deadline:
 * the answer is there before any timer runs). Not part of the store contract: known by the binding's identity, so
 * a store that wraps the binding (a Proxy, a copy with its own `admit`) is called through its `admit` as before.
 */
import type { AdmitInput, Decision, LimiterStore } from '../types';

type AdmitNow = (input: AdmitInput) => Decision;

const admitting = new WeakMap<LimiterStore, AdmitNow>();

/** Registers `store`'s synchronous admission (what its `admit` answers, without the promise); returns the store. */
export function withAdmitNow<S extends LimiterStore>(store: S, admitNow: AdmitNow): S {
  admitting.set(store, admitNow);
  return store;
}

/** The synchronous admission of this very store object, if it has one. */
export function admitNowOf(store: LimiterStore): AdmitNow | undefined {
  return admitting.get(store);
}
