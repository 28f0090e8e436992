/**
 * The admission core's constants and state shapes, shared by src/core/fair-share.ts and fair-share-decide.ts
 * (the decisions) and src/core/fair-share-groups.ts (registering, trimming and probation of groups).
 */
import type { AdaptiveConfig, AdaptiveState } from './adaptive';
import type { RuleConfig, RuleStates } from './rules';

// Shared with the scripts: lua/includes/constants.lua says what each is; the build generates them. Import them
// from ./constants.generated itself: a re-export compiles to a getter, called on every use in the hot path.
import { FS_NEWCOMERS, FS_OVERFLOW } from './constants.generated';
/** The shared group every new group joins once `maxGroups` groups are active (weight 1). */
export const OVERFLOW_GROUP = FS_OVERFLOW;
/**
 * The shared group of group ids on probation (weight 1): a new id is decided as this group until it comes back
 * `probationMs` after it was first seen, so a flood of new ids (free identities) cannot dilute the groups
 * already there. Decisions still name the caller's group.
 */
export const NEWCOMERS_GROUP = FS_NEWCOMERS;
/** Used when a spec carries no `maxGroups`. */
export const DEFAULT_MAX_GROUPS = 10_000;

/** A LimiterSpec that may carry maxGroups and probationMs (src/limiter/options.ts puts them there; absent: none). */

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
  /** The adaptive limit (./adaptive.ts; false: the configured limit always). */
  readonly ad: AdaptiveConfig | false;
  /** The class this config decides in (./fair-share-class.ts; false: the limiter has no classes). */
  readonly cls: ClassConfig | false;
  /** The limiter's fingerprint (./config-drift.ts): an admission's config carries it; absent: not checked. */
  readonly cf?: string;
}

/** A class of a config (fsc_config): its name and share of the limit. */
export interface ClassConfig {
  readonly name: string;
  readonly share: number;
  /** A claim's config (the queue's): every other class and its share, for jobs of another class (fsClass). */
  readonly others?: ReadonlyMap<string, number>;
}

/** A class meter (fair-share-class.lua's FSC_PACK): tokens, last refill µs. */
export interface ClassState {
  ct: number;
  cl: number;
}

export interface MetaState {
  gt: number;
  gl: number;
  ws: number;
  gn: number;
  sh: number;
  ep: number;
  fc: number;
  tr: number;
  /** SFQ virtual time (the dispatcher's); kept here, unused by admission. */
  vt: number;
  /** Green reservation (see fair-share.lua): units held (0 = none), the holder, when it lapses (µs). */
  rv: number;
  rg: string;
  re: number;
  /** Graduation budget: tokens and their last refill (µs). */
  gb: number;
  gbl: number;
}

export interface GroupState {
  tokMin: number;
  tokCap: number;
  tokDem: number;
  last: number;
  w: number;
  ftag: number;
  seen: number;
  promise: number;
  /** Within-share meter (FS_WITHIN): refills at the guaranteed rate, spent by every arrival. */
  tokW: number;
  /** Flood meter (FS_FLOOD): filled by arrivals, drained at twice the cap rate; at least half full, the group floods. */
  flood: number;
  /** Rule state (rules.ts), once a decision with rules was made; until (ms) it matters: trimming keeps the group. */
  rs?: RuleStates;
  rulesUntil?: number;
}

/**
 * The rule state of an id on probation (fs_sighted's record, in Redis the groups hash field FS_SIGHTED + id): its
 * share is the newcomers', its rules are its own. It lives and dies with the id's sighting.
 */
export type SightedRecord = Pick<GroupState, 'rs' | 'rulesUntil'>;

/** The stored fingerprint (./config-drift.ts; Redis: the groups hash field CF_FIELD). */
export interface ConfigEntry {
  readonly fp: string;
  readonly atMs: number;
}

/** A published description (config-check.lua's CF_FIELD .. CF_FIELD object). */
export interface ConfigDescription {
  readonly atMs: number;
  readonly text: string;
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
  /** Ids on probation decided under rules → their rule record (only ids in `probation`). */
  sighted: Map<string, SightedRecord>;
  /** Class name → its meter (in Redis the groups hash field FSC_FIELD + name). */
  classes: Map<string, ClassState>;
  /**
   * When the "keys" lapse (ms): the clock's ms at the last PEXPIRE plus the TTL. The state is dropped once the
   * clock's ms is past it, as Redis expires a key (`now > when`, in whole ms).
   */
  expiresAtMs: number;
  /**
   * Units reserved and not yet settled (./settle.ts; in Redis the groups hash field FS_PARKED): the global bucket
   * refills to burst − p. Past `due` (ms, the latest reservation's) every one has lapsed: p is 0 again and a new
   * generation starts (records of an older one unpark nothing). Absent until the first reservation.
   */
  park?: ParkState | undefined;
  /** The adaptive limit's state (./adaptive.ts; Redis: the groups hash's field '\xfe'): it outlives meta, not expiry. */
  adaptive: AdaptiveState | undefined;
  /** The stored fingerprint (./config-drift.ts; Redis: the groups hash's field '\xfd'). */
  configEntry: ConfigEntry | undefined;
  /** Fingerprint → its published description (config-check.lua; Redis: the field '\xfd\xfd'). */
  described: Map<string, ConfigDescription>;
}

export interface ParkState {
  p: number;
  due: number;
  gen: number;
  /** The refill parking held back (at most p): it comes back as the reservations settle or lapse. */
  z: number;
}

export interface FairShare {
  /** The config decided under; a claim switches it to each job's class (fsClass). */
  cfg: FairShareConfig;
  readonly state: FairShareState;
  readonly meta: MetaState;
  readonly nowUs: number;
  readonly nowMs: number;
  /** The clock as read, before the never-step-back clamp: expiry runs on it, as Redis TTLs run on real time. */
  readonly clockUs: number;
  expire: boolean;
  /**
   * A peek (peek.lua): nothing is written to `state` (meta and each group are worked on as copies, nothing
   * is spent, registered, sighted or trimmed); `gone` names the groups a trim would have forgotten.
   */
  readonly peek: boolean;
  readonly gone: Set<string> | undefined;
  /** The parking state (state.park, a copy in a peek); undefined until a reservation makes one (stPark). */
  park: ParkState | undefined;
  /** The class meter of the config's class (false: no classes); written back by closeFairShare. */
  cls: ClassState | false;
  /** A claim's classes met so far (fsClass): each one's config and meter, all written back by closeFairShare. */
  lanes?: Map<string, { readonly cfg: FairShareConfig; readonly meter: ClassState }>;
  /** The config the claim opened with (before fsClass switched it). */
  baseCfg?: FairShareConfig;
  /** What the check saw of the stored fingerprint (cfOpen; '' without one to check). */
  cf: string;
  /** A TTL longer than the config's, for an override's rules (overrides.ts ovRead); 0: the config's. */
  ttlMs: number;
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
  /** With rules: each rule's mark (rules.ts rlMarks). */
  rules: number[] | false;
}

/**
 * Like a Redis key whose TTL ran out: once a call sees the limiter's state lapsed (`nowMs` past `expiresAtMs`),
 * it is gone for every later call, a peek's, a reset's or a config check's too (the expiry is Redis's, not the
 * caller's write), even one whose clock stepped back behind it.
 */
export function fsExpire(state: FairShareState, nowMs: number): void {
  if (nowMs <= state.expiresAtMs) return;
  // the adaptive limit dies with the "key" (it outlives meta otherwise)
  state.adaptive = undefined;
  if (state.meta !== undefined) {
    state.meta = undefined;
    fsClear(state);
  }
}

/** What lives beside meta in the limiter's groups hash (groups, sightings, classes, config drift), all gone. */
export function fsClear(state: FairShareState): void {
  state.groups.clear();
  state.seen.clear();
  state.probation.clear();
  state.sighted.clear();
  state.park = undefined;
  state.classes.clear();
  state.configEntry = undefined;
  state.described.clear();
}

export function createFairShareState(): FairShareState {
  return {
    meta: undefined,
    groups: new Map(),
    seen: new Map(),
    probation: new Map(),
    sighted: new Map(),
    classes: new Map(),
    expiresAtMs: 0,
    adaptive: undefined,
    configEntry: undefined,
    described: new Map(),
  };
}
