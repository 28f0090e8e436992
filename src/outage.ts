/**
 * The `onStoreError` policy. Every store call races `timeoutMs`; a failure or a timeout is wrapped in a
 * StoreError (with `cause`) and answered by the policy:
 *
 * - `'allow'` — fail open: the request passes (WRN_BL_STORE_FAIL_OPEN).
 * - `'deny'`  — fail closed: a denied decision with reason `'store-error'`; the middleware answers 503 +
 *   Retry-After (WRN_BL_STORE_FAIL_CLOSED).
 * - `'local'` — an in-process safety net (rate-limiter-flexible's RateLimiterMemory) that admits at most
 *   `floor(limit / instances)` units per window in this process (WRN_BL_STORE_FAIL_LOCAL). It is NOT fair
 *   share: one process-wide budget, first come first served. (A budget per group of the same size would never
 *   bind before the process-wide one, and per-group budgets alone would let N tenants through N times.)
 *
 * The warning is logged once per outage, not per request. While the store is failing only one call at a time
 * probes it; the others go straight to the policy, so a hanging store does not add `timeoutMs` to every
 * request. The first probe that answers ends the outage (WRN_BL_STORE_RECOVERED).
 *
 * Timeouts only bound how long we wait: with ioredis, also set `enableOfflineQueue: false` and a small
 * `maxRetriesPerRequest`, or queued commands flood Redis when it comes back.
 */
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { StoreError } from './errors';
import type { StoreErrorPolicy } from './options';
import type { AdmitInput, Decision, LimiterSpec, LimiterStore, Logger } from './types';

export interface OutageGuardOptions {
  readonly policy: StoreErrorPolicy;
  readonly timeoutMs: number;
  readonly instances: number;
  readonly spec: LimiterSpec;
  readonly logger: Logger;
}

export interface OutageGuard {
  /** `store.admit(input)` within `timeoutMs`, or the policy's answer when the store fails. */
  admit(input: AdmitInput): Promise<Decision>;
  /** `true` while the store is considered down. */
  readonly failing: boolean;
}

/** Decisions made without the store ('allow' and 'deny'): they carry no real quota numbers. */
const degraded = new WeakSet<Decision>();

/** Whether a decision was made by the outage policy without quota numbers (headers then leave quota out). */
export function isDegraded(decision: Decision): boolean {
  return degraded.has(decision);
}

const WARNINGS: Record<StoreErrorPolicy, string> = {
  allow: 'WRN_BL_STORE_FAIL_OPEN: the store failed; requests are let through until it answers again',
  deny: 'WRN_BL_STORE_FAIL_CLOSED: the store failed; requests are answered 503 until it answers again',
  local: 'WRN_BL_STORE_FAIL_LOCAL: the store failed; an in-process limiter (limit / instances, not fair share) decides until it answers again',
};

/** Rejects with a StoreError when `promise` does not settle within `timeoutMs`. */
export function withTimeout<T>(promise: Promise<T>, timeoutMs: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      reject(new StoreError('ERR_BL_STORE_TIMEOUT', `The store did not answer within ${timeoutMs} ms`));
    }, timeoutMs);
    timer.unref();
    promise.then(
      (value) => { clearTimeout(timer); resolve(value); },
      (error: unknown) => { clearTimeout(timer); reject(error); },
    );
  });
}

function toStoreError(error: unknown): StoreError {
  if (error instanceof StoreError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new StoreError('ERR_BL_STORE_FAILED', `The store failed: ${message}`, { cause: error });
}

export function createOutageGuard(store: LimiterStore, options: OutageGuardOptions): OutageGuard {
  const { policy, timeoutMs, spec, logger } = options;
  const decide = policyDecider(policy, spec, options.instances);
  let failing = false;
  let probing = false;

  const fail = (error: unknown, input: AdmitInput): Promise<Decision> => {
    if (!failing) {
      failing = true;
      logger.warn(`${WARNINGS[policy]} (limiter "${spec.name}": ${toStoreError(error).message})`);
    }
    return decide(input);
  };

  const probe = async (input: AdmitInput): Promise<Decision> => {
    probing = true;
    try {
      const decision = await withTimeout(store.admit(input), timeoutMs);
      failing = false;
      logger.warn(`WRN_BL_STORE_RECOVERED: the store answers again (limiter "${spec.name}")`);
      return decision;
    } catch (error) {
      return decide(input);
    } finally {
      probing = false;
    }
  };

  return {
    get failing() { return failing; },
    admit(input) {
      if (failing) return probing ? decide(input) : probe(input);
      return withTimeout(store.admit(input), timeoutMs).catch((error: unknown) => fail(error, input));
    },
  };
}

/** One process-wide budget (see the header comment). */
const LOCAL_KEY = 'all';

type PolicyDecider = (input: AdmitInput) => Promise<Decision>;

function policyDecider(policy: StoreErrorPolicy, spec: LimiterSpec, instances: number): PolicyDecider {
  if (policy === 'allow') {
    return async (input) => {
      const d: Decision = {
        allowed: true, group: input.group, limit: spec.limit, guaranteed: 0, remaining: 0, retryAfterMs: 0,
        resetMs: 0, activeGroups: 0, colour: 'green', at: Date.now(),
      };
      degraded.add(d);
      return d;
    };
  }
  if (policy === 'deny') {
    // Ask clients to come back after a short while, not a whole (possibly long) window.
    const retryAfterMs = Math.min(spec.windowMs, 5_000);
    return async (input) => {
      const d: Decision = {
        allowed: false, group: input.group, limit: spec.limit, guaranteed: 0, remaining: 0, retryAfterMs,
        resetMs: retryAfterMs, activeGroups: 0, colour: 'red', reason: 'store-error', at: Date.now(),
      };
      degraded.add(d);
      return d;
    };
  }
  const points = Math.max(1, Math.floor(spec.limit / instances));
  const local = new RateLimiterMemory({ points, duration: spec.windowMs / 1000, keyPrefix: `bl-local-${spec.name}` });
  const toDecision = (input: AdmitInput, res: RateLimiterRes, allowed: boolean): Decision => {
    const base = {
      allowed, group: input.group, limit: points, guaranteed: points, remaining: Math.max(0, res.remainingPoints),
      retryAfterMs: allowed ? 0 : Math.max(1, res.msBeforeNext), resetMs: Math.max(0, res.msBeforeNext),
      activeGroups: 0, colour: allowed ? 'green' : 'red', at: Date.now(),
    } as const;
    return allowed ? base : { ...base, reason: 'limit' };
  };
  return (input) => local.consume(LOCAL_KEY, input.cost).then(
    (res) => toDecision(input, res, true),
    (res: unknown) => {
      if (!(res instanceof RateLimiterRes)) throw res;
      // rate-limiter-flexible counts refused points too; give them back so refusals don't extend the denial.
      void local.reward(LOCAL_KEY, input.cost);
      return toDecision(input, res, false);
    },
  );
}
