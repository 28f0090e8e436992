/**
 * The `rules` option: validated once at construction into resolved RuleSpecs (src/core/rules.ts runs them).
 */
import { RULE_LIMIT_MAX, ruleTag } from '../core/rules';
import type { RuleAlgorithm, RuleSpec } from '../types';
import { ConfigError, describeValue, type ErrorCode } from '../errors';
import { refuseUnknownOptions } from '../util/option-names';
import { integer, oneOf, plainObject, refuse } from '../util/validate';

/** A per-group cap: at most `limit` units per `windowMs` for each group, on top of its fair share. */
export interface Rule {
  /** Names the rule in `decision.policy`, the 429's `violated-policies` and the RateLimit fields. Letters, digits, `._-`, ≤ 32. */
  readonly name: string;
  /** Integer from 1 to 2^48 (a reply carries a sliding window's count times 16 as an exact integer). */
  readonly limit: number;
  /** Integer ≥ 1. */
  readonly windowMs: number;
  /**
   * `'token-bucket'`: strict in any window, smooth (a burst of max(1, ceil(limit/20)), then the rest spread);
   * `'sliding-window'`: the full limit back-to-back, strict in any window; `'fixed-window'`: windows aligned
   * to multiples of windowMs (up to 2 × limit across a window edge). @defaultValue `'token-bucket'`
   */
  readonly algorithm?: RuleAlgorithm;
}

const RULE_NAME = /^[A-Za-z0-9._-]{1,32}$/;
const ALGORITHMS: readonly RuleAlgorithm[] = ['token-bucket', 'sliding-window', 'fixed-window'];
/** Most rules on one limiter: each costs every decision a little (docs/guide.md "Rules"). */
export const MAX_RULES = 8;

/**
 * The rules of `value`, validated. `path` names the option in messages and `code` is the error's code: a
 * plan's rules (src/limiter/plan-options.ts) are `plans.<name>.rules`, with ERR_BL_PLANS.
 */
export function resolveRules(value: unknown, path = 'rules', code: ErrorCode = 'ERR_BL_RULES'): readonly RuleSpec[] {
  const fail = (message: string): never => {
    throw new ConfigError(code, message);
  };
  if (value === undefined) return Object.freeze([]);
  if (!Array.isArray(value)) refuse(path, 'an array of { name, limit, windowMs, algorithm? }', value, code);
  const list = value as unknown[];
  if (list.length > MAX_RULES) fail(`Expected \`${path}\` to hold at most ${MAX_RULES} rules, got ${list.length}`);
  const names = new Set<string>();
  const out = list.map((item, i): RuleSpec => {
    const at = `${path}[${i}]`;
    const r = plainObject<Rule>(at, item, { code, expected: '{ name, limit, windowMs, algorithm? }' });
    refuseUnknownOptions(r, ['name', 'limit', 'windowMs', 'algorithm'], 'createLimiter()', `${at}.`);
    if (typeof r.name !== 'string' || !RULE_NAME.test(r.name)) refuse(`${at}.name`, '1–32 letters, digits or ._-', r.name, code);
    if (r.name === 'global') fail(`Expected \`${at}.name\` not to be "global": that names the global limit's fair share`);
    if (r.name === 'concurrency') fail(`Expected \`${at}.name\` not to be "concurrency": that names the request-concurrency cap`);
    if (names.has(r.name)) fail(`Expected \`${at}.name\` to be unique, got ${describeValue(r.name)} twice`);
    names.add(r.name);
    integer(`${at}.limit`, r.limit, { code, max: RULE_LIMIT_MAX });
    integer(`${at}.windowMs`, r.windowMs, { code });
    const algorithm = oneOf<RuleAlgorithm, RuleAlgorithm>(`${at}.algorithm`, r.algorithm, ALGORITHMS, { code, fallback: 'token-bucket' });
    const burst = Math.max(1, Math.ceil(r.limit / 20));
    return Object.freeze({ name: r.name, limit: r.limit, windowMs: r.windowMs, algorithm, burst, tag: ruleTag(r.name, algorithm, r.windowMs) });
  });
  return Object.freeze(out);
}

/** The most units a rule can admit in one request: its bucket for a token bucket, its limit otherwise. */
export function ruleCapacity(rule: RuleSpec): number {
  return rule.algorithm === 'token-bucket' ? rule.burst : rule.limit;
}
