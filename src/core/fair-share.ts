/**
 * The admission core (docs/algorithm.md §2; the steps in §2.3) over an in-memory state object: the same algorithm as
 * lua/includes/fair-share.lua, name for name, so the two are easy to compare (constants and state shapes in
 * ./fair-share-state.ts, group registration and trimming in ./fair-share-groups.ts, `decide` in
 * ./fair-share-decide.ts). Used by MemoryStore and the memory dispatcher. Shape: `openFairShare` (clock, refill,
 * epoch step, trim), `decide` any number of times, `closeFairShare` (bookkeeping that Redis does with PEXPIRE).
 */
import { fsTrim } from './fair-share-groups';
import { FS_COLD_US, FS_GRAD_BURST } from './constants.generated';
import {
  createFairShareState,
  fsClear,
  fsExpire,
  type FairShare,
  type ClassConfig,
  type FairShareConfig,
  type FairShareState,
  type MetaState,
  type ParkState,
} from './fair-share-state';
import { rlConfig } from './rules';
import { DEFAULT_CLASS, fscOpen } from './fair-share-class';
import { adApply, adConfig, adLoad } from './adaptive';
import { cfOpen } from './config-drift';
import type { LimiterSpec } from '../types';

// its types only: values are imported from the modules that define them (scripts/check-layers.js)
export type * from './fair-share-state';

/**
 * The longest span (ms) any rule state of the limiter needs, its own rules' and every plan's, 0 without plans:
 * fs_config's optional 10th number, so the keys outlive every rule state whichever lane's rules a call has (a
 * plan's lane has its plan's rules only: without the limiter's span, its TTL could be shorter than another lane's).
 */
export function plansSpanMs(spec: LimiterSpec): number {
  if (!spec.plans) return 0;
  let span = rlConfig(spec.rules)[1];
  for (const plan of spec.plans.values()) span = Math.max(span, rlConfig(plan.rules)[1]);
  return span;
}

/**
 * The same numbers fs_config derives from the config block. `claims`: the queue's config, whose class part names
 * every class (its jobs keep their class: fsClass).
 */
export function fairShareConfig(spec: LimiterSpec, className?: string, claims = false): FairShareConfig {
  const windowUs = spec.windowMs * 1000;
  const epochUs = spec.epochMs * 1000;
  const T = spec.sustained ? windowUs / spec.limit : windowUs / (spec.limit - spec.burst + 1);
  const [rules, spanMs] = rlConfig(spec.rules);
  return {
    limit: spec.limit,
    windowUs,
    burst: spec.burst,
    reserve: spec.reserve,
    idleMs: spec.idleMs,
    epochUs,
    maxGroups: spec.maxGroups,
    T,
    // a rule's state must outlive its window (and a rule's window may be longer than idleMs)
    ttlMs: Math.max(spec.idleMs, spanMs, plansSpanMs(spec)) + Math.floor((windowUs + epochUs) / 1000),
    probationMs: spec.probationMs,
    rules,
    cls: spec.classes ? classConfig(spec.classes, className ?? DEFAULT_CLASS, claims) : false,
    ad: adConfig(spec),
  };
}

function classConfig(classes: ReadonlyMap<string, number>, name: string, claims: boolean): ClassConfig {
  const cls = { name, share: classes.get(name) ?? 0 };
  if (!claims) return cls;
  return { ...cls, others: new Map([...classes].filter(([other]) => other !== name)) };
}

/** fs_open's ad_apply: the config as the limit in force (the state's, else the configured limit) sizes the bucket. */
export function adaptedConfig(cfg: FairShareConfig, state: FairShareState): FairShareConfig {
  if (!cfg.ad) return cfg;
  return { ...cfg, ...adApply(cfg.ad, cfg.windowUs, adLoad(state.adaptive, cfg.ad, 0).l) };
}

export function fsRefill(tokens: number, last: number, now: number, interval: number, size: number): number {
  const t = tokens + (now - last) / interval;
  return t > size ? size : t;
}

/** fs_release: the green reservation lapses or its holder was admitted. */
export function fsRelease(meta: MetaState): void {
  meta.rv = 0;
  meta.rg = '';
  meta.re = 0;
}

/**
 * fs_park_refill: the refill while units are reserved and not yet settled (./settle.ts): the bucket refills only to
 * burst − parked, and what that holds back (z, at most parked) comes back as the reservations settle or lapse.
 * Past the latest due every reservation has lapsed: all comes back and a new generation starts.
 */
function fsParkRefill(fs: FairShare, park: ParkState, now: number): void {
  const { meta } = fs;
  const burst = fs.cfg.burst;
  if (fs.nowMs >= park.due) {
    if (park.p > 0) meta.gt += Math.min(park.z, park.p);
    park.p = 0;
    park.z = 0;
    park.gen += 1;
  }
  let t = meta.gt + (now - meta.gl) / fs.cfg.T;
  if (t > burst) t = burst;
  const size = burst - park.p;
  if (t > size) {
    park.z = Math.min(park.z + t - size, park.p);
    t = size;
  }
  meta.gt = t;
}

/**
 * `peek` (peek.lua's fs_open(…, true)): `state` is only read, but for expiry (a lapsed state is dropped for
 * every caller, as Redis drops an expired key on any read: fsExpire). A limiter whose state lapsed or never was is
 * peeked at through an empty scratch state (what the check's clearing would leave); meta is a copy.
 */
export function openFairShare(state: FairShareState, configured: FairShareConfig, nowUsIn: number, peek = false): FairShare {
  let expire = false;
  // an abandoned limiter starts afresh, whoever calls (a peek too)
  fsExpire(state, Math.floor(nowUsIn / 1000));
  if (peek && !state.meta) {
    // the adaptive limit may outlive meta (a report made the hash): a peek reads it while the "key" lives
    const adaptive = state.adaptive;
    state = createFairShareState();
    state.adaptive = adaptive;
  }
  // the limit in force sizes the bucket from here on (fs_open's ad_apply)
  const cfg = adaptedConfig(configured, state);
  let meta = state.meta;
  if (!meta) {
    meta = {
      gt: cfg.burst,
      gl: nowUsIn,
      ws: 0,
      gn: 0,
      // 0 until the first epoch step: caps at the guarantees, and new ids register at once (fsGraduates)
      sh: 0,
      ep: nowUsIn,
      fc: 0,
      tr: Math.floor(nowUsIn / 1000),
      vt: 0,
      rv: 0,
      rg: '',
      re: 0,
      gb: FS_GRAD_BURST,
      gbl: nowUsIn,
    };
    // meta alone may have gone (eviction, in Redis): groups it no longer counts in Σw must not linger.
    fsClear(state);
    state.meta = meta;
    expire = true;
  } else if (peek) {
    meta = { ...meta };
  }
  // Never step back: a backward clock step must not refill the same interval twice. Time then stands still
  // (no epoch passes), but expiry runs on the real clock (like Redis TTLs): renew it on every such call.
  const steppedBack = nowUsIn < meta.gl;
  const now = steppedBack ? meta.gl : nowUsIn;
  const fs: FairShare = {
    cfg,
    state,
    meta,
    nowUs: now,
    nowMs: Math.floor(now / 1000),
    clockUs: nowUsIn,
    expire: expire || steppedBack,
    peek,
    gone: peek ? new Set() : undefined,
    park: peek && state.park ? { ...state.park } : state.park,
    cls: false,
    cf: '',
    ttlMs: 0,
  };
  if (cfg.cf !== undefined) fs.cf = cfOpen(fs, cfg.cf);
  if (fs.park) fsParkRefill(fs, fs.park, now);
  else meta.gt = fsRefill(meta.gt, meta.gl, now, cfg.T, cfg.burst);
  meta.gl = now;
  if (meta.rv > 0 && now >= meta.re) fsRelease(meta);
  // the class meter (fair-share-class.ts); a fresh limiter's clearing took it too
  if (cfg.cls) fs.cls = fscOpen(cfg, state.classes.get(cfg.cls.name), now);

  // (1) water level: one fixed-point step per epoch. A fresh limiter's first epoch (sh 0: its caps are the
  // guarantees, the level 1 / Σw) lasts at most FS_COLD_US from its first group: calls that register none and
  // count no demand (a dispatcher's or a worker's polls before the first request) do not start it.
  const cold = meta.sh === 0;
  const epochUs = cold && cfg.epochUs > FS_COLD_US ? FS_COLD_US : cfg.epochUs;
  if (cold && meta.gn === 0 && meta.fc === 0) {
    meta.ep = now;
  } else if (now - meta.ep >= epochUs) {
    const supply = (now - meta.ep) / cfg.T;
    let s = 1;
    if (meta.fc >= 1) s = cold ? supply / (meta.fc * meta.ws) : (meta.sh * supply) / meta.fc;
    // never below the smallest guarantee (1 with no group registered: 1 / 0 is Infinity)
    if (s < 1 / meta.ws) s = 1 / meta.ws;
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
 * fs_class: a claim decides each job in its own class; each class's config and meter are made once per call (the
 * meter read from the state) and closeFairShare writes every one back.
 */
export function fsClass(fs: FairShare, name: string, share: number): void {
  if (!fs.lanes) {
    fs.lanes = new Map();
    fs.baseCfg = fs.cfg;
  }
  let lane = fs.lanes.get(name);
  if (!lane) {
    const cfg: FairShareConfig = { ...fs.baseCfg!, cls: { name, share } };
    lane = { cfg, meter: fscOpen(cfg, fs.state.classes.get(name), fs.nowUs) };
    fs.lanes.set(name, lane);
  }
  fs.cfg = lane.cfg;
  fs.cls = lane.meter;
}

/** Gives the state a fresh TTL once per epoch, on a fresh limiter and when a group was added (PEXPIRE in Lua). */
export function closeFairShare(fs: FairShare): void {
  if (fs.lanes && !fs.peek) for (const [name, lane] of fs.lanes) fs.state.classes.set(name, lane.meter);
  else if (fs.cls && fs.cfg.cls && !fs.peek) fs.state.classes.set(fs.cfg.cls.name, fs.cls);
  // an override's rules may need their state kept longer (overrides.ts ovRead)
  if (fs.expire) fs.state.expiresAtMs = Math.floor(fs.clockUs / 1000) + Math.max(fs.cfg.ttlMs, fs.ttlMs);
}
