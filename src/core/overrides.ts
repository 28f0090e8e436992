/**
 * Per-group overrides (docs/runtime-policies.md): the same code as lua/includes/overrides.lua (reading one in an
 * admission) and lua/includes/override-store.lua (set, get, delete, list), name for name. A stored override is
 * one string, '<expiresMs>|<setMs>|<settings JSON>', the same on both stores; the JSON is built by the limiter
 * (overrideRecordText) and read here and by the scripts.
 */
import { OV_KEEP_MS } from './constants.generated';
import { rlConfig, type RuleConfig } from './rules';
import type { FairShare, FairShareResult } from './fair-share-state';
import type { RuleSpec } from '../types';

/** The settings JSON of a stored override: what the scripts read (b, w, c, g, r) and what the client reads back. */
export interface OverrideRecord {
  /** 1: blocked. */
  readonly b?: 1;
  readonly w?: number;
  readonly c?: number;
  readonly g?: number;
  /** The rules' config text (rules.lua's JSON array; '[]': none); absent: the check's own rules. */
  readonly r?: string;
  /** The same rules resolved (names, limits), for the decision's rule statuses. */
  readonly rs?: readonly RuleSpec[];
  /** The settings as the operator gave them (validated), for getOverride and listOverrides. */
  readonly s: Readonly<Record<string, unknown>>;
  /** The operator's reason. */
  readonly why?: string;
}

/** An override read in an admission (ov_read's ov). */
export interface Ov {
  readonly raw: string;
  readonly b: number;
  readonly w: number;
  readonly c: number;
  readonly g: number;
  /** undefined: the check's own rules; false: none. */
  readonly rules: RuleConfig[] | false | undefined;
  readonly expires: number;
  readonly record: OverrideRecord;
}

const OV_VALUE = /^(\d+)\|(\d+)\|([\s\S]*)$/;

/** A stored value's parts; undefined when it is not one. */
export function parseOverrideValue(raw: string): { expiresMs: number; setMs: number; record: OverrideRecord } | undefined {
  const m = OV_VALUE.exec(raw);
  if (!m) return undefined;
  return { expiresMs: Number(m[1]), setMs: Number(m[2]), record: JSON.parse(m[3]!) as OverrideRecord };
}

/** ov_span: the longest rule span any override had keeps the limiter's state that long (once per call). */
export function ovSpan(os: OverrideState, fs: FairShare): void {
  if (os.spanMs <= 0) return;
  const cfg = fs.cfg;
  const ttl = Math.max(cfg.idleMs, os.spanMs) + Math.floor((cfg.windowUs + cfg.epochUs) / 1000);
  if (ttl > cfg.ttlMs) fs.ttlMs = ttl;
}

/** ov_read: the group's override in force now (raw: the stored value, or undefined). */
export function ovRead(fs: FairShare, raw: string | undefined): Ov | undefined {
  if (raw === undefined) return undefined;
  const parsed = parseOverrideValue(raw);
  if (!parsed) return undefined;
  const { expiresMs, record } = parsed;
  if (expiresMs > 0 && expiresMs <= fs.nowMs) return undefined;
  let rules: RuleConfig[] | false | undefined;
  if (typeof record.r === 'string') rules = rlConfig(record.rs ?? [])[0];
  return { raw, b: record.b ?? 0, w: record.w ?? 0, c: record.c ?? 0, g: record.g ?? 0, rules, expires: expiresMs, record };
}

/** ov_text: the reply's `override` field ('' without one). */
export function ovText(ov: Ov | undefined, r: Pick<FairShareResult, 'rules' | 'policy'>): string {
  if (!ov) return '';
  if (ov.b === 1 || ov.rules === undefined || !r.rules) return `\n${ov.raw}`;
  return `${[r.policy, ...r.rules].map((m) => Math.floor(m)).join(',')}\n${ov.raw}`;
}

/** ov_blocked: a blocked group's decision, nothing spent; retry when the override expires, else after a window. */
export function ovBlocked(fs: FairShare, group: string, ov: Ov): FairShareResult {
  const retryUs = ov.expires > 0 ? (ov.expires - fs.nowMs) * 1000 : fs.cfg.windowUs;
  return {
    allowed: false,
    colour: 2,
    remaining: 0,
    limit: 0,
    guaranteed: 0,
    retryUs,
    hintUs: retryUs,
    resetUs: 0,
    emptyUs: 0,
    group,
    active: fs.meta.gn,
    policy: 0,
    rules: false,
  };
}

/** The config text of an override's rules, as the scripts read it ('[]': none). */
export function overrideRulesText(rules: readonly RuleSpec[]): string {
  return `[${rules.map((r) => `${r.tag},${ALGORITHM_CODES[r.algorithm]},${r.limit},${r.windowMs},${r.burst}`).join(',')}]`;
}
const ALGORITHM_CODES = { 'token-bucket': 1, 'sliding-window': 2, 'fixed-window': 3 } as const;

/** One limiter's overrides (in Redis the `overrides` HASH, `overridesDue` and `overridesIndex` ZSETs). */
export interface OverrideState {
  /** group → stored value. */
  readonly records: Map<string, string>;
  /** group → expires ms (overrides with a ttl only). */
  readonly due: Map<string, number>;
  /** The longest rule span any override set had (the HASH's field ''); 0: none. */
  spanMs: number;
  /** When the keys lapse (ms; 0: no keys). */
  expiresAtMs: number;
}

export function createOverrideState(): OverrideState {
  return { records: new Map(), due: new Map(), spanMs: 0, expiresAtMs: 0 };
}

/** The state as Redis would hold it at `nowMs`: lapsed keys are gone. */
export function ovOpen(os: OverrideState, nowMs: number): OverrideState {
  if (os.expiresAtMs > 0 && nowMs > os.expiresAtMs) {
    os.records.clear();
    os.due.clear();
    os.spanMs = 0;
    os.expiresAtMs = 0;
  }
  return os;
}

/** ov_keep: after an admission that renewed the limiter's keys, the override keys too. */
export function ovKeep(os: OverrideState, fs: FairShare): void {
  if (fs.expire && ovExists(os)) os.expiresAtMs = Math.floor(fs.clockUs / 1000) + OV_KEEP_MS;
}

/** ov_prune: forgets every override past its expiry. */
function ovPrune(os: OverrideState, nowMs: number): void {
  for (const [group, expires] of os.due) {
    if (expires <= nowMs) {
      os.due.delete(group);
      os.records.delete(group);
    }
  }
}

/** The HASH exists: a group's override or the span field. */
const ovExists = (os: OverrideState): boolean => os.records.size > 0 || os.spanMs > 0;

function ovTouch(os: OverrideState, nowMs: number): void {
  os.expiresAtMs = ovExists(os) ? nowMs + OV_KEEP_MS : 0;
}

/** override-set.lua: [written, expiresMs, setMs, held]. */
export function ovSet(
  os: OverrideState,
  nowMs: number,
  group: string,
  settings: string,
  ttlMs: number,
  max: number,
  spanMs: number,
): [boolean, number, number, number] {
  ovPrune(os, nowMs);
  let held = os.records.size;
  if (!os.records.has(group)) {
    if (held >= max) return [false, 0, nowMs, held];
    held += 1;
  }
  let expires = 0;
  if (ttlMs > 0) {
    expires = nowMs + ttlMs;
    os.due.set(group, expires);
  } else os.due.delete(group);
  os.records.set(group, `${expires}|${nowMs}|${settings}`);
  if (spanMs > os.spanMs) os.spanMs = spanMs;
  ovTouch(os, nowMs);
  return [true, expires, nowMs, held];
}

/** override-get.lua: the stored value ('' when none or expired). */
export function ovGet(os: OverrideState, nowMs: number, group: string): string {
  const raw = os.records.get(group);
  if (raw === undefined) return '';
  const expires = Number(/^(\d+)\|/.exec(raw)?.[1] ?? 0);
  return expires > 0 && expires <= nowMs ? '' : raw;
}

/** override-delete.lua: true when the group had an override in force. */
export function ovDelete(os: OverrideState, nowMs: number, group: string): boolean {
  ovPrune(os, nowMs);
  const had = os.records.delete(group);
  os.due.delete(group);
  return had;
}

/** Byte order of UTF-8, as ZRANGEBYLEX sorts. */
const byBytes = (a: string, b: string): number => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));

/** override-list.lua: [group, value] after `cursor` in byte order, at most `count`. */
export function ovList(os: OverrideState, nowMs: number, cursor: string, count: number): Array<[string, string]> {
  ovPrune(os, nowMs);
  const groups = [...os.records.keys()].filter((g) => cursor === '' || byBytes(g, cursor) > 0).sort(byBytes);
  return groups.slice(0, count).map((g) => [g, os.records.get(g)!]);
}
