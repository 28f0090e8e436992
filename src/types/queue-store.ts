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
  /** The job's priority class when not 'default' (a deferring check's, or `enqueue`'s): it starts in that class. */
  readonly class?: string;
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
  /** A job enqueued with `settle`: the reservation its claim recorded (settled with the actual cost). */
  readonly reservation?: string;
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

/** Where a failed run left its job: due again, snoozed, dead, or 'stale' (the token no longer holds it: nothing changed). */
export type FailState = 'retrying' | 'snoozed' | 'dead' | 'stale';

/**
 * What `fail` did. An object, not the bare state, so durable writes can confirm this very reply on the replicas
 * (`DurableWrites.confirm` takes what a write answered).
 */
export interface FailResult {
  readonly state: FailState;
}

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
  /** The cost is an estimate: the claim that starts the job records a reservation its handler settles. */
  readonly settle?: boolean;
  /** The job's priority class (a claim decides it in that class); absent or '' = 'default'. */
  readonly class?: string;
}
