/** Per-group overrides (`limiter.setOverride`, docs/runtime-policies.md): what an operator sets while the service runs. */
import type { RuleAlgorithm } from './limiter-spec';

/** A rule of an override: the shape of the limiter's `rules` option. */
export interface OverrideRule {
  readonly name: string;
  readonly limit: number;
  readonly windowMs: number;
  readonly algorithm?: RuleAlgorithm;
}

/**
 * What an override sets for one group; each replaces what the group's checks would have used, whatever the check
 * passes (the override is the operator's word). At least one.
 */
export interface OverrideSettings {
  /** One of the limiter's plans: its weight, rules and concurrency (its values as of the override's setting). */
  readonly plan?: string;
  /** The group's weight in the fair share, integer 1 … `maxWeight`. */
  readonly weight?: number;
  /** The group's rules, replacing the limiter's or its plan's (the shape of the `rules` option; `[]`: none). */
  readonly rules?: readonly OverrideRule[];
  /** Requests in flight at once, integer ≥ 1: replaces the cap of checks that take a concurrency slot. */
  readonly concurrency?: number;
  /** Jobs of the group running at once, integer ≥ 1, for the jobs it defers from now on. */
  readonly groupConcurrency?: number;
  /** Denies every check of the group at once (`decision.policy` `'blocked'`): nothing spent, nothing deferred. */
  readonly blocked?: true;
}

/** Options of `setOverride`. */
export interface SetOverrideOptions {
  /** The override ends by itself this long after it is set (integer ms, at most 30 days); absent: until deleted. */
  readonly ttlMs?: number;
  /** Why (shown by `getOverride`, `listOverrides` and the dashboard), at most 200 characters. */
  readonly reason?: string;
}

/** An override in force. */
export interface Override {
  readonly group: string;
  readonly settings: OverrideSettings;
  readonly reason?: string;
  /** When it was set, ms since the epoch on the store's clock. */
  readonly setAt: number;
  /** When it ends by itself, ms since the epoch on the store's clock; absent: never. */
  readonly expiresAt?: number;
}

/** Options of `listOverrides`. */
export interface ListOverridesOptions {
  /** The previous page's `cursor`; absent: the first page. */
  readonly cursor?: string;
  /** Most overrides on the page, 1 … 1000. @defaultValue `100` */
  readonly count?: number;
}

/** One page of overrides, by the byte order of their groups. */
export interface OverridePage {
  readonly overrides: readonly Override[];
  /** Pass it to get the next page; absent on the last page. */
  readonly cursor?: string;
}
