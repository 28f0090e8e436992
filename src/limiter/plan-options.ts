/**
 * The `plans` and `defaultPlan` options: validated once at construction into resolved PlanSpecs. A plan's
 * rules merge with the limiter's by name (mergeRules), so the limiter's rules are the defaults every plan
 * inherits; a check names its plan (`check(group, { plan })`), and the store decides it under that plan's rules.
 */
import type { RuleSpec } from '../types';
import { ConfigError, describeValue } from '../errors';
import { refuseUnknownOptions } from '../util/option-names';
import { MAX_RULES, resolveRules, type Rule } from './rule-options';
import type { PlanSpec } from '../types';
import { integer, plainObject, refuse } from '../util/validate';

/** A tier of groups: e.g. `{ free: { weight: 1, rules: [...] }, pro: { weight: 5 } }`. */
export interface Plan {
  /** The group's weight in the fair share for a check of this plan (a check's own `weight` wins). Integer 1 … `maxWeight`. @defaultValue `1` */
  readonly weight?: number;
  /**
   * Merged with the limiter's `rules` by name: a plan rule named like a limiter rule replaces it, any other
   * plan rule is added. The limiter's rules are the defaults every plan inherits. @defaultValue `[]`
   */
  readonly rules?: readonly Rule[];
  /** Requests of a group in flight at once, integer ≥ 1. Its groups' request-concurrency cap (as the limiter's `concurrency`). */
  readonly concurrency?: number;
  /** The class of a check of this plan (one of the limiter's `classes`), unless the check names its own. */
  readonly class?: string;
}

/** Printable ASCII, no space at either end, at most 64: a plan name shows in messages and logs as it is. */
const PLAN_NAME = /^[!-~](?:[ -~]{0,62}[!-~])?$/;
/** Most plans on one limiter: each is a config block (and, on Redis, its own batch of checks). */
export const MAX_PLANS = 32;
/** The most in-flight requests a plan may allow a group: far beyond any server's, small enough for counters. */
const MAX_CONCURRENCY = 1_000_000;

/** Every mistake in `plans` has its code. */
const code = 'ERR_BL_PLANS';
const fail = (message: string): never => {
  throw new ConfigError(code, message);
};

/**
 * The limiter's rules with a plan's merged in by name: a plan rule replaces the limiter rule of its name (in
 * that rule's place), the others follow in the plan's order.
 */
export function mergeRules(limiterRules: readonly RuleSpec[], planRules: readonly RuleSpec[]): readonly RuleSpec[] {
  if (planRules.length === 0) return limiterRules;
  const byName = new Map(planRules.map((r) => [r.name, r]));
  const merged = limiterRules.map((r) => byName.get(r.name) ?? r);
  const inherited = new Set(limiterRules.map((r) => r.name));
  for (const r of planRules) if (!inherited.has(r.name)) merged.push(r);
  return Object.freeze(merged);
}

/** `plans` resolved: name → PlanSpec (a Map: plan names are user data and never reach a prototype). */
export function resolvePlans(
  value: unknown,
  limiterRules: readonly RuleSpec[],
  maxWeight: number,
  classes?: ReadonlyMap<string, number>,
): ReadonlyMap<string, PlanSpec> | undefined {
  if (value === undefined) return undefined;
  const given = plainObject('plans', value, { code, expected: 'an object of { [name]: { weight?, rules?, concurrency?, class? } }' });
  const entries = Object.entries(given);
  if (entries.length === 0) fail('Expected `plans` to name at least one plan, got {}');
  if (entries.length > MAX_PLANS) fail(`Expected \`plans\` to hold at most ${MAX_PLANS} plans, got ${entries.length}`);
  const plans = new Map<string, PlanSpec>();
  for (const [name, plan] of entries) {
    if (!PLAN_NAME.test(name))
      fail(`Expected each plan name to be 1–64 printable ASCII characters (no space at either end), got ${describeValue(name)}`);
    const at = `plans.${name}`;
    const p = plainObject<Plan>(at, plan, { code, expected: '{ weight?, rules?, concurrency?, class? }' });
    refuseUnknownOptions(p, ['weight', 'rules', 'concurrency', 'class'], 'createLimiter()', `${at}.`);
    const cls = p.class;
    if (cls !== undefined && (typeof cls !== 'string' || classes?.has(cls) !== true)) {
      const known = classes === undefined ? 'the limiter has no `classes`' : `one of ${[...classes.keys()].map((n) => JSON.stringify(n)).join(', ')}`;
      refuse(`${at}.class`, `the name of a class of the limiter (${known})`, cls, 'ERR_BL_CLASSES');
    }
    const weight = integer(`${at}.weight`, p.weight, {
      code,
      max: maxWeight,
      fallback: undefined,
      expected: `an integer from 1 to ${maxWeight} (\`maxWeight\`)`,
    });
    const concurrency = integer(`${at}.concurrency`, p.concurrency, { code, max: MAX_CONCURRENCY, fallback: undefined });
    const rules = mergeRules(limiterRules, resolveRules(p.rules, `${at}.rules`, code));
    if (rules.length > MAX_RULES) {
      fail(`Expected \`${at}.rules\` merged with the limiter's \`rules\` to be at most ${MAX_RULES} rules, got ${rules.length}`);
    }
    plans.set(name, Object.freeze(cls === undefined ? { name, weight, rules, concurrency } : { name, weight, rules, concurrency, class: cls }));
  }
  return plans;
}

/** `defaultPlan`: the plan of a check that names none; it must be one of `plans`. */
export function resolveDefaultPlan(value: unknown, plans: ReadonlyMap<string, PlanSpec> | undefined): PlanSpec | undefined {
  if (value === undefined) return undefined;
  const plan = typeof value === 'string' ? plans?.get(value) : undefined;
  if (plan === undefined) {
    const known = plans === undefined ? 'no `plans` are given' : `one of ${[...plans.keys()].map((n) => JSON.stringify(n)).join(', ')}`;
    return refuse('defaultPlan', `the name of a plan (${known})`, value);
  }
  return plan;
}

/** The plan a check names: one of the limiter's, else the server's mistake (ConfigError, never a client's 400). */
export function checkPlan(plans: ReadonlyMap<string, PlanSpec> | undefined, name: unknown): PlanSpec {
  const plan = typeof name === 'string' ? plans?.get(name) : undefined;
  if (plan === undefined) {
    const known = plans === undefined ? 'the limiter has no `plans`' : `one of ${[...plans.keys()].map((n) => JSON.stringify(n)).join(', ')}`;
    return refuse('plan', `the name of a plan of the limiter (${known})`, name, 'ERR_BL_UNKNOWN_PLAN');
  }
  return plan;
}
