/**
 * The `onStoreError` policies: how a check is answered while the store fails (./outage.ts decides when).
 * `'allow'` and `'deny'` make up a decision without quota numbers (isDegraded); `'local'` asks the MemoryStore's
 * admission core in this process, sized `limit / instances`, holding the overrides this process knows.
 */
import type { StoreErrorPolicy } from '../../types';
import type { Scheduler } from '../../util/scheduler';
import { MemoryStore } from '../../memory/memory-store';
import type { KnownOverrides } from './known-overrides';
import type { AdmitInput, Decision, LimiterSpec } from '../../types';

/** Logged once per outage, when the breaker opens. */
export const POLICY_WARNINGS: Record<StoreErrorPolicy, string> = {
  allow: 'WRN_BL_STORE_FAIL_OPEN: the store failed; requests are let through until it answers again',
  deny: 'WRN_BL_STORE_FAIL_CLOSED: the store failed; requests are answered 503 until it answers again',
  local: 'WRN_BL_STORE_FAIL_LOCAL: the store failed; an in-process limiter (limit / instances, fair share) decides until it answers again',
};

/** Decisions made without the store ('allow' and 'deny'): they carry no real quota numbers. */
const degraded = new WeakSet<Decision>();

/** Whether a decision was made by the outage policy without quota numbers (headers then leave quota out). */
export function isDegraded(decision: Decision): boolean {
  return degraded.has(decision);
}

/** A check that could defer, not decided by the store: 503 + Retry-After with the key a retry must carry (never 429). */
export function unresolved(decision: Decision, idempotencyKey: string, retryAfterMs: number): Decision {
  const { job: _none, policy: _policy, rules: _rules, hintMs: _hint, globalWaitMs: _wait, ...rest } = decision;
  const d: Decision = {
    ...rest,
    allowed: false,
    remaining: 0,
    colour: 'red',
    reason: 'store-error',
    retryAfterMs: Math.max(decision.retryAfterMs, retryAfterMs),
    idempotencyKey,
  };
  degraded.add(d);
  return d;
}

/** The check as the 'local' fallback decides it: no job written, no slot taken (both belong to the store). */
function withoutDeferOrSlot(input: AdmitInput): AdmitInput {
  const { group, weight, cost, plan } = input;
  return plan === undefined ? { group, weight, cost } : { group, weight, cost, plan };
}

/**
 * The `'local'` fallback's settings: `limit / instances` (at least 1), with burst and reserve scaled the same
 * way, so this process alone never admits more than its share in any window.
 */
export function localSpec(spec: LimiterSpec, instances: number): LimiterSpec {
  if (instances === 1) return spec;
  const limit = Math.max(1, Math.floor(spec.limit / instances));
  const scale = limit / spec.limit;
  let reserve = spec.reserve === 0 ? 0 : Math.max(1, Math.round(spec.reserve * scale));
  const burst = Math.min(limit, Math.max(reserve + 1, Math.round(spec.burst * scale)));
  if (reserve >= burst) reserve = burst - 1;
  return { ...spec, limit, burst, reserve };
}

/**
 * The policy while the breaker is open. `'local'` keeps one limit with the store (proof in
 * docs/redis-deployment.md): from each opening it admits nothing for `timeoutMs + windowMs` (answering 503),
 * and the breaker closes only once its last admission is a window old.
 */
export interface PolicyDecider {
  decide(input: AdmitInput): Promise<Decision>;
  /** The breaker opened now. */
  opened(): void;
  /** The store answers again: ms until the breaker may close (the fallback admits nothing meanwhile); ≤ 0: now. */
  closeDelayMs(): number;
}

/** A decision made without the store, without quota numbers: allowed, or 'store-error' (503 + Retry-After). */
function madeUp(input: AdmitInput, spec: LimiterSpec, allowed: boolean, retryAfterMs: number, at: number): Decision {
  const d: Decision = {
    allowed,
    group: input.group,
    limit: spec.limit,
    guaranteed: 0,
    remaining: 0,
    retryAfterMs,
    resetMs: retryAfterMs,
    activeGroups: 0,
    colour: allowed ? 'green' : 'red',
    ...(allowed ? {} : { reason: 'store-error' as const }),
    at,
  };
  degraded.add(d);
  return d;
}

export function policyDecider(
  policy: StoreErrorPolicy,
  spec: LimiterSpec,
  instances: number,
  timeoutMs: number,
  scheduler: Scheduler,
  known?: KnownOverrides,
): PolicyDecider {
  // 'deny' (and a fallback without budget) asks clients to come back after a short while, not a whole (possibly long) window.
  const shortWaitMs = Math.min(spec.windowMs, 5_000);
  if (policy === 'allow' || policy === 'deny') {
    const deny = policy === 'deny';
    return {
      opened: () => undefined,
      closeDelayMs: () => 0,
      decide: async (input) => madeUp(input, spec, !deny, deny ? shortWaitMs : 0, scheduler.now()),
    };
  }
  // The same admission core as the MemoryStore; a denied request is not deferred (there is no queue to write to),
  // and no concurrency slot is taken (release goes to the store: a local slot would be held until its lease ends).
  const sized = localSpec(spec, instances);
  /** The overrides being written into the fallback's store (it answers once they are in). */
  let loading: Promise<unknown> | undefined;
  /** A fresh fallback store holding the overrides known now: a blocked tenant stays blocked through the outage. */
  const fresh = () => {
    const store = new MemoryStore({ clock: () => scheduler.now() }).bind(sized);
    const overrides = known?.inForce(scheduler.now()) ?? [];
    // a write that failed (a MemoryStore's does not) would only leave its override out: the fallback must answer
    loading =
      overrides.length === 0
        ? undefined
        : Promise.all(overrides.map((o) => store.setOverride?.({ ...o, maxOverrides: known!.max }))).catch(() => undefined);
    return store;
  };
  let local = fresh();
  let admitsFrom = -Infinity;
  let lastAdmittedAt = -Infinity;
  let closing = false;
  return {
    opened() {
      local = fresh();
      admitsFrom = scheduler.now() + timeoutMs + spec.windowMs;
      closing = false;
    },
    closeDelayMs() {
      closing = true;
      return lastAdmittedAt + spec.windowMs - scheduler.now();
    },
    async decide(input) {
      const now = scheduler.now();
      if (closing) return madeUp(input, spec, false, shortWaitMs, now);
      if (now < admitsFrom) return madeUp(input, spec, false, Math.ceil(admitsFrom - now), now);
      if (loading !== undefined) await loading;
      const d = await local.admit(input.defer === undefined && input.concurrency === undefined ? input : withoutDeferOrSlot(input));
      if (d.allowed) lastAdmittedAt = scheduler.now();
      return d;
    },
  };
}
