/**
 * The contract, at the bottom of every import chain: the public types a limiter answers in, and what a store
 * implements (`Store`, `LimiterStore`, `QueueStore`), published as `bulk-limiter/store`. Every store (Redis,
 * memory) passes one conformance suite (test/conformance).
 */

/** A time source in milliseconds since the epoch (fractions allowed). Stores take one for tests. */
export type Clock = () => number;

/** How a check is answered while the store fails: fail open, 503, or an in-process fallback limiter. */
export type StoreErrorPolicy = 'allow' | 'deny' | 'local';

/**
 * The resolved, validated settings a store needs for one limiter. Built by `createLimiter` from the
 * user's options (src/limiter/options.ts); stores never see raw user input.
 */
export interface LimiterSpec {
  /** Limiter name; all of its keys live under one hash tag built from the store prefix and this name. */
  readonly name: string;
  /** At most `limit` units are admitted in any window of `windowMs` (strict mode). */
  readonly limit: number;
  readonly windowMs: number;
  /** Global bucket size in units (1 ≤ burst ≤ limit). */
  readonly burst: number;
  /** The last `reserve` tokens are kept for guaranteed (green) traffic (0 ≤ reserve < burst). */
  readonly reserve: number;
  /** A group unseen for this long stops counting towards Σweights. */
  readonly idleMs: number;
  /** How often the water level (the borrowing cap) is re-estimated. */
  readonly epochMs: number;
  /** `true`: refill at limit/windowMs (at most limit + burst − 1 per window); `false`: strict. */
  readonly sustained: boolean;
  /** Most groups tracked at once; new groups beyond it share the overflow group `'*overflow*'`. */
  readonly maxGroups: number;
  /** A new id is decided as the newcomers' group until it comes back this long after it was first seen; 0 = none. */
  readonly probationMs: number;
  /** Per-group rules, checked with the share in the same call, all-or-nothing (resolved by src/limiter/options.ts). */
  readonly rules?: readonly RuleSpec[];
  /** Plans by name (src/limiter/plan-options.ts resolves them); absent: the limiter has none. */
  readonly plans?: ReadonlyMap<string, PlanSpec>;
  /**
   * Priority classes by name → share of the limit (src/limiter/class-options.ts resolves them; 'default' always
   * present, the remainder unless named); absent: the limiter has none.
   */
  readonly classes?: ReadonlyMap<string, number>;
  /** How long a request-concurrency slot lasts unless released first. */
  readonly concurrencyLeaseMs: number;
  /** The adaptive limit (src/limiter/adaptive-options.ts resolves it); absent: the limit is `limit` always. */
  readonly adaptive?: AdaptiveSpec;
}

/** A resolved `adaptive` option: the limit in force moves between min and max (lua/includes/adaptive.lua). */
export interface AdaptiveSpec {
  readonly min: number;
  readonly max: number;
  /** The first rise after a cut (units); each later rise doubles it, up to half the limit. */
  readonly increase: number;
  /** The factor a cut multiplies the limit by (0 < decrease < 1). */
  readonly decrease: number;
  /** At most one cut and one rise per interval: a burst of refusals from one episode counts once. */
  readonly intervalMs: number;
}

/** One upstream outcome for the adaptive limit (lua/report.lua). */
export interface ReportInput {
  /** 'read': the limit in force, nothing changes. */
  readonly outcome: 'ok' | 'throttled' | 'read';
  /** The upstream's Retry-After (ms; 0 = none): no rise before it has passed. */
  readonly retryAfterMs: number;
}

/** The adaptive limit after a report: the limit in force and how the report moved it. */
export interface AdaptiveStatus {
  readonly limit: number;
  readonly change: -1 | 0 | 1;
}

/** A resolved plan: what a check naming it gets (src/limiter/plan-options.ts). */
export interface PlanSpec {
  readonly name: string;
  /** The group's weight for a check of this plan, unless the check passes its own `weight`. */
  readonly weight: number | undefined;
  /** The limiter's rules merged with the plan's by name (a plan rule replaces the limiter rule of its name). */
  readonly rules: readonly RuleSpec[];
  /** Requests of a group in flight at once for a check of this plan, unless the check passes its own `concurrency`. */
  readonly concurrency: number | undefined;
  /** The class of a check of this plan, unless the check names its own. */
  readonly class?: string;
}

/** A check with a concurrency cap: the group's slots after the decision (`decision.concurrency`). */
export interface ConcurrencyStatus {
  /** The cap: most requests of the group in flight at once. */
  readonly limit: number;
  /** The group's requests in flight after this decision (this one included when it took a slot). */
  readonly inFlight: number;
  /** The slot this request holds (opaque); present when allowed. `limiter.release(decision)` frees it. */
  readonly lease?: string;
}

/** One rule's state for the group after a decision (`decision.rules`). */
export interface RuleStatus {
  readonly name: string;
  readonly limit: number;
  readonly windowMs: number;
  /** Units the rule still allows the group now. */
  readonly remaining: number;
  /** Until the rule's quota is whole again (0: untouched). */
  readonly resetMs: number;
}

/** The colour of an admission: green within the guaranteed share, yellow borrowed, red denied. */
export type Colour = 'green' | 'yellow' | 'red';

/** Why a request was not let through. */
export type DenyReason =
  /** The global limit or the group's share is used up. */
  | 'limit'
  /** The group already has its `concurrency` requests in flight. */
  | 'concurrency'
  /** Deferral was asked for but the group's backlog is full (`maxBacklog`). */
  | 'backlog-full'
  /** Deferral was asked for but the job's estimated start is more than `maxDeferMs` away. */
  | 'defer-horizon'
  /** The store failed or timed out and the `onStoreError` policy denied. */
  | 'store-error';

/** A job written by a deferred admission. */
export interface DeferredJob {
  readonly id: string;
  /**
   * Estimated latest start (ms since the epoch, store clock): one guaranteed slot of the group per job it
   * has waiting. The job is due at once and usually runs sooner, when the group can borrow idle capacity.
   */
  readonly runAt: number;
  /** `true` when an idempotency key matched an existing job, so nothing new was written. */
  readonly duplicate: boolean;
}

/** What `limiter.check()` decides. All durations are whole milliseconds. */
export interface Decision {
  readonly allowed: boolean;
  readonly group: string;
  /** The group's current quota per window: its share including what it may borrow. */
  readonly limit: number;
  /** The group's guaranteed share per window. */
  readonly guaranteed: number;
  readonly remaining: number;
  /** 0 when allowed; otherwise when the group's guaranteed path has room again (staggered per caller). */
  readonly retryAfterMs: number;
  /** Until the group's quota is full again. */
  readonly resetMs: number;
  /** Groups seen within `idleMs`. */
  readonly activeGroups: number;
  readonly colour: Colour;
  /** Present when not allowed. */
  readonly reason?: DenyReason;
  /**
   * When denied by the limit: the policy that said no, `'global'` (the fair share of the global limit) or a
   * rule's name; when several did, the one that waits longest (retryAfterMs is the latest of their waits).
   * `'concurrency'` when the group's concurrency cap said no (whatever the rate said).
   */
  readonly policy?: string;
  /** With `classes`: the class the check was decided in (its own, its plan's, else `'default'`). */
  readonly class?: string;
  /** With a concurrency cap: the group's slots, and the slot this request holds when allowed. */
  readonly concurrency?: ConcurrencyStatus;
  /** With rules: each rule's state for the group, in rule order. */
  readonly rules?: readonly RuleStatus[];
  /** Present when the request was deferred: the job that now holds its work. */
  readonly job?: DeferredJob;
  /** A deferrable check denied 'store-error': its job's key (the caller's or generated); a retry with it finds the job. */
  readonly idempotencyKey?: string;
  /** When denied: the earliest time borrowing might succeed (≤ retryAfterMs; a hint, not a promise). */
  readonly hintMs?: number;
  /** When denied: until the global bucket holds a unit again for any group (a lower bound; 0 = now). */
  readonly globalWaitMs?: number;
  /** Store time of the decision (ms since the epoch). Benchmarks measure windows on this clock. */
  readonly at: number;
  /**
   * A check with `settle: true`, allowed: its reservation (an opaque string, safe to pass to another process) for
   * `limiter.settle(reservation, actual)`; the limiter's decisions also carry `settle(actual)`.
   */
  readonly reservation?: string;
  /** With `reservation`: `limiter.settle(this.reservation, actual)`. */
  readonly settle?: (actual: number) => Promise<SettleResult>;
}

/** What settling a reservation did (`decision.settle(actual)`, `limiter.settle(reservation, actual)`). */
export interface SettleResult {
  /**
   * `'settled'`: done now; `'settled-before'`: this reservation was settled already (nothing changed: never a
   * second refund); `'unknown'`: no such reservation, or it lapsed (older than the longest window of the limiter
   * and its rules): it counted at its estimate.
   */
  readonly status: 'settled' | 'settled-before' | 'unknown';
  /** Units given back to the global budget (actual < cost). */
  readonly refunded: number;
  /** Units charged as debt (actual > cost): the group's next admissions wait until it is paid. */
  readonly debt: number;
}

/** A reservation settled (validated by the limiter). */
export interface SettleInput {
  readonly reservation: string;
  /** Integer ≥ 0: the units the work really took. */
  readonly actual: number;
}

/**
 * A group's state now, as `limiter.peek(group)` reads it: what a check of cost 1 would see, without spending
 * and without writing anything (no group registered, no probation sighting, no refill written back). How it
 * differs from a check's Decision:
 * - `remaining` (and each rule's) is what the group may use now, before spending: an allowed check of cost 1
 *   at the same instant answers one less, a denied one the same;
 * - `retryAfterMs` is the plain wait: a denied check also takes the next staggered slot of its group (so
 *   concurrent callers spread), which a peek does not, so a check's wait may be longer;
 * - no `reason`, `job`, `hintMs` or `globalWaitMs`: nothing was decided.
 * Further per-group state (requests in flight, with request concurrency) joins as further fields.
 */
export interface GroupStatus {
  /** The group as a check would name it: the caller's id, or `'*overflow*'` beyond `maxGroups`. */
  readonly group: string;
  /** Whether a check of cost 1 now would be allowed. */
  readonly allowed: boolean;
  /** The colour that check would take (red: denied). */
  readonly colour: Colour;
  /** The group's current quota per window: its share including what it may borrow. */
  readonly limit: number;
  /** The group's guaranteed share per window. */
  readonly guaranteed: number;
  /** Units of its share the group may use now (not counting rules: see `rules`). */
  readonly remaining: number;
  /** 0 when allowed; otherwise until a check of cost 1 would be (unstaggered). */
  readonly retryAfterMs: number;
  /** Until the group's quota is full again. */
  readonly resetMs: number;
  /** Groups seen within `idleMs`. */
  readonly activeGroups: number;
  /** When not allowed: the policy that would say no (`'global'` or a rule's name), as `Decision.policy`. */
  readonly policy?: string;
  /** With rules: each rule's state for the group, in rule order (remaining before spending). */
  readonly rules?: readonly RuleStatus[];
  /** Store time of the reading (ms since the epoch). */
  readonly at: number;
}

/** What a store reads for `limiter.peek()` (validated by the limiter). */
export interface PeekInput {
  readonly group: string;
  /** Integer ≥ 1: the weight a check would bring (it sets the group's share). */
  readonly weight: number;
  /** The plan a check would name (its rules); absent: the limiter's own rules. */
  readonly plan?: string;
  /** The class a check would name; absent: 'default'. */
  readonly class?: string;
}

/** One admission request as the store sees it (validated and bounded by the limiter). */
export interface AdmitInput {
  readonly group: string;
  /** Integer ≥ 1. */
  readonly weight: number;
  /** Integer ≥ 1, ≤ the limiter's maximum admissible cost. */
  readonly cost: number;
  /** When present, a denied request is written as a job in the same store call. */
  readonly defer?: DeferInput;
  /** A plan of the limiter (`LimiterSpec.plans`): the check is decided under that plan's rules. */
  readonly plan?: string;
  /** A class of the limiter (`LimiterSpec.classes`): the check is decided in that class; absent: 'default'. */
  readonly class?: string;
  /**
   * Most requests of the group in flight at once (a slot is taken with the admission, all-or-nothing, and
   * lasts until `release` or the limiter's lease ends); absent or 0 = no cap.
   */
  readonly concurrency?: number;
  /** When allowed, record a reservation to settle later (`Decision.reservation`); not with `defer`. */
  readonly reserve?: boolean;
}

export interface DeferInput {
  /** Handler name the worker runs. */
  readonly type: string;
  /** The job's payload, already JSON-encoded and size-checked. */
  readonly payload: string;
  /** Same key → same job: a client retrying a request does not create a second job. */
  readonly idempotencyKey?: string;
  /** Most jobs one group may have waiting (not yet completed or dead). */
  readonly maxBacklog: number;
  /** Longest estimated wait (runAt − now) a job may have; beyond it the request is rejected instead. */
  readonly maxDeferMs: number;
  /** Most jobs of the group (with a cap) running at once, across all workers; absent or 0 = no cap. */
  readonly groupConcurrency?: number;
}

/**
 * A store bound to one limiter: the operations that limiter runs, each one atomic, and the limiter's queue
 * (deferred jobs, dispatcher, workers) over the same state, so a deferral and its admission share one call.
 */
export interface LimiterStore {
  /** The limiter's queue (`limiter.queue`): the same object for the life of the binding, `destroy()` included. */
  readonly queue: QueueStore;
  /** One atomic admission (and, when asked and denied, deferral). One round trip on Redis. */
  admit(input: AdmitInput): Promise<Decision>;
  /** A group's state as a check of cost 1 would see it now; writes nothing (lua/peek.lua). */
  peek(input: PeekInput): Promise<GroupStatus>;
  /**
   * Forgets one group's admission state (lua/reset.lua): its share and rule state, its probation sighting;
   * not its deferred jobs, nor any other group. True when there was state to forget. Idempotent.
   */
  reset(group: string): Promise<boolean>;
  /** Frees a concurrency slot (`decision.concurrency.lease`) at once: true when it was held. Idempotent. */
  release?(lease: string): Promise<boolean>;
  /**
   * Settles a reservation (`AdmitInput.reserve`) with its actual cost, at most once, atomically across the
   * policies that spent it (lua/settle.lua). Absent: the store cannot (checks with `reserve` are refused).
   */
  settle?(input: SettleInput): Promise<SettleResult>;
  /** One upstream outcome for the adaptive limit (lua/report.lua); only with `spec.adaptive`. */
  report?(input: ReportInput): Promise<AdaptiveStatus>;
  /** Removes every key of this limiter, its queue's included (tests, teardown). */
  destroy(): Promise<void>;
  /** Releases what the store opened for this limiter (the workers' blocking connection); the client stays open. */
  close?(): Promise<void>;
  /**
   * Writes that can be confirmed on replicas (Redis WAIT): deferring checks and enqueues on a connection of
   * their own (on Redis Cluster, to the master of the limiter's slot), and `confirm` waiting for that
   * connection's writes. Absent where the store cannot (MemoryStore).
   */
  durableWrites?(): DurableWrites;
  /**
   * A cheap read the breaker sends while the store fails, to learn it answers again; absent: `queue.counts()`.
   * `closed()` is true once the limiter has closed (a store must not reopen connections for it then).
   */
  probe?(closed: () => boolean): Promise<unknown>;
  /** The breaker's probe while the store refuses writes. */
  writeProbe?(): Promise<unknown>;
  /** Resolves when the store's first connection is ready; undefined when there is nothing to wait for. */
  firstConnection?(): Promise<void> | undefined;
  /** What the server behind the store says about itself (`limiter.health()` reports it). */
  serverInfo?(): Promise<ServerInfo>;
}

/** What a server-backed store reports about its server (Redis: INFO). */
export interface ServerInfo {
  /** `master` or `slave` (a replica: the limiter's writes fail there). */
  readonly role: string;
  readonly version: string;
  /** Redis `maxmemory-policy`: anything but `noeviction` may drop the limiter's keys once `maxmemory` is set. */
  readonly maxmemoryPolicy: string;
  /** Bytes; 0 = no limit. */
  readonly maxmemory: number;
}

/** See `LimiterStore.durableWrites`. Claims and acknowledgements go over the same connections (`claimMany`, `completeAndClaim` as the queue's). */
export interface DurableWrites extends Pick<QueueStore, 'claimMany' | 'completeAndClaim'> {
  admit(input: AdmitInput): Promise<Decision>;
  enqueue(input: EnqueueInput): Promise<EnqueueResult>;
  /**
   * How many replicas acknowledged `written` (what this object's `admit`, `enqueue`, claims or acknowledgements answered)
   * and every write before it on its connection, waiting at most `timeoutMs`. 0 when that connection was lost
   * since (WAIT on a new connection says nothing about the old one's writes).
   */
  confirm(written: object, replicas: number, timeoutMs: number): Promise<number>;
  complete(id: string, token: string, resultJson: string | undefined, keepMs: number): Promise<{ readonly completed: boolean }>;
  close(): Promise<void>;
}

/** A place to keep limiter state: `RedisStore` or `MemoryStore`. */
export interface Store {
  /** Binds the store to one limiter. Called once per limiter, at construction. */
  bind(spec: LimiterSpec): LimiterStore;
}

/** Where one-time warnings go (coded WRN_BL_*). Defaults to `console`. */
export interface Logger {
  warn(message: string): void;
  error?(message: string): void;
}

export type RuleAlgorithm = 'token-bucket' | 'sliding-window' | 'fixed-window';

/** A resolved rule (src/limiter/options.ts validates the user's and fills in burst and tag). */
export interface RuleSpec {
  readonly name: string;
  readonly limit: number;
  readonly windowMs: number;
  readonly algorithm: RuleAlgorithm;
  /** Token-bucket size (the others ignore it): max(1, ceil(limit / 20)). */
  readonly burst: number;
  /** Names the rule's state: a rule whose name, algorithm or window changes starts afresh. */
  readonly tag: number;
}

// The queue's contract: jobs, their states and the operations every backend's queue implements.
/**
 * The deferred-work contract: job records and the queue operations every store implements, each atomic.
 * Written by `limiter.check(..., { defer })` when a request is denied; moved by the Dispatcher; run by Workers.
 */

export type JobState = 'delayed' | 'pending' | 'ready' | 'active' | 'completed' | 'dead';

/** What `getJob(id)` tells about a job. Times are ms since the epoch on the store clock. */
export interface JobInfo {
  readonly id: string;
  readonly type: string;
  readonly group: string;
  readonly state: JobState;
  /** Handler runs that ended in an error. */
  readonly attempts: number;
  /** Leases that expired (a worker crashed or hung). */
  readonly stalls: number;
  /** `RetryLaterError` snoozes (not counted as attempts). */
  readonly snoozes: number;
  readonly createdAt: number;
  /** When the job is (or was) due. */
  readonly runAt: number;
  readonly payload: unknown;
  /** The handler's return value, when completed. */
  readonly result?: unknown;
  /** The last error message (failed attempt, or why the job is dead). */
  readonly error?: string;
  readonly finishedAt?: number;
  /** The job's plan (a deferring check's, or `enqueue`'s `plan`): it starts under that plan's rules. */
  readonly plan?: string;
}

/** A job a worker holds under a lease. `token` fences acknowledgements: a stale token is rejected. */
export interface ClaimedJob {
  readonly id: string;
  readonly type: string;
  readonly group: string;
  /** The payload as JSON text. */
  readonly payload: string;
  readonly attempts: number;
  readonly token: string;
  readonly leaseUntil: number;
}

/** One group's jobs: waiting (delayed, pending or ready) and running. */
export interface GroupJobCounts {
  readonly waiting: number;
  readonly active: number;
  /** How long the group's oldest due job not yet started has waited, in ms (see {@link JobCounts.oldestWaitingMs}). */
  readonly oldestWaitingMs: number;
}

export interface JobCounts {
  readonly delayed: number;
  readonly pending: number;
  readonly ready: number;
  readonly active: number;
  readonly completed: number;
  readonly dead: number;
  /**
   * How long the oldest job that is due but not started has waited, in ms: now − the time it became due
   * (its runAt for a delayed job or a retry, its deferral for a denied request, the reclaim for a stalled
   * one). A job not yet due is not waiting. 0 when no job is due. O(log n) on both stores.
   */
  readonly oldestWaitingMs: number;
}

export interface DispatchOptions {
  /** The ready list is never filled beyond this. */
  readonly readyMax: number;
  /** Most jobs moved to ready per call. */
  readonly moveMax: number;
  /** Most due jobs tagged delayed → pending per call. */
  readonly promoteMax: number;
  /** Most pending entries looked at per call. */
  readonly scanMax: number;
}

export interface DispatchResult {
  readonly moved: number;
  readonly promoted: number;
  /** When to call again: 0 = now, > 0 = in that many ms, -1 = nothing waits (sleep until signalled/polled). */
  readonly wakeMs: number;
  readonly readyFull: boolean;
}

/** How a handler run ended badly. */
export type FailOutcome =
  /** An error: attempts + 1; due again after `delayMs`, or dead once attempts reach `maxAttempts`. */
  | { readonly kind: 'error'; readonly error: string; readonly delayMs: number; readonly maxAttempts: number }
  /** `RetryLaterError`: snoozes + 1 (attempts unchanged); dead once snoozes exceed `maxSnoozes`. */
  | { readonly kind: 'snooze'; readonly delayMs: number; readonly maxSnoozes: number };

export type FailResult = 'retrying' | 'snoozed' | 'dead' | 'stale';

/**
 * What a claim started, and when to look again: -1 ready is empty (wait for a wake-up); 0 now; > 0 the
 * budget lets nothing more start before that many ms (concurrent callers get slots one unit apart).
 */
export interface ClaimResult {
  readonly claimed: ClaimedJob[];
  readonly wakeMs: number;
}

/** What `completeAndClaim` did: the acknowledgement (false = stale, nothing changed) and the claim. */
export interface CompleteAndClaimResult extends ClaimResult {
  readonly completed: boolean;
}

/** The queue operations of one limiter. */
export interface QueueStore {
  /** Writes a job straight into the fair queue (the write a deferred admission makes). */
  enqueue(input: EnqueueInput): Promise<EnqueueResult>;
  /** Removes a job that has not started; false when it is unknown, running or finished. */
  cancel(id: string): Promise<boolean>;
  /** One group's waiting and running jobs. */
  groupCounts(group: string): Promise<GroupJobCounts>;
  dispatch(options: DispatchOptions): Promise<DispatchResult>;
  /** Take or renew the dispatcher lease for `owner`; false when another dispatcher holds it. */
  acquireDispatcherLease(owner: string, ttlMs: number): Promise<boolean>;
  /** `claimMany(leaseMs, 1)`'s job, or null when none may start now. */
  claim(leaseMs: number): Promise<ClaimedJob | null>;
  /**
   * Starts up to `max` jobs (1..CLAIM_MAX) from the head of ready, each under its own lease and token. This
   * is where a job spends the limiter's budget: each goes through the same admission as a live request of
   * its group (weight, cost); a refused group's jobs stay in ready and `wakeMs` says when to try again.
   */
  claimMany(leaseMs: number, max: number): Promise<ClaimResult>;
  /**
   * Resolves when a job may be ready to claim, after `timeoutMs`, or when `signal` aborts (blocking read /
   * signal, not polling). An aborted wait leaves no timer behind, so a closed worker lets the process exit.
   */
  waitForReady(timeoutMs: number, signal?: AbortSignal): Promise<void>;
  /**
   * Subscribes to failures of what the store runs in the background (the workers' blocking connection on
   * Redis), which no call returns; returns the unsubscribe.
   */
  onError(listener: (error: unknown) => void): () => void;
  /**
   * Resolves when the store's first connection is ready; undefined when there is nothing to wait for. A Worker
   * or Dispatcher started before it waits for it instead of reporting "not connected" errors at every boot.
   */
  firstConnection?(): Promise<void> | undefined;
  complete(id: string, token: string, resultJson: string | undefined, keepMs: number): Promise<boolean>;
  /**
   * `complete(...)` then `claimMany(leaseMs, max)` as one atomic operation (one round trip on Redis), so a
   * worker hands its slot straight to the next job. The claim happens even when the completion is stale.
   */
  completeAndClaim(
    id: string,
    token: string,
    resultJson: string | undefined,
    keepMs: number,
    leaseMs: number,
    max: number,
  ): Promise<CompleteAndClaimResult>;
  fail(id: string, token: string, outcome: FailOutcome): Promise<FailResult>;
  extendLease(id: string, token: string, leaseMs: number): Promise<boolean>;
  /** Returns jobs whose lease expired to pending (a stall), or to dead after `maxStalls`. */
  reclaimExpired(maxStalls: number, max: number): Promise<{ requeued: number; dead: number }>;
  getJob(id: string): Promise<JobInfo | null>;
  counts(): Promise<JobCounts>;
  /**
   * Dead letters, newest death first. `offset` is floored and clamped to ≥ 0, `count` floored and clamped
   * to 1..1000; a non-finite offset or count is an InputError.
   */
  listDead(offset: number, count: number): Promise<JobInfo[]>;
  retryDead(id: string): Promise<boolean>;
  removeDead(id: string): Promise<boolean>;
}

/** What `enqueue` (and a deferred admission) answers. */
export type EnqueueResult =
  { readonly status: 'written' | 'duplicate'; readonly id: string; readonly runAt: number } | { readonly status: 'backlog-full' | 'defer-horizon' };

export interface EnqueueInput {
  readonly group: string;
  /** Integer ≥ 1. */
  readonly weight: number;
  /** Integer ≥ 1. */
  readonly cost: number;
  readonly type: string;
  /** JSON text. */
  readonly payload: string;
  readonly idempotencyKey?: string;
  readonly maxBacklog: number;
  /** Due after this many ms (0 = now). */
  readonly delayMs: number;
  readonly maxDeferMs: number;
  /** Most jobs of the group (with a cap) running at once; absent or 0 = no cap. */
  readonly groupConcurrency?: number;
  /** The job's own maxAttempts (over the worker's); absent or 0 = the worker's. */
  readonly maxAttempts?: number;
  /** The job's plan (a claim decides it under that plan's rules); absent or '' = none. */
  readonly plan?: string;
}
