/**
 * Limiter options: documented defaults, validation once at construction, a frozen resolved config.
 * Bad values throw ConfigError with a code and the offending value; unknown names (typos) are caught.
 */
import { DEFAULT_MAX_GROUPS } from '../core/fair-share-state';
import { DEFAULT_LEASE_MS } from '../core/concurrency';
import { resolveRules, ruleCapacity, type Rule } from './rule-options';
import { resolveDefaultPlan, resolvePlans, type Plan } from './plan-options';
import { resolveClasses, type ClassOptions } from './class-options';
import { resolveAdaptive, type AdaptiveOptions } from './adaptive-options';
import type { DenyCacheOptions, ResolvedDenyCacheOptions } from './deny-cache';
import { MemoryStore } from '../memory/memory-store';
import { refuseUnknownOptions, type OptionNames } from '../util/option-names';
import type { LimiterSpec, Logger, PlanSpec, RuleSpec, Store, StoreErrorPolicy } from '../types';
export type { StoreErrorPolicy } from '../types';
import { NAME_PATTERN, boolean, codeOf, integer, loggerOption, oneOf, optionsObject, refuse } from '../util/validate';

export interface LimiterOptions {
  /** Where limiter state lives. @defaultValue `new MemoryStore()` */
  readonly store?: Store;
  /** Limiter name; keys live under the hash tag `{<prefix>:<name>}`. Letters, digits, `._-:/`, ≤ 64. @defaultValue `'default'` */
  readonly name?: string;
  /** At most this many units in any window of `windowMs` (strict mode). Required, integer ≥ 1. */
  readonly limit: number;
  /** @defaultValue `60_000` */
  readonly windowMs?: number;
  /** What to do when the store fails or times out: fail open, deny (503), or use an in-process limiter. @defaultValue `'local'` */
  readonly onStoreError?: StoreErrorPolicy;
  /** A store call slower than this counts as a failure. @defaultValue `500` */
  readonly timeoutMs?: number;
  /** How many processes share the limit; the `'local'` fallback allows `limit / instances` each. @defaultValue `1` */
  readonly instances?: number;
  /** Where one-time warnings go. @defaultValue `console` */
  readonly logger?: Logger;
  /**
   * Per-group caps on top of the fair share, decided in the same call, all-or-nothing: e.g.
   * `[{ name: 'per-second', limit: 10, windowMs: 1000 }, { name: 'per-hour', limit: 5000, windowMs: 3_600_000 }]`.
   * See docs/guide.md "Rules". @defaultValue `[]`
   */
  readonly rules?: readonly Rule[];
  /**
   * Tiers of groups by name: `{ free: { weight: 1, rules: [...] }, pro: { weight: 5, rules: [...] } }`. A check
   * names its plan (`check(group, { plan })`, the middleware's `plan` function) and gets the plan's `weight`
   * (unless it passes its own `weight`: the more specific statement wins) and its rules. A plan's `rules` merge
   * with the limiter's `rules` **by name**: a plan rule named like a limiter rule replaces it, the others are
   * added, so the limiter's rules are the defaults every plan inherits. A plan's `concurrency` is its groups'
   * request-concurrency cap (see `concurrency`). Names: 1–64 printable ASCII characters; at most 32 plans.
   * See docs/guide.md "Plans". @defaultValue none
   */
  readonly plans?: Readonly<Record<string, Plan>>;
  /**
   * Priority classes (docs/guide.md "Priority classes"): name → `{ share }`, the fraction of `limit` the class is
   * guaranteed (in (0, 1], the shares summing to at most 1). A class lends what it leaves unused; a flood in one
   * class never takes another's share. A check names its class (`check(group, { class })`, a plan's `class`,
   * the middleware's `class`); one that names none is in the class `'default'`, whose share is the remainder
   * 1 − Σshares unless named here. At most 16 classes.
   */
  readonly classes?: Readonly<Record<string, ClassOptions>>;
  /**
   * The plan of a check that names none. Without it such a check gets the limiter's own rules and weight 1
   * (or its `weight`). @defaultValue none
   */
  readonly defaultPlan?: string;
  /**
   * Most requests of one group in flight at once: the slot is taken in the same store call as the rate
   * decision (all-or-nothing) and freed by `limiter.release(decision)` (the middleware does it when the
   * response ends). A plan's `concurrency` overrides it, and a check's own overrides both. @defaultValue no cap
   */
  readonly concurrency?: number;
  /**
   * An adaptive limit: the limit in force starts at `limit` and moves between `min` and `max`, fed by
   * `limiter.report('ok' | 'throttled')` (and by workers and `reportUpstream`): shared by every process
   * on the store, fair shares scale with it (docs/adaptive.md). @defaultValue off
   */
  readonly adaptive?: AdaptiveOptions;
  /**
   * Knobs for the algorithm and its bounds, each with a default derived from `limit` and `windowMs` that suits
   * most services: how bursty admissions may be, how fast idle groups stop counting, probation, the largest
   * cost, weight and group id. See docs/reference.md "Tuning".
   */
  readonly tuning?: TuningOptions;
}

/** The limiter's tuning knobs (`tuning` option): every one has a default that suits most services. */
export interface TuningOptions {
  /** Global bucket size: how bursty admissions may be. The strict sustained rate is (limit − burst + 1)/window. @defaultValue `max(reserve + 1, ceil(limit / 20), min(8, ceil(limit / 10)))`, at most `limit` */
  readonly burst?: number;
  /** The last `reserve` tokens are kept for guaranteed (green) traffic. @defaultValue `max(1, ceil(burst / 5))`, below `burst` */
  readonly reserve?: number;
  /** A group unseen this long stops counting towards the fair shares. @defaultValue `max(windowMs, 10_000)` */
  readonly idleMs?: number;
  /** How often the borrowing cap (water level) is re-estimated. @defaultValue `max(100, windowMs / 4)` */
  readonly epochMs?: number;
  /** `true`: the full rate limit/window, at the price of up to limit + burst − 1 in one window. @defaultValue `false` */
  readonly sustained?: boolean;
  /** Most groups tracked at once; new groups beyond it share one overflow group. @defaultValue `10_000` */
  readonly maxGroups?: number;
  /**
   * A group id the limiter has not registered yet shares one group (`'*new*'`, weight 1) with every other new id
   * until it comes back at least this long after it was first seen, so a flood of new ids (rotating client IPs)
   * cannot take the established groups' shares. `0`: a group is registered on its first request. With `rules`
   * (the limiter's or a plan's) the shared group is for the fair share only: each id keeps its own rule state.
   * @defaultValue `min(epochMs, 1000)`
   */
  readonly probationMs?: number;
  /** Longest group id in UTF-8 bytes. @defaultValue `128` */
  readonly maxGroupLength?: number;
  /** Largest cost one request may ask for; at most `burst` (a request must fit the global bucket; a green request of cost > 1 reserves the tokens it waits for). @defaultValue `burst − reserve` */
  readonly maxCost?: number;
  /** Largest weight a group may have. @defaultValue `1000` */
  readonly maxWeight?: number;
  /**
   * Answer a group the store just denied in-process (until the store's hint, when it might borrow again, or
   * with `hold: 'retry'` until its retry time), sending only `sampleRate` of its calls on: a flood then costs
   * few store round trips. Never admits anything, so the global limit holds; see docs/operations.md "Speed on Redis".
   * `true` = the defaults. @defaultValue `false`
   */
  readonly denyCache?: boolean | DenyCacheOptions;
  /**
   * How long a concurrency slot lasts unless released first: a crashed process's slots come back after it, and a
   * request held longer stops counting then. @defaultValue `60_000`
   */
  readonly concurrencyLeaseMs?: number;
  /** Most overrides (`limiter.setOverride`) the limiter holds; one more is refused (ERR_BL_TOO_MANY_OVERRIDES). @defaultValue `10_000` */
  readonly maxOverrides?: number;
}

export interface ResolvedLimiterOptions {
  /** What the store needs: every setting resolved. */
  readonly spec: LimiterSpec;
  readonly store: Store;
  readonly maxGroups: number;
  readonly maxGroupLength: number;
  readonly maxCost: number;
  readonly maxWeight: number;
  readonly onStoreError: StoreErrorPolicy;
  readonly timeoutMs: number;
  readonly instances: number;
  readonly logger: Logger;
  /** Undefined when the deny cache is off. */
  readonly denyCache: ResolvedDenyCacheOptions | undefined;
  /** The plan of a check that names none (`defaultPlan`); undefined: the limiter's own rules and weight. */
  readonly defaultPlan: PlanSpec | undefined;
  /** Most requests of a group in flight; 0 = no cap. */
  readonly concurrency: number;
  /** Most overrides the limiter holds. */
  readonly maxOverrides: number;
}

/** Every option name, so typos are caught and the list stays exhaustive. */
const OPTION_NAMES: OptionNames<LimiterOptions> = {
  store: true,
  name: true,
  limit: true,
  windowMs: true,
  onStoreError: true,
  timeoutMs: true,
  instances: true,
  logger: true,
  rules: true,
  plans: true,
  classes: true,
  defaultPlan: true,
  concurrency: true,
  adaptive: true,
  tuning: true,
};
const TUNING_NAMES: OptionNames<TuningOptions> = {
  burst: true,
  reserve: true,
  idleMs: true,
  epochMs: true,
  sustained: true,
  maxGroups: true,
  probationMs: true,
  maxGroupLength: true,
  maxCost: true,
  maxWeight: true,
  denyCache: true,
  concurrencyLeaseMs: true,
  maxOverrides: true,
};
export const LIMITER_OPTION_NAMES: readonly string[] = Object.freeze(Object.keys(OPTION_NAMES));
/** The names inside object options: one given at the top level is suggested where it lives (`tuning.burst`). */
export const NESTED_OPTION_NAMES: Readonly<Record<string, readonly string[]>> = Object.freeze({ tuning: Object.freeze(Object.keys(TUNING_NAMES)) });

/**
 * The default burst before the reserve is counted: ceil(L/20) (docs/algorithm.md §2.10),
 * but at least min(8, ceil(L/10)) tokens. A 5-token bucket at L = 100 left a 4-token yellow band in which
 * borrowers raced a flood token by token and light tenants lost part of their share; 8 tokens (reserve 2) cost
 * a little strict capacity and share the same admissions fairly (test/conformance/small-limit-suite.ts).
 */
export function defaultBurstBase(limit: number): number {
  return Math.max(Math.ceil(limit / 20), Math.min(8, Math.ceil(limit / 10)));
}

export function resolveLimiterOptions(options: LimiterOptions): ResolvedLimiterOptions {
  const o = optionsObject(options);
  refuseUnknownOptions(o, LIMITER_OPTION_NAMES, 'createLimiter()', '', NESTED_OPTION_NAMES);
  const t = tuningObject(o.tuning);
  const name = o.name ?? 'default';
  if (typeof name !== 'string' || !NAME_PATTERN.test(name)) refuse('name', '1–64 letters, digits or ._-:/', o.name);
  const limit = integer('limit', o.limit);
  const windowMs = integer('windowMs', o.windowMs, { fallback: 60_000 });

  // Defaults (docs/algorithm.md §2.10): b = max(ρ + 1, ceil(L/20)), ρ = max(1, ceil(b/5)), b ≤ L, ρ < b;
  // with b ≥ min(8, ceil(L/10)) for small limits (see defaultBurstBase).
  let burst: number;
  let reserve: number;
  if (t.burst === undefined) {
    const base = defaultBurstBase(limit);
    reserve = t.reserve === undefined ? Math.max(1, Math.ceil(base / 5)) : integer('tuning.reserve', t.reserve, { code: codeOf('reserve'), min: 0 });
    burst = Math.min(limit, Math.max(reserve + 1, base));
    if (t.reserve === undefined && reserve >= burst) reserve = burst - 1;
  } else {
    burst = integer('tuning.burst', t.burst, { code: codeOf('burst') });
    reserve =
      t.reserve === undefined
        ? Math.min(burst - 1, Math.max(1, Math.ceil(burst / 5)))
        : integer('tuning.reserve', t.reserve, { code: codeOf('reserve'), min: 0 });
  }
  if (burst > limit) refuse('tuning.burst', `at most \`limit\` (${limit})`, burst, codeOf('burst'));
  if (reserve >= burst) refuse('tuning.reserve', `below \`burst\` (${burst})`, reserve, codeOf('reserve'));
  const idleMs = integer('tuning.idleMs', t.idleMs, { code: codeOf('idleMs'), fallback: Math.max(windowMs, 10_000) });
  const epochMs = integer('tuning.epochMs', t.epochMs, { code: codeOf('epochMs'), fallback: Math.max(100, Math.floor(windowMs / 4)) });
  const sustained = boolean('tuning.sustained', t.sustained, { code: codeOf('sustained'), fallback: false });
  const maxGroups = integer('tuning.maxGroups', t.maxGroups, { code: codeOf('maxGroups'), fallback: DEFAULT_MAX_GROUPS });
  const maxGroupLength = integer('tuning.maxGroupLength', t.maxGroupLength, { code: codeOf('maxGroupLength'), fallback: 128 });
  const rules = resolveRules(o.rules);
  const maxWeight = integer('tuning.maxWeight', t.maxWeight, { code: codeOf('maxWeight'), fallback: 1000 });
  const classes = resolveClasses(o.classes);
  const plans = resolvePlans(o.plans, rules, maxWeight, classes);
  const defaultPlan = resolveDefaultPlan(o.defaultPlan, plans);
  // A group on probation shares the newcomers' share but keeps its own rule state (fs_sighted), so probation
  // combines with rules (the limiter's or a plan's).
  const probationMs = integer('tuning.probationMs', t.probationMs, { code: codeOf('probationMs'), min: 0, fallback: Math.min(epochMs, 1000) });
  // a request must fit every rule too: the default maxCost shrinks to the smallest rule's capacity
  const capping = smallestRule(rules, plans);
  const ruleMax = capping?.capacity ?? Infinity;
  const maxCost = integer('tuning.maxCost', t.maxCost, { code: codeOf('maxCost'), fallback: Math.min(burst - reserve, ruleMax) });
  if (maxCost > burst) refuse('tuning.maxCost', `at most \`burst\` (${burst}): a larger cost could never be admitted`, maxCost, codeOf('maxCost'));
  if (capping !== undefined && maxCost > ruleMax) {
    refuse(
      'tuning.maxCost',
      `at most ${ruleMax}, the most ${capping.where} admits at once: a larger cost could never be admitted`,
      maxCost,
      codeOf('maxCost'),
    );
  }
  const onStoreError = oneOf<StoreErrorPolicy, StoreErrorPolicy>('onStoreError', o.onStoreError, ['allow', 'deny', 'local'], { fallback: 'local' });
  const timeoutMs = integer('timeoutMs', o.timeoutMs, { fallback: 500 });
  const instances = integer('instances', o.instances, { fallback: 1 });
  const logger = loggerOption(o.logger);
  const store = o.store ?? new MemoryStore();
  if (typeof store !== 'object' || store === null || typeof store.bind !== 'function') {
    refuse('store', 'a RedisStore, MemoryStore or another Store', o.store);
  }
  const denyCache = resolveDenyCache(t.denyCache);
  const concurrency = integer('concurrency', o.concurrency, { fallback: 0 });
  const concurrencyLeaseMs = integer('tuning.concurrencyLeaseMs', t.concurrencyLeaseMs, {
    code: codeOf('concurrencyLeaseMs'),
    fallback: DEFAULT_LEASE_MS,
  });
  const maxOverrides = integer('tuning.maxOverrides', t.maxOverrides, { code: codeOf('maxOverrides'), max: 1_000_000, fallback: 10_000 });
  const adaptive = resolveAdaptive(o.adaptive, limit);
  const spec: LimiterSpec = Object.freeze({
    name,
    limit,
    windowMs,
    burst,
    reserve,
    idleMs,
    epochMs,
    sustained,
    maxGroups,
    probationMs,
    ...(rules.length > 0 ? { rules } : {}),
    ...(plans === undefined ? {} : { plans }),
    ...(classes === undefined ? {} : { classes }),
    concurrencyLeaseMs,
    ...(adaptive ? { adaptive } : {}),
  });
  return Object.freeze({
    spec,
    store,
    maxGroups,
    maxGroupLength,
    maxCost,
    maxWeight,
    onStoreError,
    timeoutMs,
    instances,
    logger,
    denyCache,
    defaultPlan,
    concurrency,
    maxOverrides,
  });
}

function tuningObject(value: unknown): TuningOptions {
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value)) refuse('tuning', 'an object of tuning options', value);
  refuseUnknownOptions(value, NESTED_OPTION_NAMES.tuning ?? [], 'createLimiter()', 'tuning.');
  return value as TuningOptions;
}

function resolveDenyCache(value: unknown): ResolvedDenyCacheOptions | undefined {
  if (value === undefined || value === false) return undefined;
  if (value === true) return Object.freeze({ maxGroups: 10_000, sampleRate: 0.05, hold: 'hint' });
  if (typeof value !== 'object' || value === null)
    refuse('tuning.denyCache', 'a boolean or { maxGroups?, sampleRate?, hold? }', value, 'ERR_BL_DENY_CACHE');
  const o = value as DenyCacheOptions;
  refuseUnknownOptions(o, ['maxGroups', 'sampleRate', 'hold'], 'createLimiter()', 'tuning.denyCache.');
  // its parts share the parent's code
  const code = 'ERR_BL_DENY_CACHE';
  const hold = oneOf<'hint' | 'retry', 'hint'>('tuning.denyCache.hold', o.hold, ['hint', 'retry'], { code, fallback: 'hint' });
  const maxGroups = integer('tuning.denyCache.maxGroups', o.maxGroups, { code, fallback: 10_000 });
  const sampleRate = o.sampleRate ?? 0.05;
  if (typeof sampleRate !== 'number' || !(sampleRate >= 0 && sampleRate <= 1))
    refuse('tuning.denyCache.sampleRate', 'a number from 0 to 1', o.sampleRate, code);
  return Object.freeze({ maxGroups, sampleRate, hold });
}

/** The rule that admits the least at once, of the limiter's and every plan's (a request must fit each), and where it is. */
function smallestRule(
  rules: readonly RuleSpec[],
  plans: ReadonlyMap<string, PlanSpec> | undefined,
): { readonly capacity: number; readonly where: string } | undefined {
  const all = [
    ...rules.map((rule) => ({ rule, where: `rule "${rule.name}"` })),
    ...[...(plans ?? [])].flatMap(([plan, spec]) => (spec.rules ?? []).map((rule) => ({ rule, where: `plan "${plan}"'s rule "${rule.name}"` }))),
  ];
  let best: { readonly capacity: number; readonly where: string } | undefined;
  for (const { rule, where } of all) {
    const capacity = ruleCapacity(rule);
    if (best === undefined || capacity < best.capacity) best = { capacity, where };
  }
  return best;
}
