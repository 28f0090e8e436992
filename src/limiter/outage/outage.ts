/**
 * The `onStoreError` policy and the breaker in front of the store. Every store call races `timeoutMs`; a
 * failure or a timeout is wrapped in a StoreError (with `cause`), opens the breaker and is answered by the
 * policy:
 *
 * - `'allow'` — fail open: the request passes (WRN_BL_STORE_FAIL_OPEN).
 * - `'deny'`  — fail closed: a denied decision with reason `'store-error'`; the middleware answers 503 +
 *   Retry-After (WRN_BL_STORE_FAIL_CLOSED).
 * - `'local'` — the MemoryStore's admission core in this process, sized `limit / instances`: strict in any
 *   window and fair between groups, like the store it stands in for (WRN_BL_STORE_FAIL_LOCAL), and within
 *   one limit with the store (./outage-policy.ts); under the overrides this process knows (./known-overrides.ts),
 *   which the store's decisions keep up to date with blocks.
 *
 * While the breaker is open the store is not called at all: checks are answered by the policy at once (no
 * `timeoutMs` wait, even when the client queues commands offline), and a background probe asks the store
 * every 100 ms … 1 s (doubling). The first probe that answers closes the breaker (WRN_BL_STORE_RECOVERED).
 * A call that failed after it was sent has an unknown outcome (`Answer.unknown`, DESIGN.md §9). The breaker is
 * ./breaker.ts, the policies ./outage-policy.ts.
 */
import { createBreaker } from './breaker';
import type { KnownOverrides } from './known-overrides';
import { StoreError } from '../../errors';
import type { StoreErrorPolicy } from '../../types';
import { POLICY_WARNINGS, policyDecider } from './outage-policy';
import { realScheduler, type Scheduler } from '../../util/scheduler';
import { deadlineQueue, toStoreError, wroteNothing } from '../../util/store-call';
import { admitNowOf } from '../../util/admit-now';
import type { AdmitInput, Decision, LimiterSpec, LimiterStore, Logger } from '../../types';

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
  /** The policy answered a call sent and failed with an unknown outcome: the store may have written its job. */
  readonly unknown?: boolean;
}

export interface OutageGuardOptions {
  readonly policy: StoreErrorPolicy;
  readonly timeoutMs: number;
  readonly instances: number;
  readonly spec: LimiterSpec;
  readonly logger: Logger;
  /** A cheap read that succeeds when the store answers again (the breaker's background probe). */
  readonly probe: () => Promise<unknown>;
  /** A cheap write, probed instead while the store refuses writes (READONLY, NOREPLICAS). */
  readonly writeProbe?: (() => Promise<unknown>) | undefined;
  /** Resolves when a client still making its first connection is ready: checks wait for it (within timeoutMs). */
  readonly connecting?: Promise<void> | undefined;
  /** `'local'`: the overrides this process knows; the fallback decides under them, store decisions teach them blocks. */
  readonly overrides?: KnownOverrides | undefined;
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

export function createOutageGuard(store: LimiterStore, options: OutageGuardOptions): OutageGuard {
  const { policy, timeoutMs, spec, logger, probe } = options;
  const scheduler = options.scheduler ?? realScheduler;
  const known = policy === 'local' ? options.overrides : undefined;
  const decider = policyDecider(policy, spec, options.instances, timeoutMs, scheduler, known);
  const decide = decider.decide;
  let connecting = options.connecting;
  connecting?.then(
    () => {
      connecting = undefined;
    },
    () => {
      connecting = undefined;
    },
  );
  const breaker = createBreaker({
    timeoutMs,
    probe,
    writeProbe: options.writeProbe,
    closeDelayMs: decider.closeDelayMs,
    onOpen: decider.opened,
    scheduler,
    logger,
    limiterName: spec.name,
    warning: POLICY_WARNINGS[policy],
    onDegraded: options.onDegraded,
    onRecovered: options.onRecovered,
  });

  const answer = (input: AdmitInput): Promise<Decision> => {
    const observer = guard.observer;
    if (observer === undefined) return decide(input);
    return decide(input).then((d) => (observer.decision(d, policy), d));
  };

  const withinTime = deadlineQueue(timeoutMs, scheduler);
  // only a limiter with the 'local' fallback looks at each store decision (for the blocks it shows), inside the
  // deadline's own handler: no promise more per check
  const seen = known === undefined ? undefined : (d: Decision): void => known.decided(d);
  // an in-process store (MemoryStore) decides synchronously: no promise to race against the deadline
  const admitNow = admitNowOf(store);
  const call = (input: AdmitInput, recover?: (error: unknown) => Decision | Promise<Decision>): Promise<Decision> => {
    const gate = connecting;
    if (admitNow !== undefined && gate === undefined) {
      let decision: Decision;
      try {
        decision = admitNow(input);
      } catch (error) {
        return recover === undefined ? Promise.reject(error) : new Promise((resolve) => resolve(recover(error)));
      }
      seen?.(decision);
      return Promise.resolve(decision);
    }
    // A client still making its first connection is not an outage: wait for it within the same timeoutMs.
    return withinTime(gate === undefined ? store.admit(input) : gate.then(() => store.admit(input)), recover, seen);
  };
  /** `call` for any other store operation (peek, reset). */
  const within = <T>(operation: () => Promise<T>): Promise<T> => {
    const gate = connecting;
    return withinTime(gate === undefined ? operation() : gate.then(operation));
  };

  const guard: OutageGuard = {
    observer: undefined,
    get failing() {
      return breaker.failing;
    },
    get lastError() {
      return breaker.lastError;
    },
    admit(input) {
      if (breaker.failing) {
        breaker.keepProbing();
        return answer(input);
      }
      const observer = guard.observer;
      if (observer === undefined) {
        return call(input, (error: unknown) => (breaker.open(error), answer(input)));
      }
      const startedAt = performance.now();
      return call(input).then(
        (d) => (observer.storeCall(performance.now() - startedAt, false), observer.decision(d, undefined), d),
        (error: unknown) => (observer.storeCall(performance.now() - startedAt, true), breaker.open(error), answer(input)),
      );
    },
    admitUnreported(input) {
      const byPolicy = (unknown: boolean): Promise<Answer> =>
        decide(input).then((decision) => (unknown ? { decision, fallback: policy, unknown } : { decision, fallback: policy }));
      if (breaker.failing) {
        breaker.keepProbing();
        return byPolicy(false);
      }
      const startedAt = performance.now();
      return call(input).then(
        (decision) => (guard.observer?.storeCall(performance.now() - startedAt, false), { decision, fallback: undefined }),
        (error: unknown) => (guard.observer?.storeCall(performance.now() - startedAt, true), breaker.open(error), byPolicy(!wroteNothing(error))),
      );
    },
    report(answer) {
      guard.observer?.decision(answer.decision, answer.fallback);
    },
    call(operation) {
      if (breaker.failing) {
        breaker.keepProbing();
        return Promise.reject(breaker.lastError ?? new StoreError('ERR_BL_STORE_FAILED', 'The store failed'));
      }
      return within(operation).catch((error: unknown) => {
        breaker.open(error);
        throw toStoreError(error);
      });
    },
    close() {
      breaker.close();
    },
  };
  return guard;
}
