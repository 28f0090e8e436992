/**
 * Per-group rules: caps on top of the fair share, decided in the same call and all-or-nothing. The same code
 * as lua/includes/rules.lua, name for name (see there for the algorithms and the state each keeps).
 */

export type RuleAlgorithm = 'token-bucket' | 'sliding-window' | 'fixed-window';

/** A resolved rule (src/options.ts validates the user's and fills in burst and tag). */
export interface RuleSpec {
  readonly name: string;
  readonly limit: number;
  readonly windowMs: number;
  readonly algorithm: RuleAlgorithm;
  /** Token-bucket size (the others ignore it): max(1, ceil(limit / 20)). */
  readonly burst: number;
  /** Names the rule's state: a rule whose name, algorithm or window changes starts afresh. */
  readonly tag: number;
}

/** Sub-windows of a sliding-window rule: it may wait up to windowMs / RL_SLOTS longer than an exact log. */
export const RL_SLOTS = 10;
/** A sliding window's ring: the RL_SLOTS + 1 sub-windows a window touches, sub-window q at q % RL_RING. */
const RL_RING = RL_SLOTS + 1;
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
  readonly slotUs: number;
}

/** Rule state of one group: tag → values (see rules.lua). */
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
    return { tag: spec.tag, alg, limit: spec.limit, windowUs, burst: spec.burst, name: spec.name, T, slotUs };
  });
  return [out, spanMs];
}

/** Brings a rule's state to `now` (refill, roll windows): no units are spent. */
function rlState(r: RuleConfig, rs: RuleStates, now: number): number[] {
  let s = rs.get(r.tag);
  if (r.alg === RL_TOKEN) {
    if (!s) {
      s = [r.burst, now];
      rs.set(r.tag, s);
    }
    let t = s[0]! + (now - s[1]!) / r.T;
    if (t > r.burst) t = r.burst;
    s[0] = t;
    s[1] = now;
  } else if (r.alg === RL_SLIDING) {
    // [newest sub-window j, units in the window, the ring of counts from index 2]
    const j = Math.floor(now / r.slotUs);
    if (!s) {
      s = [j, 0];
      rs.set(r.tag, s);
    }
    const q = s[0]!;
    if (s.length === 2 || j - q >= RL_RING) {
      // new, or the whole window has passed
      for (let k = 2; k < 2 + RL_RING; k++) s[k] = 0;
      s[0] = j;
      s[1] = 0;
    } else if (j > q) {
      // sub-windows q + 1 .. j take the places of those leaving the window
      let used = s[1]!;
      for (let p = q + 1; p <= j; p++) {
        const k = 2 + (p % RL_RING);
        used -= s[k]!;
        s[k] = 0;
      }
      s[0] = j;
      s[1] = used;
    }
  } else {
    const w = Math.floor(now / r.windowUs);
    if (!s) {
      s = [w, 0];
      rs.set(r.tag, s);
    }
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
    // the oldest sub-windows leave the window one by one (sub-window j − RL_RING + d)
    for (let d = 1; d <= RL_RING; d++) {
      used -= s[2 + ((j + d) % RL_RING)]!;
      if (used + c <= r.limit) return (j + d) * r.slotUs - now;
    }
    return r.windowUs;
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
      const k = 2 + (s[0]! % RL_RING);
      s[1] = s[1]! + c;
      s[k] = s[k]! + c;
    } else s[1] = s[1]! + c;
  }
}

/** [remaining units, µs until the rule's quota is whole again] for one rule. */
function rlRemaining(r: RuleConfig, s: number[], now: number): [number, number] {
  if (r.alg === RL_TOKEN) {
    let left = Math.floor(s[0]! + 1e-9);
    if (left < 0) left = 0;
    return [left, (r.burst - s[0]!) * r.T];
  }
  if (r.alg === RL_SLIDING) {
    const used = s[1]!;
    if (used === 0) return [r.limit, 0];
    // the newest sub-window holding units leaves last (sub-window j − RL_RING + k)
    const j = s[0]!;
    let k = RL_RING;
    while (s[2 + ((j + k) % RL_RING)] === 0) k--;
    return [r.limit - used, (j + k) * r.slotUs - now];
  }
  if (s[1] === 0) return [r.limit, 0];
  return [r.limit - s[1]!, (s[0]! + 1) * r.windowUs - now];
}

/** remaining, reset µs, one pair per rule. */
export function rlStatus(rules: readonly RuleConfig[], rs: RuleStates, now: number): number[] {
  const out: number[] = [];
  for (const r of rules) out.push(...rlRemaining(r, rs.get(r.tag)!, now));
  return out;
}

/**
 * rl_pack's bookkeeping: keeps only these rules' state (what rl_pack writes) and returns until when it
 * matters (ms; trimming keeps the group until then).
 */
export function rlKeep(rules: readonly RuleConfig[], rs: RuleStates, now: number): number {
  let latest = 0;
  for (const r of rules) {
    const reset = rlRemaining(r, rs.get(r.tag)!, now)[1];
    if (reset > latest) latest = reset;
  }
  if (rs.size > rules.length) {
    const keep = new Set(rules.map((r) => r.tag));
    for (const tag of [...rs.keys()]) if (!keep.has(tag)) rs.delete(tag);
  }
  return Math.floor((now + latest) / 1000) + 1;
}
