/**
 * A check's rules under plans, for both backends: the rules a check's plan names, and the plans whose rules
 * differ from the limiter's (each with its rules' config text, what follows ';' in the config block).
 */
import { rulesConfigText } from './rules';
import type { RuleSpec } from '../types';
import type { AdmitInput, LimiterSpec } from '../types';

/** The rules a check's decision names: its plan's, or the limiter's. */
export function rulesOfCheck(spec: LimiterSpec, input: Pick<AdmitInput, 'plan'>): readonly RuleSpec[] | undefined {
  return input.plan === undefined ? spec.rules : (spec.plans?.get(input.plan)?.rules ?? spec.rules);
}

/** The plans whose rules differ from the limiter's, each with its rules' config text (what follows ';'). */
export function distinctPlanRules(spec: LimiterSpec): ReadonlyMap<string, { readonly rules: readonly RuleSpec[]; readonly text: string }> {
  const own = rulesConfigText(spec.rules);
  const out = new Map<string, { readonly rules: readonly RuleSpec[]; readonly text: string }>();
  for (const plan of spec.plans?.values() ?? []) {
    const text = rulesConfigText(plan.rules);
    if (text !== own && text !== '') out.set(plan.name, { rules: plan.rules, text: text.slice(1) });
  }
  return out;
}
