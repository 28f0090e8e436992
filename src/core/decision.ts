/** From the core's result to the reply both stores give (whole ms), and from that to the public Decision. */
import type { ConcurrencyResult } from './concurrency';
import type { FairShareResult } from './fair-share';
import { ruleStatusOf } from './rules';
import { parseOverrideValue } from './overrides';
import type { RuleSpec } from '../types';
import type { ConcurrencyStatus, Decision, GroupStatus, RuleStatus } from '../types';

const COLOURS = ['green', 'yellow', 'red'] as const;

/**
 * The reply both stores give, in whole ms (durations ceil'd, like admit.lua's reply). The RedisStore's is the
 * admission scripts' decoded reply (Admission in lua-sources.generated.ts, from lua/includes/admission.lua).
 */
export interface AdmitReply {
  readonly allowed: boolean;
  readonly colour: 0 | 1 | 2;
  readonly remaining: number;
  readonly limit: number;
  readonly guaranteed: number;
  readonly retryMs: number;
  readonly hintMs: number;
  readonly resetMs: number;
  readonly active: number;
  /** The decision's time on the store clock, µs (whole: Redis TIME, or a test clock's rounded). */
  readonly atUs: number;
  readonly group: string;
  /** Floor'd (a lower bound), unlike the other durations. */
  readonly emptyMs: number;
  /** With rules: 0 the global share, i the i-th rule (the one that denied). */
  readonly policy: number | undefined;
  /** Per rule, in order, its mark (rules.ts rlMarks: ruleStatusOf reads remaining and reset from it); none without rules. */
  readonly rules: readonly number[];
  /** With a concurrency cap: the lease taken ('' = none) and the group's leases held after the decision. */
  readonly lease: string | undefined;
  readonly held: number | undefined;
  /** '' when no override applied; else the override's rule marks, '\n' and its stored value (lua/includes/overrides.lua ov_text). */
  readonly override: string;
}

export function toAdmitReply(r: FairShareResult | ConcurrencyResult, nowUs: number, override = ''): AdmitReply {
  const capped = 'lease' in r;
  return {
    allowed: r.allowed,
    colour: r.colour,
    remaining: r.remaining,
    limit: r.limit,
    guaranteed: r.guaranteed,
    retryMs: Math.ceil(r.retryUs / 1000),
    hintMs: Math.ceil(r.hintUs / 1000),
    resetMs: Math.ceil(r.resetUs / 1000),
    active: r.active,
    atUs: nowUs,
    group: r.group,
    emptyMs: Math.floor(r.emptyUs / 1000),
    policy: r.rules ? r.policy : undefined,
    rules: r.rules || [],
    lease: capped ? r.lease : undefined,
    held: capped ? r.held : undefined,
    override,
  };
}

/**
 * A reply decided under an override, as a reply under the override's rules (its marks in place of the call's
 * own), with its cap; `blocked` when it blocks the group. Without one, the reply as it is.
 */
function underOverride(
  r: AdmitReply,
  rules: readonly RuleSpec[] | undefined,
  cap: number,
): { r: AdmitReply; rules: readonly RuleSpec[] | undefined; cap: number; blocked: boolean } {
  if (r.override === '') return { r, rules, cap, blocked: false };
  const nl = r.override.indexOf('\n');
  const stored = parseOverrideValue(r.override.slice(nl + 1));
  if (!stored) return { r, rules, cap, blocked: false };
  const { record } = stored;
  if (record.b === 1) return { r, rules, cap, blocked: true };
  const overCap = cap > 0 && record.c !== undefined && record.c > 0 ? record.c : cap;
  if (record.r === undefined) return { r, rules, cap: overCap, blocked: false };
  const marks = nl > 0 ? r.override.slice(0, nl).split(',').map(Number) : [];
  const own = record.rs ?? [];
  return { r: { ...r, policy: own.length > 0 ? (marks[0] ?? 0) : undefined, rules: marks.slice(1) }, rules: own, cap: overCap, blocked: false };
}

/** A blocked group's decision: denied at once, nothing spent, never deferred. */
function blockedDecision(r: AdmitReply): Decision {
  return {
    allowed: false,
    group: r.group,
    limit: 0,
    guaranteed: 0,
    remaining: 0,
    retryAfterMs: r.retryMs,
    resetMs: 0,
    activeGroups: r.active,
    colour: 'red',
    at: atMsOf(r),
    reason: 'blocked',
    policy: 'blocked',
  };
}

/** The group's slots after a decision with a cap; undefined without one. */
function concurrencyStatus(r: AdmitReply, cap: number): ConcurrencyStatus | undefined {
  if (cap <= 0) return undefined;
  const inFlight = r.held ?? 0;
  return r.lease ? { limit: cap, inFlight, lease: r.lease } : { limit: cap, inFlight };
}

function ruleStatuses(r: AdmitReply, rules: readonly RuleSpec[]): RuleStatus[] {
  return rules.map((rule, i) => {
    const { remaining, resetUs } = ruleStatusOf(rule, r.rules[i] ?? 0, r.atUs);
    return { name: rule.name, limit: rule.limit, windowMs: rule.windowMs, remaining, resetMs: Math.ceil(resetUs / 1000) };
  });
}

/** The decision's time in whole ms, as the Decision's `at`. */
const atMsOf = (r: AdmitReply): number => Math.floor(r.atUs / 1000);

/**
 * The public Decision for one admission reply; `rules`: the limiter's (names the policy and each rule's state);
 * `cap`: the check's concurrency cap (0 = none; a denial with the group's slots all held names `'concurrency'`).
 */
export function toDecision(reply: AdmitReply, ownRules?: readonly RuleSpec[], ownCap = 0): Decision {
  // most checks: no override, no cap (nothing to unpack per check)
  if (reply.override === '' && ownCap <= 0) return rateDecision(reply, ownRules);
  const { r, rules, cap, blocked } = underOverride(reply, ownRules, ownCap);
  if (blocked) return blockedDecision(r);
  const d = rateDecision(r, rules);
  const slots = concurrencyStatus(r, cap);
  if (slots === undefined) return d;
  if (d.allowed || slots.inFlight < cap) return { ...d, concurrency: slots };
  return { ...d, reason: 'concurrency', policy: 'concurrency', concurrency: slots };
}

function rateDecision(r: AdmitReply, rules?: readonly RuleSpec[]): Decision {
  const withRules = rules !== undefined && rules.length > 0;
  if (r.allowed) {
    const d: Decision = {
      allowed: true,
      group: r.group,
      limit: r.limit,
      guaranteed: r.guaranteed,
      remaining: r.remaining,
      retryAfterMs: 0,
      resetMs: r.resetMs,
      activeGroups: r.active,
      colour: COLOURS[r.colour],
      at: atMsOf(r),
    };
    return withRules ? { ...d, rules: ruleStatuses(r, rules) } : d;
  }
  const d: Decision = {
    allowed: false,
    group: r.group,
    limit: r.limit,
    guaranteed: r.guaranteed,
    remaining: r.remaining,
    retryAfterMs: r.retryMs,
    resetMs: r.resetMs,
    activeGroups: r.active,
    colour: COLOURS[r.colour],
    at: atMsOf(r),
    reason: 'limit',
    hintMs: Math.min(r.hintMs, r.retryMs),
    globalWaitMs: r.emptyMs,
    policy: 'global',
  };
  if (!withRules) return d;
  return { ...d, policy: policyName(r, rules), rules: ruleStatuses(r, rules) };
}

/** The policy that denied: the global share, or a rule by name. */
const policyName = (r: AdmitReply, rules: readonly RuleSpec[]): string => (r.policy ? (rules[r.policy - 1]?.name ?? 'global') : 'global');

/** The public GroupStatus for one peek reply (peek.lua's fields are admit.lua's; nothing was spent). */
export function toGroupStatus(reply: AdmitReply, ownRules?: readonly RuleSpec[]): GroupStatus {
  const { r, rules, blocked } = underOverride(reply, ownRules, 0);
  if (blocked) {
    const { reason: _reason, ...status } = blockedDecision(r);
    return status;
  }
  const withRules = rules !== undefined && rules.length > 0;
  const status: GroupStatus = {
    group: r.group,
    allowed: r.allowed,
    colour: COLOURS[r.colour],
    limit: r.limit,
    guaranteed: r.guaranteed,
    remaining: r.remaining,
    retryAfterMs: r.allowed ? 0 : r.retryMs,
    resetMs: r.resetMs,
    activeGroups: r.active,
    at: atMsOf(r),
  };
  if (!withRules) return r.allowed ? status : { ...status, policy: 'global' };
  const policy = r.allowed ? {} : { policy: policyName(r, rules) };
  return { ...status, ...policy, rules: ruleStatuses(r, rules) };
}

/** With classes: the decision with the class it was decided in (`decision.class`; the stores add it for the observers). */
export function inClass(cls: string): (d: Decision) => Decision {
  return (d) => ({ ...d, class: cls });
}
