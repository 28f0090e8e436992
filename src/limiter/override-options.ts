/**
 * `limiter.setOverride(group, settings, { ttlMs, reason })` and `listOverrides`: their arguments validated, the
 * settings resolved into what the admission scripts read (lua/includes/overrides.lua: b, w, c, g, r; a plan into
 * its values), and a stored override read back as the public Override.
 */
import { ConfigError } from '../errors';
import { rlConfig } from '../core/rules';
import { overrideRulesText, parseOverrideValue, type OverrideRecord } from '../core/overrides';
import { OV_KEEP_MS } from '../core/constants.generated';
import type { ListOverridesOptions, Override, OverrideSettings, PlanSpec, SetOverrideOptions } from '../types';
import { refuseUnknownOptions, type OptionNames } from '../util/option-names';
import { integer, plainObject, refuse } from '../util/validate';
import { checkPlan } from './plan-options';
import { resolveRules } from './rule-options';

const SETTINGS: OptionNames<OverrideSettings> = { plan: true, weight: true, rules: true, concurrency: true, groupConcurrency: true, blocked: true };
const SETTING_NAMES = Object.keys(SETTINGS);
const SET_OPTIONS: OptionNames<SetOverrideOptions> = { ttlMs: true, reason: true };
const SET_OPTION_NAMES = Object.keys(SET_OPTIONS);
const LIST_OPTIONS: OptionNames<ListOverridesOptions> = { cursor: true, count: true };
const LIST_OPTION_NAMES = Object.keys(LIST_OPTIONS);
/** Most in-flight requests or running jobs an override may allow a group (as a plan's). */
const MAX_CONCURRENCY = 1_000_000;
const MAX_REASON = 200;
const MAX_PAGE = 1000;
const code = 'ERR_BL_OVERRIDE';
const optionsCode = 'ERR_BL_OVERRIDE_OPTIONS';

export interface OverrideLimits {
  readonly plans: ReadonlyMap<string, PlanSpec> | undefined;
  readonly maxWeight: number;
}

/** The settings JSON the store keeps (its `s` the settings as given, validated) and the ttl; throws ConfigError. */
export function resolveOverride(settings: unknown, options: unknown, limits: OverrideLimits): { text: string; ttlMs: number; spanMs: number } {
  const s = plainObject<OverrideSettings>('settings', settings, {
    code,
    expected: '{ plan?, weight?, rules?, concurrency?, groupConcurrency?, blocked? }',
  });
  refuseUnknownOptions(s, SETTING_NAMES, 'setOverride()', 'settings.');
  if (!SETTING_NAMES.some((name) => (s as Record<string, unknown>)[name] !== undefined)) {
    throw new ConfigError(code, `Expected \`settings\` to set at least one of ${SETTING_NAMES.join(', ')}, got none`);
  }
  const plan = s.plan === undefined ? undefined : checkPlan(limits.plans, s.plan);
  const weight = integer('settings.weight', s.weight, { code, max: limits.maxWeight, fallback: undefined });
  const rules = s.rules === undefined ? undefined : resolveRules(s.rules, 'settings.rules', code);
  const concurrency = integer('settings.concurrency', s.concurrency, { code, max: MAX_CONCURRENCY, fallback: undefined });
  const groupConcurrency = integer('settings.groupConcurrency', s.groupConcurrency, { code, max: MAX_CONCURRENCY, fallback: undefined });
  if (s.blocked !== undefined && s.blocked !== true) refuse('settings.blocked', '`true` (delete the override to unblock)', s.blocked, code);
  const o = plainObject<SetOverrideOptions>('options', options ?? {}, { code: optionsCode, expected: '{ ttlMs?, reason? }' });
  refuseUnknownOptions(o, SET_OPTION_NAMES, 'setOverride()');
  const ttlMs = integer('ttlMs', o.ttlMs, { code: optionsCode, max: OV_KEEP_MS, fallback: 0 });
  if (o.reason !== undefined && (typeof o.reason !== 'string' || o.reason.length > MAX_REASON)) {
    refuse('reason', `a string of at most ${MAX_REASON} characters`, o.reason, optionsCode);
  }
  // the override's values win, then its plan's (the plan's as of now: a later change of the plan does not reach it)
  const w = weight ?? plan?.weight;
  const c = concurrency ?? plan?.concurrency;
  const rs = rules ?? plan?.rules;
  const given: Record<string, unknown> = {};
  if (plan !== undefined) given.plan = plan.name;
  if (weight !== undefined) given.weight = weight;
  if (s.rules !== undefined) given.rules = (rules ?? []).map(({ name, limit, windowMs, algorithm }) => ({ name, limit, windowMs, algorithm }));
  if (concurrency !== undefined) given.concurrency = concurrency;
  if (groupConcurrency !== undefined) given.groupConcurrency = groupConcurrency;
  if (s.blocked === true) given.blocked = true;
  const record: OverrideRecord = {
    ...(s.blocked === true ? { b: 1 as const } : {}),
    ...(w !== undefined ? { w } : {}),
    ...(c !== undefined ? { c } : {}),
    ...(groupConcurrency !== undefined ? { g: groupConcurrency } : {}),
    ...(rs !== undefined ? { r: overrideRulesText(rs), rs } : {}),
    s: given,
    ...(o.reason !== undefined ? { why: o.reason } : {}),
  };
  return { text: JSON.stringify(record), ttlMs, spanMs: rs === undefined ? 0 : rlConfig(rs)[1] };
}

/** listOverrides' options: the cursor ('' = the first page) and the page size. */
export function resolveListOptions(options: unknown): { cursor: string; count: number } {
  const o = plainObject<ListOverridesOptions>('options', options ?? {}, { code: optionsCode, expected: '{ cursor?, count? }' });
  refuseUnknownOptions(o, LIST_OPTION_NAMES, 'listOverrides()');
  if (o.cursor !== undefined && typeof o.cursor !== 'string') refuse('cursor', 'the `cursor` of the previous page', o.cursor, optionsCode);
  const count = integer('count', o.count, { code: optionsCode, max: MAX_PAGE, fallback: 100 });
  return { cursor: o.cursor ?? '', count };
}

/** A stored override as the public Override; undefined when the value is not one. */
export function toOverride(group: string, raw: string): Override | undefined {
  const parsed = parseOverrideValue(raw);
  if (!parsed) return undefined;
  const { expiresMs, setMs, record } = parsed;
  return {
    group,
    settings: record.s as OverrideSettings,
    ...(record.why !== undefined ? { reason: record.why } : {}),
    setAt: setMs,
    ...(expiresMs > 0 ? { expiresAt: expiresMs } : {}),
  };
}
