/** What a limiter answers: a check's decision, a settle's result, a peek's group status. */

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
  | 'store-error'
  /** An override blocks the group (`limiter.setOverride(group, { blocked: true })`): nothing is spent or deferred. */
  | 'blocked';

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
   * `'concurrency'` when the group's concurrency cap said no (whatever the rate said); `'blocked'` when an
   * override blocks the group.
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
