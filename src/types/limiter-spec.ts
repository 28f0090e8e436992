/** What a store needs to know of one limiter: its resolved, validated settings (src/limiter/options.ts builds them). */

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
