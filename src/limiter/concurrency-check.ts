/**
 * The limiter's side of request concurrency (the store's is lua/includes/concurrency.lua and
 * src/core/concurrency.ts): the per-check cap, the jittered wait of a request the cap turned away, and release.
 */
import { InputError, describeValue } from '../errors';
import type { Decision, LimiterStore, Logger } from '../types';
import { isIntegerIn } from '../util/validate';

/** Largest cap a check may give: far beyond any fleet's requests in flight, small for the store's counters. */
const MAX_CONCURRENCY = 1_000_000;
/**
 * Snooze with jitter: a request the cap turned away waits about this long, ±50 % at random, so the callers a
 * full group turns away do not all come back at one instant. Nobody knows when a slot frees (the requests in
 * flight end when they end), so this is a short poll, not a promise; Retry-After rounds it to 1 or 2 s.
 */
export const CONCURRENCY_SNOOZE_MS = 1000;

/** A check's `concurrency`: an integer 0 (no cap) … MAX_CONCURRENCY. */
export function checkCap(value: unknown): number {
  if (!isIntegerIn(value, 0, MAX_CONCURRENCY)) {
    throw new InputError(
      'ERR_BL_BAD_CONCURRENCY',
      `Expected \`concurrency\` to be an integer from 0 to ${MAX_CONCURRENCY}, got ${describeValue(value)}`,
    );
  }
  return value;
}

/** A decision the cap said no to waits at least a jittered snooze (a deferred one keeps its job's times). */
export function snooze(decision: Decision): Decision {
  if (decision.allowed || decision.reason !== 'concurrency' || decision.job !== undefined) return decision;
  const wait = Math.ceil(CONCURRENCY_SNOOZE_MS * (0.5 + Math.random()));
  return wait > decision.retryAfterMs ? { ...decision, retryAfterMs: wait } : decision;
}

/** Frees a decision's slot; false when it holds none, or the store failed (the lease then ends on its own). */
export async function releaseSlot(store: LimiterStore, decision: Decision, logger: Logger): Promise<boolean> {
  const lease = decision?.concurrency?.lease;
  if (lease === undefined || store.release === undefined) return false;
  try {
    return await store.release(lease);
  } catch (error) {
    logger.warn(`bulk-limiter: a concurrency slot could not be released (it frees when its lease ends): ${String(error)}`);
    return false;
  }
}
