/**
 * The middleware's `plan` step: the plan of a request (the user's `plan` function, else the limiter's
 * `defaultPlan`), and what answering a check under its rules needs: the header writer and, per rule, the
 * 429's `violated-policies` and body. A name that is not a plan of the limiter is the server's mistake: a 500
 * through ./misconfigured.ts (one WRN_BL_OPTION_RESULT warning), never a 4xx blamed on the client.
 */
import type { RuleSpec } from '../types';
import { createHeaderWriter, type HeaderFormat, type HeaderWriter } from './headers';
import type { CheckOptions, Limiter } from '../limiter/limiter';
import type { Misconfigured } from './misconfigured';
import { quotaBodyWriter, type Rejection } from './rejection';

type MaybePromise<T> = T | Promise<T>;

/** What the answers of checks under one rule set share. */
export interface PolicyView {
  readonly writeHeaders: HeaderWriter;
  readonly rulePolicies: ReadonlyMap<string, { readonly policies: readonly string[]; readonly quotaBody: (seconds: number) => string }>;
}

export type Planned = { readonly kind: 'planned'; readonly view: PolicyView; readonly check: CheckOptions } | Rejection;

export interface PlanStep<Ctx> {
  /** The view of a check without a plan (the limiter's `defaultPlan`'s rules, or its own). */
  readonly view: PolicyView;
  /** With a `plan` function: `check` with the request's plan added, and the view of its rules. */
  readonly step: ((group: string, ctx: Ctx, check: CheckOptions) => Promise<Planned>) | undefined;
}

export function createPlanStep<Ctx>(
  limiter: Limiter,
  format: HeaderFormat,
  planOf: ((group: string, ctx: Ctx) => MaybePromise<string | undefined>) | undefined,
  misconfigured: Misconfigured,
): PlanStep<Ctx> {
  const plans = limiter.spec.plans;
  const views = new Map([...(plans?.values() ?? [])].map((p) => [p.name, policyView(format, limiter, p.rules)] as const));
  const defaultPlan = limiter.options.defaultPlan;
  const fallback = (defaultPlan && views.get(defaultPlan.name)) ?? policyView(format, limiter, limiter.spec.rules);
  if (planOf === undefined) return { view: fallback, step: undefined };
  const known = plans === undefined ? 'the limiter has no `plans`' : [...plans.keys()].map((n) => JSON.stringify(n)).join(', ');
  return {
    view: fallback,
    step: async (group, ctx, check) => {
      const plan = await planOf(group, ctx);
      if (plan === undefined) return { kind: 'planned', view: fallback, check };
      const view = typeof plan === 'string' ? views.get(plan) : undefined;
      if (view === undefined) return misconfigured('plan', plan, `undefined or the name of a plan of the limiter (${known})`);
      return { kind: 'planned', view, check: { ...check, plan } };
    },
  };
}

function policyView(format: HeaderFormat, limiter: Limiter, rules: readonly RuleSpec[] | undefined): PolicyView {
  return {
    writeHeaders: createHeaderWriter(format, limiter.name, limiter.spec.windowMs, rules),
    // With rules: the 429 names the rule that said no ('global' is the limiter's own policy, named by the limiter);
    // 'concurrency' when the group's concurrency cap did.
    rulePolicies: new Map(
      [...(rules ?? []).map((r) => r.name), 'concurrency'].map((name) => {
        const named = Object.freeze([name]);
        return [name, { policies: named, quotaBody: quotaBodyWriter(named) }] as const;
      }),
    ),
  };
}
