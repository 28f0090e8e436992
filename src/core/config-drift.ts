/**
 * Config drift: the TypeScript twin of lua/includes/config-drift.lua (cfOpen) and lua/config-check.lua
 * (cfDescribe), name for name, and what both stores share around them: a limiter's description (every option
 * its spec holds, one line each), its fingerprint, and the lines that differ between two descriptions
 * (docs/operations.md "Config drift"). MemoryStore keeps the stored fingerprint and the descriptions on the limiter's
 * FairShareState, like the Redis fields that live in the groups hash.
 */
import { createHash } from 'node:crypto';
import type { LimiterSpec, RuleSpec } from '../types';
import { CF_DESCRIBED, CF_LIVE_MS, CF_TAKE_MS } from './constants.generated';
import { fsExpire, type FairShare, type FairShareState } from './fair-share-state';

/** The fingerprint's length (config-drift.lua's CF_LEN). */
export const CF_LEN = 12;

const ruleText = (r: RuleSpec): string => `${r.limit} per ${r.windowMs} ms, ${r.algorithm}, burst ${r.burst}`;

/** Every option the spec holds (the limiter's name aside), as path → value; sorted, so equal specs describe alike. */
export function describeSpec(spec: LimiterSpec): Record<string, string> {
  const d: Record<string, string> = {
    limit: String(spec.limit),
    windowMs: String(spec.windowMs),
    burst: String(spec.burst),
    reserve: String(spec.reserve),
    idleMs: String(spec.idleMs),
    epochMs: String(spec.epochMs),
    sustained: String(spec.sustained),
    maxGroups: String(spec.maxGroups),
    probationMs: String(spec.probationMs),
    concurrencyLeaseMs: String(spec.concurrencyLeaseMs),
  };
  for (const r of spec.rules ?? []) d[`rules.${r.name}`] = ruleText(r);
  for (const plan of spec.plans?.values() ?? []) {
    const at = `plans.${plan.name}`;
    d[at] = 'present';
    if (plan.weight !== undefined) d[`${at}.weight`] = String(plan.weight);
    if (plan.concurrency !== undefined) d[`${at}.concurrency`] = String(plan.concurrency);
    if (plan.class !== undefined) d[`${at}.class`] = plan.class;
    for (const r of plan.rules) d[`${at}.rules.${r.name}`] = ruleText(r);
  }
  for (const [name, share] of spec.classes ?? []) d[`classes.${name}`] = String(share);
  const a = spec.adaptive;
  if (a) d.adaptive = `min ${a.min}, max ${a.max}, increase ${a.increase}, decrease ${a.decrease}, intervalMs ${a.intervalMs}`;
  return Object.fromEntries(Object.entries(d).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)));
}

/** A limiter's description as stored (JSON text) and its fingerprint (CF_LEN characters of base64url). */
export function configIdentity(spec: LimiterSpec): { readonly description: string; readonly fingerprint: string } {
  const description = JSON.stringify(describeSpec(spec));
  const fingerprint = createHash('sha256').update(description).digest('base64url').slice(0, CF_LEN);
  return { description, fingerprint };
}

/** Most lines a mismatch names (the rest are counted). */
const MAX_LINES = 20;

/** The options that differ, one line each: `limit: this process 100, another 200` (absent: none). */
export function configDiff(mine: string, theirs: string): string[] {
  const a = parseDescription(mine);
  const b = parseDescription(theirs);
  const paths = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
  const lines: string[] = [];
  for (const path of paths) {
    if (a[path] !== b[path]) lines.push(`${path}: this process ${a[path] ?? 'none'}, another ${b[path] ?? 'none'}`);
  }
  if (lines.length > MAX_LINES) return [...lines.slice(0, MAX_LINES), `and ${lines.length - MAX_LINES} more`];
  return lines;
}

function parseDescription(text: string): Record<string, string | undefined> {
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, string | undefined>;
  } catch {
    // another version's text: every option then reads as differing
  }
  return {};
}

/** cf_open: '' (agrees, or none live) or another config's live fingerprint; the stored one replaced as the Lua does. */
export function cfOpen(fs: FairShare, fp: string): string {
  const now = fs.nowMs;
  const stored = fs.state.configEntry;
  const age = now - (stored?.atMs ?? 0);
  const other = stored?.fp;
  if (other === fp) {
    if (age >= CF_LIVE_MS && !fs.peek) fs.state.configEntry = { fp, atMs: now };
    return '';
  }
  const live = other !== undefined && age < CF_LIVE_MS;
  if (!fs.peek && (!live || age >= CF_TAKE_MS)) fs.state.configEntry = { fp, atMs: now };
  return live ? other : '';
}

/**
 * config-check.lua: publishes `description` under `fp` (only while the limiter has state) and answers the
 * description published under `other` ('' when none; then `fp` is stored in place of `other`, so its process
 * sees this one at its next check).
 */
export function cfDescribe(state: FairShareState, fp: string, description: string, other: string, nowMs: number): string {
  // a lapsed limiter has no descriptions left, like the Redis hash whose TTL ran out
  fsExpire(state, nowMs);
  if (state.meta === undefined) return '';
  const all = state.described;
  const found = all.get(other)?.text ?? '';
  if (found === '' && state.configEntry?.fp === other) state.configEntry = { fp, atMs: nowMs };
  all.set(fp, { atMs: nowMs, text: description });
  const order = [...all].sort(([x, a], [y, b]) => b.atMs - a.atMs || (x < y ? -1 : x > y ? 1 : 0));
  for (const [name] of order.slice(CF_DESCRIBED)) all.delete(name);
  return found;
}
