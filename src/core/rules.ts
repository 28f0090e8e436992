/**
 * Per-group rules: caps on top of the fair share, decided in the same call and all-or-nothing. The same code
 * as lua/includes/rules.lua, name for name (see there for the algorithms and the state each keeps).
 */

import type { RuleAlgorithm, RuleSpec } from '../types';

import { RL_SLOTS } from './constants.generated';
/** The sub-windows a window touches: the newest and the RL_SLOTS before it. */
const RL_RING = RL_SLOTS + 1;
/** A sliding window's mark: used · RL_MARK + k (k ≤ RL_RING < RL_MARK). */
const RL_MARK = 16;
/** The largest rule limit: a sliding window's mark (limit · RL_MARK + k) stays an exact integer in a reply. */
export const RULE_LIMIT_MAX = 2 ** 48;
const RL_TOKEN = 1;
const RL_SLIDING = 2;
const RL_FIXED = 3;
export const RULE_ALGORITHM_CODES: Readonly<Record<RuleAlgorithm, number>> = {
  'token-bucket': RL_TOKEN,
  'sliding-window': RL_SLIDING,
  'fixed-window': RL_FIXED,
};

export interface RuleConfig {
  readonly tag: number;
  readonly alg: number;
  readonly limit: number;
  readonly windowUs: number;
  readonly burst: number;
  readonly name: string;
  readonly T: number;
  /** Token bucket: T in ns (a reply's mark is ns until the bucket is full). */
  readonly Tns: number;
  readonly slotUs: number;
}

/**
 * Rule state of one group: tag → values (rules.lua's, with a sliding window's past as numbers): token-bucket
 * [tokens, last µs], sliding-window [j, used, cur, past (RL_SLOTS counts, sub-window q at 3 + q % RL_SLOTS)],
 * fixed-window [window index, count].
 */
export type RuleStates = Map<number, number[]>;

/** FNV-1a (32 bits) of name, algorithm and window: the rule's tag. */
export function ruleTag(name: string, algorithm: RuleAlgorithm, windowMs: number): number {
  let h = 0x811c9dc5;
  for (const ch of `${name}/${algorithm}/${windowMs}`) {
    h ^= ch.charCodeAt(0);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/** The config block's rules: ';' and a JSON array of 5 numbers per rule (scripts.ts appends it to fs_config's 8 numbers). */
export function rulesConfigText(rules: readonly RuleSpec[] | undefined): string {
  if (!rules) return '';
  if (rules.length === 0) return '';
  return `;[${rules.map((r) => `${r.tag},${RULE_ALGORITHM_CODES[r.algorithm]},${r.limit},${r.windowMs},${r.burst}`).join(',')}]`;
}

/** rl_config: the rules and how long (ms) their state must outlive its last use. */
export function rlConfig(rules: readonly RuleSpec[] | undefined): [RuleConfig[] | false, number] {
  if (!rules || rules.length === 0) return [false, 0];
  let spanMs = 0;
  const out = rules.map((spec): RuleConfig => {
    const alg = RULE_ALGORITHM_CODES[spec.algorithm];
    const windowUs = spec.windowMs * 1000;
    let span = spec.windowMs;
    let T = 0;
    let slotUs = 0;
    if (alg === RL_TOKEN) T = windowUs / (spec.limit - spec.burst + 1);
    else if (alg === RL_SLIDING) {
      slotUs = windowUs / RL_SLOTS;
      span += Math.ceil(span / RL_SLOTS);
    }
    if (span > spanMs) spanMs = span;
    return { tag: spec.tag, alg, limit: spec.limit, windowUs, burst: spec.burst, name: spec.name, T, Tns: T * 1000, slotUs };
  });
  return [out, spanMs];
}

/** Brings a rule's state to `now` (refill, roll windows): no units are spent. */
function rlState(r: RuleConfig, rs: RuleStates, now: number): number[] {
  let s = rs.get(r.tag);
  if (!s) {
    // new: a full bucket, an empty window
    s = r.alg === RL_SLIDING ? new Array<number>(3 + RL_SLOTS).fill(0) : r.alg === RL_TOKEN ? [r.burst, now] : [0, 0];
    rs.set(r.tag, s);
  }
  if (r.alg === RL_TOKEN) {
    let tok = s[0]! + (now - s[1]!) / r.T;
    if (tok > r.burst) tok = r.burst;
    s[0] = tok;
    s[1] = now;
  } else if (r.alg === RL_SLIDING) {
    const j = Math.floor(now / r.slotUs);
    const q = s[0]!;
    if (j > q) {
      let used = s[1]!;
      if (used > 0 && j - q < RL_RING) {
        // sub-windows q .. j − 1 join the past, in the places of those leaving the window
        let k = 3 + (q % RL_SLOTS);
        used -= s[k]!;
        s[k] = s[2]!;
        for (let p = q + 1; p <= j - 1; p++) {
          k = 3 + (p % RL_SLOTS);
          used -= s[k]!;
          s[k] = 0;
        }
      } else {
        // empty, or the whole window has passed
        used = 0;
        s.fill(0, 3);
      }
      s[0] = j;
      s[1] = used;
      s[2] = 0;
    }
  } else {
    const w = Math.floor(now / r.windowUs);
    if (s[0] !== w) {
      s[0] = w;
      s[1] = 0;
    }
  }
  return s;
}

/** Time until rule r admits c units (µs; 0 = now). */
function rlWait(r: RuleConfig, s: number[], now: number, c: number): number {
  if (r.alg === RL_TOKEN) {
    if (s[0]! >= c - 1e-9) return 0;
    return (c - s[0]!) * r.T;
  }
  if (r.alg === RL_SLIDING) {
    const j = s[0]!;
    let used = s[1]!;
    if (used + c <= r.limit) return 0;
    // the oldest sub-windows leave the window one by one: sub-window j − RL_RING + d at (j + d) · slot
    for (let d = 1; d <= RL_SLOTS; d++) {
      used -= s[3 + ((j + d - 1) % RL_SLOTS)]!;
      if (used + c <= r.limit) return (j + d) * r.slotUs - now;
    }
    // then sub-window j itself
    return (j + RL_RING) * r.slotUs - now;
  }
  if (s[1]! + c <= r.limit) return 0;
  return (s[0]! + 1) * r.windowUs - now;
}

/** [ok, wait µs, index]: index (1-based) is the violated rule with the longest wait, the first on ties. */
export function rlCheck(rules: readonly RuleConfig[], rs: RuleStates, now: number, c: number): [boolean, number, number] {
  let ok = true;
  let wait = 0;
  let index = 0;
  for (let i = 0; i < rules.length; i++) {
    const r = rules[i]!;
    const t = rlWait(r, rlState(r, rs, now), now, c);
    if (t > 0) {
      ok = false;
      if (t > wait) {
        wait = t;
        index = i + 1;
      }
    }
  }
  return [ok, wait, index];
}

export function rlSpend(rules: readonly RuleConfig[], rs: RuleStates, c: number): void {
  for (const r of rules) {
    const s = rs.get(r.tag)!;
    if (r.alg === RL_TOKEN) s[0] = s[0]! - c;
    else if (r.alg === RL_SLIDING) {
      s[1] = s[1]! + c;
      s[2] = s[2]! + c;
    } else s[1] = s[1]! + c;
  }
}

/** A sliding window's k: its newest sub-window holding units leaves the window at (j + k) · slot (used > 0). */
function rlSlideK(s: readonly number[]): number {
  if (s[2]! > 0) return RL_RING;
  const j = s[0]!;
  let k = RL_SLOTS;
  // sub-window j − RL_RING + k
  while (k > 1 && s[3 + ((j + k - 1) % RL_SLOTS)] === 0) k--;
  return k;
}

/**
 * Each rule's mark, as a reply carries it (rl_reply_decision; a reply's numbers are whole: Redis truncates):
 * token-bucket ns until the bucket is full, sliding-window used · RL_MARK + k (0 when empty), fixed-window the
 * count; −1 (an idempotent duplicate's) says nothing was decided. ruleStatusOf works out remaining and reset.
 */
export function rlMarks(rules: readonly RuleConfig[], rs: RuleStates): number[] {
  return rules.map((r) => {
    const s = rs.get(r.tag)!;
    if (r.alg === RL_TOKEN) return Math.trunc((r.burst - s[0]!) * r.Tns);
    if (r.alg === RL_SLIDING) return s[1]! > 0 ? s[1]! * RL_MARK + rlSlideK(s) : 0;
    return s[1]!;
  });
}

/**
 * What a rule's mark says at `nowUs` (the decision's time): units left under it, and µs until it is whole again.
 * Both stores derive a decision's rule fields here, so they agree by construction. A token bucket's mark is
 * whole ns: `remaining` can read one unit high only while the next unit is less than 1 ns away.
 */
export function ruleStatusOf(rule: RuleSpec, mark: number, nowUs: number): { remaining: number; resetUs: number } {
  if (mark < 0) return { remaining: 0, resetUs: 0 };
  const windowUs = rule.windowMs * 1000;
  if (rule.algorithm === 'token-bucket') {
    const Tns = (windowUs / (rule.limit - rule.burst + 1)) * 1000;
    const left = Math.floor(rule.burst - mark / Tns + 1e-9);
    return { remaining: left < 0 ? 0 : left, resetUs: mark / 1000 };
  }
  if (mark === 0) return { remaining: rule.limit, resetUs: 0 };
  if (rule.algorithm === 'sliding-window') {
    const slotUs = windowUs / RL_SLOTS;
    const k = mark % RL_MARK;
    return { remaining: rule.limit - (mark - k) / RL_MARK, resetUs: (Math.floor(nowUs / slotUs) + k) * slotUs - nowUs };
  }
  return { remaining: rule.limit - mark, resetUs: (Math.floor(nowUs / windowUs) + 1) * windowUs - nowUs };
}

/**
 * rl_values' bookkeeping: keeps only these rules' state (what rl_pack writes) and returns until when it
 * matters (ms; trimming keeps the group until then): the latest time a rule's quota is whole again.
 */
export function rlKeep(rules: readonly RuleConfig[], rs: RuleStates, now: number): number {
  // the latest time (µs) a rule's quota is whole again, at least now
  let latest = now;
  for (const r of rules) {
    const s = rs.get(r.tag)!;
    let at = 0;
    if (r.alg === RL_TOKEN) at = s[1]! + (r.burst - s[0]!) * r.T;
    else if (s[1] === 0) at = 0;
    else if (r.alg === RL_FIXED) at = (s[0]! + 1) * r.windowUs;
    else at = (s[0]! + rlSlideK(s)) * r.slotUs;
    if (at > latest) latest = at;
  }
  if (rs.size > rules.length) {
    const keep = new Set(rules.map((r) => r.tag));
    for (const tag of [...rs.keys()]) if (!keep.has(tag)) rs.delete(tag);
  }
  return Math.floor(latest / 1000) + 1;
}

/**
 * rl_settle: a reservation of the group settled (./settle.ts): d = actual − cost units spent at t1 (µs) given back
 * (d < 0) or charged (d > 0) to each rule still in force. See lua/includes/rules.lua for what a refund means for
 * each algorithm (token bucket: only when the group made no check since t1; windows: while t1's (sub-)window is
 * still in the window) and how a debt is charged (now).
 */
export function rlSettle(rules: readonly RuleConfig[], rs: RuleStates, now: number, t1: number, d: number): void {
  // token buckets first, on the state as stored (its time tells whether the group checked since t1)
  for (const r of rules) {
    const s = rs.get(r.tag);
    if (r.alg === RL_TOKEN && d < 0 && s && s[1] === t1) s[0] = Math.min(r.burst, s[0]! - d);
  }
  // then every rule brought to now (refill, roll windows; a rule new here starts afresh, nothing to settle)
  const known = rules.map((r) => rs.has(r.tag));
  rlCheck(rules, rs, now, 0);
  rules.forEach((r, i) => {
    if (!known[i]) return;
    const s = rs.get(r.tag)!;
    if (d > 0) {
      if (r.alg === RL_TOKEN) s[0] = s[0]! - d;
      else if (r.alg === RL_SLIDING) {
        s[1] = s[1]! + d;
        s[2] = s[2]! + d;
      } else s[1] = s[1]! + d;
    } else if (r.alg === RL_SLIDING) {
      const j = s[0]!;
      const j1 = Math.floor(t1 / r.slotUs);
      if (j1 === j) {
        const back = Math.min(-d, s[2]!);
        s[1] = s[1]! - back;
        s[2] = s[2]! - back;
      } else if (j1 < j && j - j1 <= RL_SLOTS) {
        const k = 3 + (j1 % RL_SLOTS);
        const back = Math.min(-d, s[k]!);
        s[k] = s[k]! - back;
        s[1] = s[1]! - back;
      }
    } else if (r.alg === RL_FIXED) {
      if (Math.floor(t1 / r.windowUs) === s[0]) s[1] = s[1]! - Math.min(-d, s[1]!);
    }
  });
}
