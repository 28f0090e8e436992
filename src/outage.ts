/**
 * The `onStoreError` policy and the breaker in front of the store. Every store call races `timeoutMs`; a
 * failure or a timeout is wrapped in a StoreError (with `cause`), opens the breaker and is answered by the
 * policy:
 *
 * - `'allow'` — fail open: the request passes (WRN_BL_STORE_FAIL_OPEN).
 * - `'deny'`  — fail closed: a denied decision with reason `'store-error'`; the middleware answers 503 +
 *   Retry-After (WRN_BL_STORE_FAIL_CLOSED).
 * - `'local'` — the MemoryStore's admission core in this process, sized `limit / instances`: strict in any
 *   window and fair between groups, like the store it stands in for (WRN_BL_STORE_FAIL_LOCAL).
 *
 * While the breaker is open the store is not called at all: checks are answered by the policy at once (no
 * `timeoutMs` wait, even when the client queues commands offline), and a background probe asks the store
 * every 100 ms … 1 s (doubling). The first probe that answers closes the breaker (WRN_BL_STORE_RECOVERED).
 * Warnings are logged once per outage.
 */
import { StoreError } from './errors';
import type { StoreErrorPolicy } from './options';
import { realScheduler, type Scheduler } from './scheduler';
import { MemoryStore } from './store/memory-store';
import type { AdmitInput, Decision, LimiterSpec, LimiterStore, Logger } from './types';

/** Told about every decision and store call while someone observes (metrics); see `limiter.observe`. */
export interface GuardObserver {
  /** `fallback`: the `onStoreError` policy that answered; undefined when the store did. */
  decision(decision: Decision, fallback: StoreErrorPolicy | undefined): void;
  /** One store admission call: its duration in ms and whether it failed (or timed out). */
  storeCall(ms: number, failed: boolean): void;
}

/** A decision and the `onStoreError` policy that answered (undefined when the store did). */
export interface Answer {
  readonly decision: Decision;
  readonly fallback: StoreErrorPolicy | undefined;
}

export interface OutageGuardOptions {
  readonly policy: StoreErrorPolicy;
  readonly timeoutMs: number;
  readonly instances: number;
  readonly spec: LimiterSpec;
  readonly logger: Logger;
  /** A cheap read that succeeds when the store answers again (the breaker's background probe). */
  readonly probe: () => Promise<unknown>;
  /** Resolves when a client still making its first connection is ready: checks wait for it (within timeoutMs). */
  readonly connecting?: Promise<void> | undefined;
  /** Time and timers of the store-call timeouts, the probe and the `'local'` fallback (tests). @defaultValue the real one */
  readonly scheduler?: Scheduler;
  readonly onDegraded?: (error: StoreError) => void;
  readonly onRecovered?: (downMs: number) => void;
}

export interface OutageGuard {
  /** `store.admit(input)` within `timeoutMs`, or the policy's answer when the store fails or the breaker is open. */
  admit(input: AdmitInput): Promise<Decision>;
  /**
   * `admit` without reporting the decision to the observer (a store call is still reported): the caller
   * reports it with `report` once it knows it is final (a deferring check may ask again with the payload).
   */
  admitUnreported(input: AdmitInput): Promise<Answer>;
  report(answer: Answer): void;
  /**
   * A store call that is not an admission (`peek`, `reset`): within `timeoutMs` (waiting for a first connection,
   * like a check); a failure or timeout rejects with a StoreError and opens the breaker, and while the breaker
   * is open it rejects at once with the last failure. The `onStoreError` policy never answers it: the policy
   * decides admissions, and a state it made up (or a reset it only pretended) would mislead the caller.
   */
  call<T>(operation: () => Promise<T>): Promise<T>;
  /** `true` while the breaker is open (the store is skipped). */
  readonly failing: boolean;
  /** The last store failure, if any. */
  readonly lastError: StoreError | undefined;
  /** Set by the limiter while someone observes; undefined keeps the hot path free of observation. */
  observer: GuardObserver | undefined;
  /** Stops the background probe. */
  close(): void;
}

/** The background probe's first delay and its cap (it doubles in between). */
export const PROBE_MIN_MS = 100;
export const PROBE_MAX_MS = 1000;

/** Decisions made without the store ('allow' and 'deny'): they carry no real quota numbers. */
const degraded = new WeakSet<Decision>();

/** Whether a decision was made by the outage policy without quota numbers (headers then leave quota out). */
export function isDegraded(decision: Decision): boolean {
  return degraded.has(decision);
}

const WARNINGS: Record<StoreErrorPolicy, string> = {
  allow: 'WRN_BL_STORE_FAIL_OPEN: the store failed; requests are let through until it answers again',
  deny: 'WRN_BL_STORE_FAIL_CLOSED: the store failed; requests are answered 503 until it answers again',
  local: 'WRN_BL_STORE_FAIL_LOCAL: the store failed; an in-process limiter (limit / instances, fair share) decides until it answers again',
};

/** Rejects with a StoreError when `promise` does not settle within `timeoutMs`. */
export function withTimeout<T>(promise: Promise<T>, timeoutMs: number, scheduler: Scheduler = realScheduler): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const cancel = scheduler.setTimeout(
      () => reject(new StoreError('ERR_BL_STORE_TIMEOUT', `The store did not answer within ${timeoutMs} ms`)),
      timeoutMs,
      { unref: true },
    );
    promise.then(
      (value) => {
        cancel();
        resolve(value);
      },
      (error: unknown) => {
        cancel();
        reject(error);
      },
    );
  });
}

export function toStoreError(error: unknown): StoreError {
  if (error instanceof StoreError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new StoreError('ERR_BL_STORE_FAILED', `The store failed: ${message}`, { cause: error });
}

export function createOutageGuard(store: LimiterStore, options: OutageGuardOptions): OutageGuard {
  const { policy, timeoutMs, spec, logger, probe } = options;
  const scheduler = options.scheduler ?? realScheduler;
  const decide = policyDecider(policy, spec, options.instances, scheduler);
  let connecting = options.connecting;
  connecting?.then(
    () => {
      connecting = undefined;
    },
    () => {
      connecting = undefined;
    },
  );
  let failing = false;
  let failedAt = 0;
  let lastError: StoreError | undefined;
  /** Cancels the pending probe; undefined while none is pending. */
  let probeTimer: (() => void) | undefined;
  let probeDelayMs = PROBE_MIN_MS;
  let probing = false;

  const recover = (): void => {
    if (!failing) return;
    failing = false;
    probeTimer?.();
    probeTimer = undefined;
    logger.warn(`WRN_BL_STORE_RECOVERED: the store answers again (limiter "${spec.name}")`);
    options.onRecovered?.(scheduler.now() - failedAt);
  };

  const runProbe = (): void => {
    probeTimer = undefined;
    if (!failing) return;
    probing = true;
    const answer = probe();
    // A late answer counts too: a command queued offline runs as soon as the client reconnects.
    answer.then(recover, () => undefined);
    withTimeout(answer, timeoutMs, scheduler)
      .catch((error: unknown) => {
        lastError = toStoreError(error);
        probeDelayMs = Math.min(PROBE_MAX_MS, probeDelayMs * 2);
        schedule(probeDelayMs);
      })
      .finally(() => {
        probing = false;
      });
  };

  const schedule = (ms: number): void => {
    if (!failing || probeTimer) return;
    probeTimer = scheduler.setTimeout(runProbe, ms, { unref: true });
  };

  const open = (error: unknown): void => {
    lastError = toStoreError(error);
    if (failing) return;
    failing = true;
    failedAt = scheduler.now();
    logger.warn(`${WARNINGS[policy]} (limiter "${spec.name}": ${lastError.message})`);
    options.onDegraded?.(lastError);
    probeDelayMs = PROBE_MIN_MS;
    schedule(probeDelayMs);
  };

  const answer = (input: AdmitInput): Promise<Decision> => {
    const observer = guard.observer;
    if (observer === undefined) return decide(input);
    return decide(input).then((d) => (observer.decision(d, policy), d));
  };

  const call = (input: AdmitInput): Promise<Decision> => {
    const gate = connecting;
    // A client still making its first connection is not an outage: wait for it within the same timeoutMs.
    return withTimeout(gate === undefined ? store.admit(input) : gate.then(() => store.admit(input)), timeoutMs, scheduler);
  };
  /** `call` for any other store operation (peek, reset). */
  const within = <T>(operation: () => Promise<T>): Promise<T> => {
    const gate = connecting;
    return withTimeout(gate === undefined ? operation() : gate.then(operation), timeoutMs, scheduler);
  };

  const guard: OutageGuard = {
    observer: undefined,
    get failing() {
      return failing;
    },
    get lastError() {
      return lastError;
    },
    admit(input) {
      if (failing) {
        // After close(), probing resumes only while checks still come.
        if (probeTimer === undefined && !probing) schedule(probeDelayMs);
        return answer(input);
      }
      const observer = guard.observer;
      if (observer === undefined) {
        return call(input).catch((error: unknown) => (open(error), answer(input)));
      }
      const startedAt = performance.now();
      return call(input).then(
        (d) => (observer.storeCall(performance.now() - startedAt, false), observer.decision(d, undefined), d),
        (error: unknown) => (observer.storeCall(performance.now() - startedAt, true), open(error), answer(input)),
      );
    },
    admitUnreported(input) {
      const byPolicy = (): Promise<Answer> => decide(input).then((decision) => ({ decision, fallback: policy }));
      if (failing) {
        if (probeTimer === undefined && !probing) schedule(probeDelayMs);
        return byPolicy();
      }
      const startedAt = performance.now();
      return call(input).then(
        (decision) => (guard.observer?.storeCall(performance.now() - startedAt, false), { decision, fallback: undefined }),
        (error: unknown) => (guard.observer?.storeCall(performance.now() - startedAt, true), open(error), byPolicy()),
      );
    },
    report(answer) {
      guard.observer?.decision(answer.decision, answer.fallback);
    },
    call(operation) {
      if (failing) {
        if (probeTimer === undefined && !probing) schedule(probeDelayMs);
        return Promise.reject(lastError ?? new StoreError('ERR_BL_STORE_FAILED', 'The store failed'));
      }
      return within(operation).catch((error: unknown) => {
        open(error);
        throw toStoreError(error);
      });
    },
    close() {
      probeTimer?.();
      probeTimer = undefined;
    },
  };
  return guard;
}

/**
 * The `'local'` fallback's settings: `limit / instances` (at least 1), with burst and reserve scaled the same
 * way, so this process alone never admits more than its share in any window.
 */
/** The fallback never defers: the input's admission part (its plan too). */
/** The check as the 'local' fallback decides it: no job written, no slot taken (both belong to the store). */
function withoutDeferOrSlot(input: AdmitInput): AdmitInput {
  const { group, weight, cost, plan } = input;
  return plan === undefined ? { group, weight, cost } : { group, weight, cost, plan };
}

export function localSpec(spec: LimiterSpec, instances: number): LimiterSpec {
  if (instances === 1) return spec;
  const limit = Math.max(1, Math.floor(spec.limit / instances));
  const scale = limit / spec.limit;
  let reserve = spec.reserve === 0 ? 0 : Math.max(1, Math.round(spec.reserve * scale));
  const burst = Math.min(limit, Math.max(reserve + 1, Math.round(spec.burst * scale)));
  if (reserve >= burst) reserve = burst - 1;
  return { ...spec, limit, burst, reserve };
}

type PolicyDecider = (input: AdmitInput) => Promise<Decision>;

function policyDecider(policy: StoreErrorPolicy, spec: LimiterSpec, instances: number, scheduler: Scheduler): PolicyDecider {
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
