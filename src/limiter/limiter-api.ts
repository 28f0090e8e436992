/**
 * The limiter's public interface and per-call options (`createLimiter` in ./limiter.ts builds one).
 */
import type { ReportOptions, ReportOutcome } from './adaptive-reports';
import type { StoreError } from '../errors';
import type { Health } from './health';
import type { LimiterOptions as AdmissionOptions, ResolvedLimiterOptions, StoreErrorPolicy } from './options';
import type { DeferLimiterOptions, DeferRequest, ResolvedDeferOptions } from '../queue/defer-input';
import type { EnqueuedJob, EnqueueOptions } from '../queue/offload';
import type { GroupJobCounts, JobCounts, JobInfo, QueueStore } from '../types';
import type { Decision, GroupStatus, LimiterSpec, SettleResult } from '../types';
import type { ListOverridesOptions, Override, OverridePage, OverrideSettings, SetOverrideOptions } from '../types';

/** The limiter's events (a typed listener map). */
export interface LimiterEvents {
  /** The store failed: the breaker is open and `onStoreError` answers until a background probe succeeds. */
  degraded: [error: StoreError];
  /** A probe succeeded: the store decides again. `downMs`: how long it was skipped. */
  recovered: [info: { downMs: number }];
}

/**
 * Told about every decision `check()` answers and every store call, for metrics (`bulk-limiter/prometheus`).
 * Called synchronously on the request path: keep it to a few additions.
 */
export interface LimiterObserver {
  /**
   * A decision: from the store (or the deny cache) when `fallback` is undefined, otherwise from that
   * `onStoreError` policy (store failing or breaker open).
   */
  decision?(decision: Decision, fallback: StoreErrorPolicy | undefined): void;
  /** One store admission call: its duration in ms and whether it failed or timed out. */
  storeCall?(ms: number, failed: boolean): void;
}

/** Options of `createLimiter`: admission (src/limiter/options.ts) and deferred work. */
export type LimiterOptions = AdmissionOptions & DeferLimiterOptions;

/** Per-call options of `check`. */
export interface CheckOptions {
  /** Units this request uses, integer 1 … `maxCost`. @defaultValue `1` */
  readonly cost?: number;
  /** The group's weight (its tier), integer 1 … `maxWeight`. @defaultValue `1` */
  readonly weight?: number;
  /**
   * When the request is denied, write it as a job instead (same store call): the Decision then carries
   * `job`. A full backlog (`maxBacklog`) or a wait beyond `maxDeferMs` denies with that reason and no job.
   * Idempotency keys are scoped to the group.
   */
  readonly defer?: DeferRequest;
  /** For a deferred job: most jobs of this group running at once (overrides the limiter's `groupConcurrency`). */
  readonly groupConcurrency?: number;
  /**
   * One of the limiter's `plans`: the check gets that plan's weight (unless `weight` is given: it wins) and its
   * rules. A name that is not a plan rejects with ConfigError ERR_BL_UNKNOWN_PLAN (the server's mistake, not
   * the client's). @defaultValue the limiter's `defaultPlan`; without one, the limiter's own rules and weight 1
   */
  readonly plan?: string;
  /**
   * One of the limiter's `classes`: the check is decided in that class (its guaranteed share of the limit, then
   * the groups' shares inside it). A name that is not a class rejects with ConfigError ERR_BL_UNKNOWN_CLASS (the
   * server's mistake, not the client's). @defaultValue the plan's `class`, else `'default'`
   */
  readonly class?: string;
  /** Most requests of this group in flight at once (overrides the limiter's `concurrency`); 0 = no cap. */
  readonly concurrency?: number;
  /**
   * `cost` is an estimate: when allowed, the decision carries a `reservation` and `settle(actual)`, which gives
   * the unused units back (or charges the overage as the group's debt) once the work's real cost is known
   * (docs/settle.md). Not with `defer`. @defaultValue `false`
   */
  readonly settle?: boolean;
}

/** Per-call options of `peek`. */
export interface PeekOptions {
  /** The weight a check would bring (it sets the group's share), integer 1 … `maxWeight`. @defaultValue `1` */
  readonly weight?: number;
  /** The plan a check would name (its weight and rules), as `check()`'s `plan`. @defaultValue the limiter's `defaultPlan` */
  readonly plan?: string;
  /** The class a check would name, as `check()`'s `class`. @defaultValue the plan's `class`, else `'default'` */
  readonly class?: string;
}

export interface Limiter {
  readonly name: string;
  /** @internal The resolved spec the stores and middleware read. */
  readonly spec: LimiterSpec;
  /** @internal The resolved options (limits, outage policy, logger) the middleware reads. */
  readonly options: ResolvedLimiterOptions;
  /**
   * Admits or denies one request of `group`. Rejects with InputError for an unacceptable group id, cost or
   * weight, ConfigError ERR_BL_UNKNOWN_OPTION for an unknown option; never for a store failure (the
   * `onStoreError` policy answers instead).
   */
  check(group: string, opts?: CheckOptions): Promise<Decision>;
  /**
   * Reads `group`'s state as a check of cost 1 would see it now, without spending and without writing anything
   * (an unknown group stays unknown; see GroupStatus for how it differs from a Decision). Rejects with
   * InputError for a group id `check` refuses, ConfigError ERR_BL_UNKNOWN_OPTION for an unknown option, and
   * StoreError when the store fails or the breaker is open (a reading, not an admission: `onStoreError`
   * does not answer it).
   */
  peek(group: string, opts?: PeekOptions): Promise<GroupStatus>;
  /**
   * Forgets `group`'s admission state (share, rules, probation sighting): its next check starts as a new
   * group's would. Its deferred jobs stay queued, other groups are untouched. Resolves true when there was
   * state to forget; idempotent. Rejects like `peek`.
   */
  reset(group: string): Promise<boolean>;
  /**
   * Frees the concurrency slot a decision holds (`decision.concurrency.lease`), at once rather than when its
   * lease ends. Idempotent; a no-op (false) for a decision without a slot. Never rejects: when the store
   * fails, false, and the slot frees when its lease ends.
   */
  release(decision: Decision): Promise<boolean>;
  /**
   * Settles a reservation (`decision.reservation` of a check with `settle: true`, from any process) with the
   * units the work really took: the unused ones go back to every policy that spent them, an overage is charged
   * as the group's debt; at most once ('settled-before' after that, never a second refund). 'unknown' once it
   * lapsed (after the longest window of the limiter and its rules: it counted at its estimate). Rejects with
   * InputError ERR_BL_BAD_ACTUAL for an actual cost that is not an integer ≥ 0, and StoreError when the store
   * fails (a retry is safe: a settle that went through answers 'settled-before').
   */
  settle(reservation: string, actual: number): Promise<SettleResult>;
  /**
   * Tells the adaptive limit (option `adaptive`, docs/adaptive.md) what the upstream answered: `'throttled'` for a
   * refusal (429, 503; `retryAfterMs` its Retry-After), `'ok'` for a call it served. Resolves to the limit in force
   * after it, shared by every process on the store. Without `adaptive`: the configured limit, nothing sent. Rejects
   * with InputError for another outcome; never for a store failure (the last limit known).
   */
  report(outcome: ReportOutcome, opts?: ReportOptions): Promise<number>;
  /** The limit in force now, read from the store (the configured `limit` without `adaptive`); never rejects. */
  limitInForce(): Promise<number>;
  /**
   * Sets `group`'s override (docs/runtime-policies.md), replacing the one it had: every process applies it at its
   * next check of the group, read in the same store call as the decision. Its values replace what the check would
   * have used, whatever the check passes; `blocked: true` denies every check at once. Resolves to the override as
   * stored. Rejects with ConfigError for bad settings or options (ERR_BL_OVERRIDE, ERR_BL_OVERRIDE_OPTIONS,
   * ERR_BL_UNKNOWN_PLAN, ERR_BL_UNKNOWN_OPTION), ERR_BL_TOO_MANY_OVERRIDES when the limiter holds
   * `tuning.maxOverrides` already, InputError for a group id `check` refuses, and StoreError when the store fails.
   */
  setOverride(group: string, settings: OverrideSettings, options?: SetOverrideOptions): Promise<Override>;
  /** The group's override in force; null when none (or it expired). Rejects like `setOverride`. */
  getOverride(group: string): Promise<Override | null>;
  /** Removes the group's override: its next check is decided as without one. True when it had one. Rejects like `setOverride`. */
  deleteOverride(group: string): Promise<boolean>;
  /** The overrides in force, one page at a time (by the byte order of their groups). Rejects like `setOverride`. */
  listOverrides(options?: ListOverridesOptions): Promise<OverridePage>;
  /** Removes this limiter's state from the store. */
  destroy(): Promise<void>;
  /** @internal The resolved deferral options. */
  readonly deferOptions: ResolvedDeferOptions;
  /** The deferred-work queue of this limiter, for `new Dispatcher({ limiter })` and `new Worker({ limiter })`. */
  readonly queue: QueueStore;
  /** A job's state, attempts, times and result or error; `null` when unknown (or already trimmed). */
  getJob(id: string): Promise<JobInfo | null>;
  /**
   * Puts work on the queue directly (offload): the same fair order and budget as a deferred request's job
   * (it spends the budget when it starts). Rejects with `EnqueueError` (`retryAfterMs`) when the group's
   * backlog is full or `delayMs` is beyond `maxDeferMs`, and with InputError for bad options.
   */
  enqueue(group: string, options: EnqueueOptions): Promise<EnqueuedJob>;
  /** Removes a job that has not started yet (`getJob` then answers null); false when it is running or finished. */
  cancel(id: string): Promise<boolean>;
  /** How many jobs are in each state. */
  counts(): Promise<JobCounts>;
  /** One group's jobs: waiting and running. */
  counts(filter: { readonly group: string }): Promise<GroupJobCounts>;
  /** Dead letters, newest first. @param count at most 1000 */
  listDead(offset?: number, count?: number): Promise<JobInfo[]>;
  /** Sends a dead job back to the queue (attempts, snoozes and stalls reset); false when it is not dead. */
  retryDead(id: string): Promise<boolean>;
  /** Deletes a dead job; false when it is not dead. */
  removeDead(id: string): Promise<boolean>;
  /**
   * Whether the store answers (within `timeoutMs`), how fast, and on Redis the server's role, version and
   * `maxmemory-policy`. Never rejects.
   */
  health(): Promise<Health>;
  /** Observes every decision and store call until the returned function is called. */
  observe(observer: LimiterObserver): () => void;
  on<E extends keyof LimiterEvents>(event: E, listener: (...args: LimiterEvents[E]) => void): Limiter;
  off<E extends keyof LimiterEvents>(event: E, listener: (...args: LimiterEvents[E]) => void): Limiter;
  /**
   * Stops the breaker's probe and releases what the store opened for this limiter (the workers' blocking
   * connection). The client stays open.
   */
  close(): Promise<void>;
}
