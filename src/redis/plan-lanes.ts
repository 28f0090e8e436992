/**
 * Plans in the RedisStore: each distinct rule set (the limiter's, then each plan's whose merged rules differ)
 * is a config block of its own, a "lane", and a turn's checks go to Redis in one script call per lane (the
 * scripts are unchanged: one call decides every check under one config). A limiter without plans has one
 * lane and batches exactly as before.
 */
import { rulesConfigText } from '../core/rules';
import type { RuleSpec } from '../types';
import { distinctPlanRules } from '../core/plan-rules';
import { DEFAULT_CLASS } from '../core/fair-share-class';
import type { AdmitInput, LimiterSpec } from '../types';
import { ScriptBatcher, type RunMany, type RunOne } from './script-batcher';

export interface RuleLanes {
  /** The rules of each lane; lane 0 is the limiter's own (a check without a plan). */
  readonly rules: ReadonlyArray<readonly RuleSpec[] | undefined>;
  /** The class of each lane (with `classes`: one lane per rule set and class; undefined: no classes). */
  readonly classes?: ReadonlyArray<string>;
  /** A check's lane; undefined when there is one lane. */
  readonly laneOf: ((input: Pick<AdmitInput, 'plan' | 'class'>) => number) | undefined;
}

/**
 * With `classes`, a class is part of the config block too (fair-share-class.lua): one lane per rule set and
 * class, lane = rule lane × classes + the class's index (a check without a class: 'default').
 */
export function ruleLanes(spec: LimiterSpec): RuleLanes {
  const byRules = planLanes(spec);
  if (spec.classes === undefined) return byRules;
  const names = [...spec.classes.keys()];
  const index = new Map(names.map((name, i) => [name, i] as const));
  const fallback = index.get(DEFAULT_CLASS) ?? 0;
  const n = names.length;
  const rules = byRules.rules.flatMap((r) => names.map(() => r));
  const classes = byRules.rules.flatMap(() => names);
  const laneOfRules = byRules.laneOf;
  return {
    rules,
    classes,
    laneOf: (input) =>
      (laneOfRules === undefined ? 0 : laneOfRules(input)) * n + (input.class === undefined ? fallback : (index.get(input.class) ?? fallback)),
  };
}

function planLanes(spec: LimiterSpec): RuleLanes {
  const rules: Array<readonly RuleSpec[] | undefined> = [spec.rules];
  if (spec.plans === undefined) return { rules, laneOf: undefined };
  // plans with the same rules (e.g. a plan that only sets a weight) share a lane: the same config block
  const laneByText = new Map<string, number>([[rulesConfigText(spec.rules), 0]]);
  const laneByPlan = new Map<string, number>();
  for (const plan of spec.plans.values()) {
    const text = rulesConfigText(plan.rules);
    let lane = laneByText.get(text);
    if (lane === undefined) {
      lane = rules.length;
      rules.push(plan.rules);
      laneByText.set(text, lane);
    }
    laneByPlan.set(plan.name, lane);
  }
  if (rules.length === 1) return { rules, laneOf: undefined };
  return { rules, laneOf: (input) => (input.plan === undefined ? 0 : (laneByPlan.get(input.plan) ?? 0)) };
}

/** A script batcher over every lane: `one` and `many` made per lane's config (`configs`, one per lane). */
export function laneBatcher<Req extends AdmitInput, Reply, Config>(
  lanes: RuleLanes,
  configs: readonly Config[],
  one: (config: Config) => RunOne<Req, Reply>,
  many: (config: Config) => RunMany<Req, Reply>,
  maxBatch: number,
): ScriptBatcher<Req, Reply> {
  const laneOf = lanes.laneOf;
  if (laneOf === undefined) return new ScriptBatcher(one(configs[0]!), many(configs[0]!), maxBatch);
  const ones = configs.map(one);
  const manys = configs.map(many);
  return new ScriptBatcher<Req, Reply>(
    (now, request) => ones[laneOf(request)]!(now, request),
    (now, requests) => manys[laneOf(requests[0]!)]!(now, requests),
    maxBatch,
    laneOf,
  );
}

/** A claim script's `plans` argument (claim_plans in lua/includes/claim.lua): '' when no plan has rules of its own. */
export function claimPlansArg(spec: LimiterSpec): string {
  const plans = distinctPlanRules(spec);
  if (plans.size === 0) return '';
  return JSON.stringify(Object.fromEntries([...plans].map(([name, p]) => [name, p.text])));
}
