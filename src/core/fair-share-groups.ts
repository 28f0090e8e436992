/**
 * Groups in the admission core: registration (exact Σw, lazy last-seen refresh, overflow, probation), idle
 * trimming and forgetting one group, as fs_group, fs_graduates, fs_trim and fs_reset in
 * lua/includes/fair-share-groups.lua. In a peek (`fs.peek`) they write nothing to the state and answer as the
 * writes they skip would have left it.
 */
import { FS_CAP_MIN, FS_EPS, FS_GRAD_BURST, FS_GRAD_PER_S, FS_TRIM_PAGE, FS_WITHIN } from './constants.generated';
import {
  fsExpire,
  NEWCOMERS_GROUP,
  OVERFLOW_GROUP,
  type FairShare,
  type FairShareState,
  type GroupState,
  type SightedRecord,
} from './fair-share-state';
import type { RuleStates } from './rules';

/** Redis orders a ZSET's ties by member bytes; UTF-8 byte order is code point order. */
function byCodePoints(a: string, b: string): number {
  const ia = a[Symbol.iterator]();
  const ib = b[Symbol.iterator]();
  for (;;) {
    const x = ia.next();
    const y = ib.next();
    if (x.done || y.done) return (x.done ? 0 : 1) - (y.done ? 0 : 1);
    const d = x.value.codePointAt(0)! - y.value.codePointAt(0)!;
    if (d !== 0) return d;
  }
}

export function fsTrim(fs: FairShare): void {
  const { cfg, meta, state } = fs;
  if (fs.nowMs - meta.tr < cfg.idleMs / 8) return;
  const cutoff = fs.nowMs - cfg.idleMs;
  // The page fair-share.lua's ZRANGEBYSCORE returns: by last-seen ms (seen's order), ties by group bytes, so
  // groups tied at the page's edge are all read and the page cut after sorting them.
  const page: Array<[string, number]> = [];
  for (const [group, seenMs] of state.seen) {
    if (seenMs > cutoff || (page.length >= FS_TRIM_PAGE && seenMs !== page[page.length - 1]![1])) break;
    page.push([group, seenMs]);
  }
  if (page.length > FS_TRIM_PAGE) page.sort((a, b) => a[1] - b[1] || byCodePoints(a[0], b[0]));
  const trimmed = page.slice(0, FS_TRIM_PAGE);
  for (const [group] of trimmed) {
    const st = state.groups.get(group);
    // a group whose rule state still matters stays (forgetting it would let it over-spend its rules)
    if (st?.rulesUntil !== undefined && st.rulesUntil > fs.nowMs) {
      if (fs.peek) continue;
      state.seen.delete(group);
      state.seen.set(group, fs.nowMs);
      continue;
    }
    if (st) meta.ws -= st.w;
    if (fs.gone) fs.gone.add(group);
    else {
      state.seen.delete(group);
      state.groups.delete(group);
    }
    meta.gn -= 1;
  }
  if (meta.ws < 0) meta.ws = 0;
  if (meta.gn < 0) meta.gn = 0;
  // A full page means more may be waiting: keep trimming on the next call.
  if (trimmed.length < FS_TRIM_PAGE) meta.tr = fs.nowMs;
}

/**
 * The graduation budget (fs_budget): one token per new id registered from probation, refilled at FS_GRAD_PER_S up
 * to FS_GRAD_BURST. False, spending nothing, when it is empty. A peek spends on its copy of meta.
 */
function fsBudget(fs: FairShare): boolean {
  const { meta } = fs;
  meta.gb = Math.min(FS_GRAD_BURST, meta.gb + ((fs.nowUs - meta.gbl) * FS_GRAD_PER_S) / 1e6);
  meta.gbl = fs.nowUs;
  if (meta.gb < 1 - FS_EPS) return false;
  meta.gb -= 1;
  return true;
}

/**
 * Probation: true when `group` may register: in the limiter's first epoch (meta.sh 0), or first seen at least
 * probationMs ago, and the graduation budget has a token (a graduate the budget refuses keeps its sighting and
 * tries again on its next request). Else its first sighting is recorded (making room by dropping the oldest, as
 * fair-share.lua's ZRANGEBYSCORE picks it: of the oldest, the smallest id, and its rule record with it) and it
 * stays on probation.
 */
function fsGraduates(fs: FairShare, group: string): boolean {
  const { probation } = fs.state;
  const first = probation.get(group);
  // cold start: the first epoch's ids register at once, within the budget (docs/algorithm.md §2.9); a sighting
  // the budget once refused goes (the registered group's last-seen entry replaces it, as ZADD does in Lua)
  if (fs.meta.sh === 0 && fsBudget(fs)) {
    if (first !== undefined && !fs.peek) probation.delete(group);
    return true;
  }
  if (first !== undefined) {
    if (fs.nowMs - first < fs.cfg.probationMs || !fsBudget(fs)) return false;
    if (!fs.peek) probation.delete(group); // its `seen` entry becomes the registered group's
    return true;
  }
  // a peek records no sighting: the group is on probation, as the check would leave it
  if (fs.peek) return false;
  if (probation.size >= fs.cfg.maxGroups) {
    let oldest: [string, number] | undefined;
    for (const entry of probation) {
      if (oldest !== undefined && entry[1] !== oldest[1]) break;
      if (oldest === undefined || byCodePoints(entry[0], oldest[0]) < 0) oldest = entry;
    }
    probation.delete(oldest![0]);
    fs.state.sighted.delete(oldest![0]);
  }
  probation.set(group, fs.nowMs);
  fs.expire = true;
  return false;
}

const copyRules = (rs: RuleStates): RuleStates => new Map([...rs].map(([tag, v]) => [tag, [...v]]));

/**
 * The rule record of an id on probation (fs_sighted): its share is the newcomers', its rules are its own. It lives
 * and dies with the id's sighting: dropped with it, carried over to the group's own state when it graduates.
 * A peek works on a copy.
 */
export function fsSighted(fs: FairShare, group: string): SightedRecord {
  const rec = fs.state.sighted.get(group);
  if (fs.peek) return rec?.rs ? { ...rec, rs: copyRules(rec.rs) } : { ...rec };
  if (rec) return rec;
  const fresh: SightedRecord = {};
  fs.state.sighted.set(group, fresh);
  return fresh;
}

/**
 * (3) register a group: exact Σw, lazy last-seen refresh, overflow when maxGroups are active.
 * Exported for the memory dispatcher, which keeps each group's SFQ finish tag (`ftag`) here like dispatch.lua.
 */
export function fsGroup(fs: FairShare, group: string, weight: number): [string, GroupState, string?] {
  const { meta, state, gone } = fs;
  let st = gone?.has(group) ? undefined : state.groups.get(group);
  // a peek works on a copy (rule state too: rlCheck brings it to now in place)
  if (st && fs.peek) st = { ...st, ...(st.rs && { rs: copyRules(st.rs) }) };
  if (!st) {
    // The shared groups are registered at once (and take none of the maxGroups places); any other new id may
    // be over maxGroups or on probation.
    if (group !== OVERFLOW_GROUP && group !== NEWCOMERS_GROUP) {
      const has = (shared: string): number => (state.groups.has(shared) && !gone?.has(shared) ? 1 : 0);
      const real = meta.gn - has(OVERFLOW_GROUP) - has(NEWCOMERS_GROUP);
      if (real >= fs.cfg.maxGroups) return fsGroup(fs, OVERFLOW_GROUP, 1);
      if (fs.cfg.probationMs > 0 && !fsGraduates(fs, group)) {
        // the share is the newcomers'; its rules are its own (fsSighted: the third value names whose)
        const [g, s] = fsGroup(fs, NEWCOMERS_GROUP, 1);
        return [g, s, group];
      }
    }
    // New: buckets start full (refill caps them at their sizes), weight joins Σw.
    const full = fs.cfg.burst;
    // the cap, demand and within-share meters start full too (sizes at least FS_CAP_MIN, FS_WITHIN; refill caps them)
    const cap = Math.max(full, FS_CAP_MIN);
    const tokW = Math.max(full, FS_WITHIN);
    st = { tokMin: full, tokCap: cap, tokDem: cap, last: fs.nowUs, w: weight, ftag: 0, seen: -Infinity, promise: 0, tokW, flood: 0 };
    // a graduate keeps the rule state it spent on probation
    if (fs.cfg.probationMs > 0 && group !== OVERFLOW_GROUP && group !== NEWCOMERS_GROUP) {
      const rec = state.sighted.get(group);
      if (rec?.rs) {
        st.rs = fs.peek ? copyRules(rec.rs) : rec.rs;
        if (rec.rulesUntil !== undefined) st.rulesUntil = rec.rulesUntil;
      }
      if (!fs.peek) state.sighted.delete(group);
    }
    meta.ws += weight;
    meta.gn += 1;
    fs.expire = true;
    if (!fs.peek) state.groups.set(group, st);
  }
  if (group === OVERFLOW_GROUP || group === NEWCOMERS_GROUP) weight = 1;
  if (st.w !== weight) {
    meta.ws += weight - st.w;
    st.w = weight;
  }
  if (fs.nowMs - st.seen > fs.cfg.idleMs / 8) {
    if (!fs.peek) {
      state.seen.delete(group); // re-inserted at the end: insertion order stays score order
      state.seen.set(group, fs.nowMs);
    }
    st.seen = fs.nowMs;
  }
  return [group, st];
}

/**
 * Forgets one group (fs_reset): its state and rule state, its last-seen or probation sighting, its weight in
 * Σw and its place in the active count, a green reservation it holds. A lapsed state (a Redis key past its
 * TTL, `nowMs` past `expiresAtMs`) holds nothing. True when there was anything to forget.
 */
export function fsReset(state: FairShareState, group: string, nowMs: number): boolean {
  fsExpire(state, nowMs);
  const meta = state.meta;
  if (meta === undefined) return false;
  const st = state.groups.get(group);
  const sighted = state.probation.delete(group);
  state.sighted.delete(group); // a sighting's rule record goes with it
  const found = state.seen.delete(group) || sighted;
  if (st === undefined) return found;
  state.groups.delete(group);
  meta.ws = Math.max(0, meta.ws - st.w);
  meta.gn = Math.max(0, meta.gn - 1);
  if (meta.rv > 0 && meta.rg === group) {
    meta.rv = 0;
    meta.rg = '';
    meta.re = 0;
  }
  return true;
}
