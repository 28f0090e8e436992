/**
 * The `onStoreError` policies: how a check is answered while the store fails (./outage.ts decides when).
 * `'allow'` and `'deny'` make up a decision without quota numbers (isDegraded); `'local'` asks the MemoryStore's
 * admission core in this process, sized `limit / instances`.
 */
import type { StoreErrorPolicy } from '../../types';
import type { Scheduler } from '../../util/scheduler';
import { MemoryStore } from '../../memory/memory-store';
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

export type PolicyDecider = (input: AdmitInput) => Promise<Decision>;

export function policyDecider(policy: StoreErrorPolicy, spec: LimiterSpec, instances: number, scheduler: Scheduler): PolicyDecider {
  if (policy === 'allow' || policy === 'deny') {
    const deny = policy === 'deny';
    // 'deny' asks clients to come back after a short while, not a whole (possibly long) window.
    const retryAfterMs = deny ? Math.min(spec.windowMs, 5_000) : 0;
    return async (input) => {
      const d: Decision = {
        allowed: !deny,
        group: input.group,
        limit: spec.limit,
        guaranteed: 0,
        remaining: 0,
        retryAfterMs,
        resetMs: retryAfterMs,
        activeGroups: 0,
        colour: deny ? 'red' : 'green',
        ...(deny ? { reason: 'store-error' as const } : {}),
        at: scheduler.now(),
      };
      degraded.add(d);
      return d;
    };
  }
  // The same admission core as the MemoryStore; a denied request is not deferred (there is no queue to write to),
  // and no concurrency slot is taken (release goes to the store: a local slot would be held until its lease ends).
  const local = new MemoryStore({ clock: () => scheduler.now() }).bind(localSpec(spec, instances));
  return (input) => local.admit(input.defer === undefined && input.concurrency === undefined ? input : withoutDeferOrSlot(input));
}
