/**
 * The admission core (docs/algorithm.md §2; the steps in §2.3) over an in-memory state object: the same algorithm as
 * lua/includes/fair-share.lua, name for name, so the two are easy to compare. Used by MemoryStore and the
 * memory dispatcher. Shape: `openFairShare` (clock, refill, epoch step, trim), `decide` any number of
 * times, `closeFairShare` (bookkeeping that Redis does with PEXPIRE).
 */
import type { LimiterSpec } from '../types';
import { rlCheck, rlConfig, rlKeep, rlSpend, rlStatus, type RuleConfig, type RuleStates } from './rules';

export const FS_EPS = 1e-9;
export const FS_TRIM_PAGE = 100;
/**
 * Smallest green burst (capped by burst): a group below its guaranteed rate sends Poisson clumps; with a
 * 1-token green bucket two arrivals closer than its green interval turned yellow and lost the token race
 * to a flood (docs/algorithm.md §2.4). 4 tokens keep them green.
 */
export const FS_GREEN_MIN = 4;
/** The shared group every new group joins once `maxGroups` groups are active (weight 1). */
export const OVERFLOW_GROUP = '*overflow*';
/**
 * The shared group of group ids on probation (weight 1): a new id is decided as this group until it comes back
 * `probationMs` after it was first seen, so a flood of new ids (free identities) cannot dilute the groups
 * already there. Decisions still name the caller's group.
 */
export const NEWCOMERS_GROUP = '*new*';
/** Used when a spec carries no `maxGroups`. */
export const DEFAULT_MAX_GROUPS = 10_000;

/** A LimiterSpec that may carry maxGroups and probationMs (src/options.ts puts them there; absent: none). */
export type FairShareSpec = LimiterSpec & { readonly maxGroups?: number; readonly probationMs?: number };

export interface FairShareConfig {
  readonly limit: number;
  readonly windowUs: number;
  readonly burst: number;
  readonly reserve: number;
  readonly idleMs: number;
  readonly epochUs: number;
  readonly maxGroups: number;
  /** Emission interval in µs. */
  readonly T: number;
  /** Keys (state) live this long after the last refresh. */
  readonly ttlMs: number;
  /** A new group id is on probation until it comes back this long after it was first seen (0: no probation). */
  readonly probationMs: number;
  /** The limiter's rules (false: none, and no rule work at all). */
  readonly rules: readonly RuleConfig[] | false;
}

export interface MetaState {
  gt: number; gl: number; ws: number; gn: number; sh: number; ep: number; fc: number; tr: number;
  /** SFQ virtual time (the dispatcher's); kept here, unused by admission. */
  vt: number;
  /** Green reservation (see fair-share.lua): units held (0 = none), the holder, when it lapses (µs). */
  rv: number; rg: string; re: number;
}

export interface GroupState {
  tokMin: number; tokCap: number; tokDem: number; last: number; w: number; ftag: number; seen: number; promise: number;
  /** Rule state (rules.ts), once a decision with rules was made; until (ms) it matters: trimming keeps the group. */
  rs?: RuleStates; rulesUntil?: number;
}

/** Everything one limiter keeps in memory; the counterpart of its Redis keys. */
export interface FairShareState {
  meta: MetaState | undefined;
  groups: Map<string, GroupState>;
  /** group → last-seen ms. Insertion order is score order because time never steps back. */
  seen: Map<string, number>;
  /**
   * Group ids on probation → first-seen ms, at most maxGroups (in Redis: `seen` members scored ms − 2^52).
   * Insertion order is first-seen order.
   */
  probation: Map<string, number>;
  /**
   * When the "keys" lapse (ms): the clock's ms at the last PEXPIRE plus the TTL. The state is dropped once the
   * clock's ms is past it, as Redis expires a key (`now > when`, in whole ms).
   */
  expiresAtMs: number;
}

export interface FairShare {
  readonly cfg: FairShareConfig;
  readonly state: FairShareState;
  readonly meta: MetaState;
  readonly nowUs: number;
  readonly nowMs: number;
  /** The clock as read, before the never-step-back clamp: expiry runs on it, as Redis TTLs run on real time. */
  readonly clockUs: number;
  expire: boolean;
}

export interface FairShareResult {
  allowed: boolean;
  /** 0 green, 1 yellow, 2 red. */
  colour: 0 | 1 | 2;
  remaining: number;
  limit: number;
  guaranteed: number;
  retryUs: number;
  hintUs: number;
  resetUs: number;
  /** Until the global bucket holds one unit again, for anyone (a lower bound: reservations ignored). */
  emptyUs: number;
  /** The effective group: OVERFLOW_GROUP when the caller's group did not fit under maxGroups. */
  group: string;
  active: number;
  /** 0 the global share, i the i-th rule: the policy that denied (waiting longest; 0 when allowed). */
  policy: number;
  /** With rules: remaining, reset µs per rule. */
  rules: number[] | false;
}

export function createFairShareState(): FairShareState {
  return { meta: undefined, groups: new Map(), seen: new Map(), probation: new Map(), expiresAtMs: 0 };
}

/** The same numbers fs_config derives from the config block. */
export function fairShareConfig(spec: FairShareSpec): FairShareConfig {
  const windowUs = spec.windowMs * 1000;
  const epochUs = spec.epochMs * 1000;
  const T = spec.sustained ? windowUs / spec.limit : windowUs / (spec.limit - spec.burst + 1);
  const [rules, spanMs] = rlConfig(spec.rules);
  return {
    limit: spec.limit, windowUs, burst: spec.burst, reserve: spec.reserve, idleMs: spec.idleMs, epochUs,
    maxGroups: spec.maxGroups ?? DEFAULT_MAX_GROUPS, T,
    // a rule's state must outlive its window (and a rule's window may be longer than idleMs)
    ttlMs: Math.max(spec.idleMs, spanMs) + Math.floor((windowUs + epochUs) / 1000),
    probationMs: spec.probationMs ?? 0,
    rules,
  };
}

function fsRefill(tokens: number, last: number, now: number, interval: number, size: number): number {
  const t = tokens + (now - last) / interval;
  return t > size ? size : t;
}

/** Time until `need` tokens exist (µs); infinite when the bucket can never hold them. */
function fsWait(tokens: number, interval: number, need: number, size: number): number {
  if (tokens >= need - FS_EPS) return 0;
  if (need > size + FS_EPS) return Infinity;
  return (need - tokens) * interval;
}

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

function fsTrim(fs: FairShare): void {
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
      state.seen.delete(group);
      state.seen.set(group, fs.nowMs);
      continue;
    }
    if (st) meta.ws -= st.w;
    state.seen.delete(group);
    state.groups.delete(group);
    meta.gn -= 1;
  }
  if (meta.ws < 0) meta.ws = 0;
  if (meta.gn < 0) meta.gn = 0;
  // A full page means more may be waiting: keep trimming on the next call.
  if (trimmed.length < FS_TRIM_PAGE) meta.tr = fs.nowMs;
}

function release(meta: MetaState): void {
  meta.rv = 0;
  meta.rg = '';
  meta.re = 0;
}

export function openFairShare(state: FairShareState, cfg: FairShareConfig, nowUsIn: number): FairShare {
  let expire = false;
  // Like a Redis key whose TTL lapsed: an abandoned limiter starts afresh.
  if (state.meta && Math.floor(nowUsIn / 1000) > state.expiresAtMs) {
    state.meta = undefined;
    state.groups.clear();
    state.seen.clear();
    state.probation.clear();
  }
  let meta = state.meta;
  if (!meta) {
    meta = {
      gt: cfg.burst, gl: nowUsIn, ws: 0, gn: 0, sh: 1, ep: nowUsIn, fc: 0, tr: Math.floor(nowUsIn / 1000), vt: 0, rv: 0, rg: '', re: 0,
    };
    // meta alone may have gone (eviction, in Redis): groups it no longer counts in Σw must not linger.
    state.groups.clear();
    state.seen.clear();
    state.probation.clear();
    state.meta = meta;
    expire = true;
  }
  // Never step back: a backward clock step must not refill the same interval twice. Time then stands still
  // (no epoch passes), but expiry runs on the real clock (like Redis TTLs): renew it on every such call.
  const steppedBack = nowUsIn < meta.gl;
  const now = steppedBack ? meta.gl : nowUsIn;
  const fs: FairShare = { cfg, state, meta, nowUs: now, nowMs: Math.floor(now / 1000), clockUs: nowUsIn, expire: expire || steppedBack };
  meta.gt = fsRefill(meta.gt, meta.gl, now, cfg.T, cfg.burst);
  meta.gl = now;
  if (meta.rv > 0 && now >= meta.re) release(meta);

  // (1) water level: one fixed-point step per epoch.
  if (now - meta.ep >= cfg.epochUs) {
    const supply = (now - meta.ep) / cfg.T;
    let s = 1;
    if (meta.fc >= 1) s = (meta.sh * supply) / meta.fc;
    if (meta.ws > 0 && s < 1 / meta.ws) s = 1 / meta.ws;
    if (s > 1) s = 1;
    meta.sh = s;
    meta.ep = now;
    meta.fc = 0;
    fs.expire = true;
  }

  // (2) forget idle groups, amortised.
  fsTrim(fs);
  return fs;
}

/**
 * Probation: true when `group` was first seen at least probationMs ago; else its first sighting is recorded
 * (making room by dropping the oldest, as fair-share.lua's ZRANGEBYSCORE picks it: of the oldest, the
 * smallest id) and it stays on probation.
 */
function fsGraduates(fs: FairShare, group: string): boolean {
  const { probation } = fs.state;
  const first = probation.get(group);
  if (first !== undefined) {
    if (fs.nowMs - first < fs.cfg.probationMs) return false;
    probation.delete(group); // its `seen` entry becomes the registered group's
    return true;
  }
  if (probation.size >= fs.cfg.maxGroups) {
    let oldest: [string, number] | undefined;
    for (const entry of probation) {
      if (oldest !== undefined && entry[1] !== oldest[1]) break;
      if (oldest === undefined || byCodePoints(entry[0], oldest[0]) < 0) oldest = entry;
    }
    probation.delete(oldest![0]);
  }
  probation.set(group, fs.nowMs);
  fs.expire = true;
  return false;
}

/**
 * (3) register a group: exact Σw, lazy last-seen refresh, overflow when maxGroups are active.
 * Exported for the memory dispatcher, which keeps each group's SFQ finish tag (`ftag`) here like dispatch.lua.
 */
export function fsGroup(fs: FairShare, group: string, weight: number): [string, GroupState] {
  const { meta, state } = fs;
  let st = state.groups.get(group);
  if (!st) {
    // The shared groups are registered at once (and take none of the maxGroups places); any other new id may
    // be over maxGroups or on probation.
    if (group !== OVERFLOW_GROUP && group !== NEWCOMERS_GROUP) {
      const real = meta.gn - (state.groups.has(OVERFLOW_GROUP) ? 1 : 0) - (state.groups.has(NEWCOMERS_GROUP) ? 1 : 0);
      if (real >= fs.cfg.maxGroups) return fsGroup(fs, OVERFLOW_GROUP, 1);
      // (never with rules: they are per group, and newcomers would share one group's)
      if (fs.cfg.probationMs > 0 && fs.cfg.rules === false && !fsGraduates(fs, group)) return fsGroup(fs, NEWCOMERS_GROUP, 1);
    }
    // New: buckets start full (refill caps them at their sizes), weight joins Σw.
    const full = fs.cfg.burst;
    st = { tokMin: full, tokCap: full, tokDem: full, last: fs.nowUs, w: weight, ftag: 0, seen: -Infinity, promise: 0 };
    meta.ws += weight;
    meta.gn += 1;
    fs.expire = true;
    state.groups.set(group, st);
  }
  if (group === OVERFLOW_GROUP || group === NEWCOMERS_GROUP) weight = 1;
  if (st.w !== weight) {
    meta.ws += weight - st.w;
    st.w = weight;
  }
  if (fs.nowMs - st.seen > fs.cfg.idleMs / 8) {
    state.seen.delete(group); // re-inserted at the end: insertion order stays score order
    state.seen.set(group, fs.nowMs);
    st.seen = fs.nowMs;
  }
  return [group, st];
}

export function decide(
  fs: FairShare, groupIn: string, weight: number, cost: number, promise: boolean, rules: readonly RuleConfig[] | false = fs.cfg.rules,
): FairShareResult {
  const { cfg, meta } = fs;
  const now = fs.nowUs;
  const [group, st] = fsGroup(fs, groupIn, weight);
  const c = cost;
  const b = cfg.burst;
  const rho = cfg.reserve;
  const T = cfg.T;

  // (4) shares of the group (Σw is never below the group's own weight, whatever state survived)
  if (meta.ws < st.w) meta.ws = st.w;
  if (meta.gn < 1) meta.gn = 1;
  const gamma = st.w / meta.ws;
  let kappa = meta.sh * st.w;
  if (kappa < gamma) kappa = gamma;
  if (kappa > 1) kappa = 1;
  const Tg = T / gamma;
  const Tc = T / kappa;
  // bg ≥ max(reserve, FS_GREEN_MIN): Poisson clumps of small tenants stay green. Cost c > 1: bg ≥ 2c (≤ b),
  // so one request fits and the group's green keeps refilling while a request waits for c global tokens.
  let bg = b * gamma;
  if (bg < rho) bg = rho;
  if (bg < FS_GREEN_MIN) bg = FS_GREEN_MIN;
  if (c > 1 && bg < 2 * c) bg = 2 * c;
  if (bg > b) bg = b;
  let bc = b * kappa;
  if (bc < bg) bc = bg;
  // another group's green reservation: its units are not ours to take
  const rv = meta.rv > 0 && meta.rg !== group ? meta.rv : 0;
  const yellowFloor = rv > rho ? rv : rho;

  // (5) refill the group's meters to now (the global bucket was refilled in openFairShare)
  const dt = now - st.last;
  st.tokMin = fsRefill(st.tokMin, 0, dt, Tg, bg);
  st.tokCap = fsRefill(st.tokCap, 0, dt, Tc, bc);
  st.tokDem = fsRefill(st.tokDem, 0, dt, Tc, bc);
  st.last = now;

  // (5b) rules: checked first, spent only if everything admits (rules.ts)
  let rok = true;
  let rwait = 0;
  let rbad = 0;
  let rs: RuleStates | undefined;
  if (rules) {
    rs = st.rs ??= new Map();
    [rok, rwait, rbad] = rlCheck(rules, rs, now, c);
  }

  // (6) demand meter at the cap rate: min(arrivals, cap), whatever the share decides (not what a rule denies)
  if (rok && st.tokDem >= c - FS_EPS) {
    st.tokDem -= c;
    meta.fc += c;
  }

  // (7) colour, cap first (RFC 2698 order)
  const capOk = c <= bc + FS_EPS && st.tokCap >= c - FS_EPS;
  const greenOk = capOk && c <= bg + FS_EPS && st.tokMin >= c - FS_EPS;
  let allowed = false;
  let colour: 0 | 1 | 2 = 2;
  let retry = 0;
  let hint = 0;
  let policy = 0;
  const globalGreen = greenOk && meta.gt >= c + rv - FS_EPS;
  const globalYellow = capOk && !greenOk && meta.gt >= c + yellowFloor - FS_EPS;
  if (!rok && (globalGreen || globalYellow)) {
    // only a rule says no: its wait, nothing promised or reserved
    retry = rwait;
    hint = rwait;
    policy = rbad;
  } else if (globalGreen) {
    meta.gt -= c;
    st.tokMin -= c;
    st.tokCap -= c;
    allowed = true;
    colour = 0;
  } else if (globalYellow) {
    meta.gt -= c;
    st.tokCap -= c;
    allowed = true;
    colour = 1;
  } else {
    const wc = fsWait(st.tokCap, Tc, c, bc);
    // the global wait counts another group's reservation as spent (it is, once its holder is admitted)
    const tg = Math.max(wc, fsWait(st.tokMin, Tg, c, bg), fsWait(meta.gt, T, c + rv, b + rv));
    const ty = Math.max(wc, fsWait(meta.gt, T, c + yellowFloor, b + rv));
    if (tg < Infinity) {
      // stagger concurrent callers of the group: each denial takes the next guaranteed slot
      // Slots run at most one window ahead: past that they start again from the front, so a flood is
      // never told to wait more than tg + window, and callers past the horizon spread instead of meeting there.
      let at = now + tg;
      if (promise) {
        const nxt = st.promise + c * Tg;
        if (st.promise > now && nxt > at && nxt <= now + tg + cfg.windowUs) at = nxt;
        st.promise = at;
      }
      retry = at - now;
      // green in every respect but the global tokens: reserve them (cost > 1 only; one holder at a time)
      if (promise && rok && c > 1 && greenOk && rv === 0 && meta.gt < c - FS_EPS) {
        meta.rv = c;
        meta.rg = group;
        meta.re = at + Math.min(c * Tg, cfg.windowUs);
      }
    } else if (ty < Infinity) {
      retry = ty;
    } else {
      // the cost fits no bucket under the current shares: try again in a window
      retry = cfg.windowUs;
    }
    hint = Math.min(tg, ty);
    if (hint > retry) hint = retry;
    // the latest of the waits; the policy named is the one that waits longest (the global one on a tie)
    if (rwait > retry) {
      retry = rwait;
      policy = rbad;
    }
    if (rwait > hint) hint = rwait;
  }
  let ruleStatus: number[] | false = false;
  if (rules && rs) {
    if (allowed) rlSpend(rules, rs, c);
    ruleStatus = rlStatus(rules, rs, now);
    st.rulesUntil = rlKeep(rules, rs, now);
  }

  if (allowed && meta.rv > 0 && meta.rg === group) release(meta);

  // (8) headers
  let k1 = Math.floor(Math.min(st.tokMin, st.tokCap, meta.gt) + FS_EPS);
  if (k1 < 0) k1 = 0;
  let k2 = Math.floor(Math.min(st.tokCap - k1, meta.gt - k1 - rho) + FS_EPS);
  if (k2 < 0) k2 = 0;
  let reset = (bc - st.tokCap) * Tc;
  if (reset < 0) reset = 0;
  let limit = Math.floor(kappa * cfg.limit + 0.5);
  if (kappa === gamma) limit = Math.floor((st.w * cfg.limit) / meta.ws + 0.5);
  return {
    allowed, colour, remaining: k1 + k2, limit,
    guaranteed: Math.floor((st.w * cfg.limit) / meta.ws + FS_EPS),
    retryUs: retry, hintUs: hint, resetUs: reset, group, active: meta.gn,
    emptyUs: fsWait(meta.gt, T, 1, b),
    policy, rules: ruleStatus,
  };
}

/** Gives the state a fresh TTL once per epoch, on a fresh limiter and when a group was added (PEXPIRE in Lua). */
export function closeFairShare(fs: FairShare): void {
  if (fs.expire) fs.state.expiresAtMs = Math.floor(fs.clockUs / 1000) + fs.cfg.ttlMs;
}
