/**
 * `decide`: fs_decide of lua/includes/fair-share.lua, name for name (docs/algorithm.md §2.3). One request against
 * the state `openFairShare` (./fair-share.ts) opened: the group's shares, its meters refilled, its rules checked,
 * its colour, what a denial waits, and the numbers of the reply's headers.
 */
import { fsGroup, fsSighted } from './fair-share-groups';
import { FS_CAP_MIN, FS_EPS, FS_FLOOD, FS_GREEN_MIN, FS_WITHIN } from './constants.generated';
import { NEWCOMERS_GROUP, OVERFLOW_GROUP, type FairShare, type FairShareResult } from './fair-share-state';
import { fsRefill, fsRelease } from './fair-share';
import { fscBelow, fscLendFloor, fscSpend, fscWithin } from './fair-share-class';
import { rlCheck, rlKeep, rlMarks, rlSpend, type RuleConfig, type RuleStates } from './rules';

/** Time until `need` tokens exist (µs); infinite when the bucket can never hold them. */
function fsWait(tokens: number, interval: number, need: number, size: number): number {
  if (tokens >= need - FS_EPS) return 0;
  if (need > size + FS_EPS) return Infinity;
  return (need - tokens) * interval;
}

export function decide(
  fs: FairShare,
  groupIn: string,
  weight: number,
  cost: number,
  promise: boolean,
  rules: readonly RuleConfig[] | false = fs.cfg.rules,
  busy = false,
): FairShareResult {
  const { cfg, meta } = fs;
  const now = fs.nowUs;
  const [group, st, newcomer] = fsGroup(fs, groupIn, weight);
  const c = cost;
  const b = cfg.burst;
  const rho0 = cfg.reserve;
  const T = cfg.T;
  // the reserve: at least half the bucket, for a cost that still fits as yellow beside it (c + ρ0 ≤ b stays yellow)
  let rho = Math.floor(b / 2);
  if (rho > b - c) rho = b - c;
  if (rho < rho0) rho = rho0;

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
  if (bg < rho0) bg = rho0;
  if (bg < FS_GREEN_MIN) bg = FS_GREEN_MIN;
  if (c > 1 && bg < 2 * c) bg = 2 * c;
  if (bg > b) bg = b;
  let bc = b * kappa;
  if (bc < bg) bc = bg;
  if (bc < FS_CAP_MIN) bc = FS_CAP_MIN;
  const bw = bg > FS_WITHIN ? bg : FS_WITHIN;
  // another group's green reservation: its units are not ours to take
  const rv = meta.rv > 0 && meta.rg !== group ? meta.rv : 0;

  // (5) refill the group's meters to now (the global bucket was refilled in openFairShare)
  const dt = now - st.last;
  st.tokMin = fsRefill(st.tokMin, 0, dt, Tg, bg);
  st.tokCap = fsRefill(st.tokCap, 0, dt, Tc, bc);
  st.tokDem = fsRefill(st.tokDem, 0, dt, Tc, bc);
  st.tokW = fsRefill(st.tokW, 0, dt, Tg, bw);
  st.flood -= (2 * dt) / Tc;
  if (st.flood < 0) st.flood = 0;
  st.last = now;

  // (5b) rules: checked first, spent only if everything admits (rules.ts)
  let rok = true;
  let rwait = 0;
  let rbad = 0;
  let rs: RuleStates | undefined;
  // an id on probation: the newcomers' share, its own rule record (fsSighted)
  const rst = rules && newcomer !== undefined ? fsSighted(fs, newcomer) : st;
  if (rules) {
    rs = rst.rs ??= new Map();
    [rok, rwait, rbad] = rlCheck(rules, rs, now, c);
  }
  // a request over its concurrency cap spends nothing, like one a rule denies (./concurrency.ts)
  if (busy) rok = false;

  // (6) demand meter at the cap rate: min(arrivals, cap), whatever the share decides (not what a rule denies)
  if (rok && st.tokDem >= c - FS_EPS) {
    st.tokDem -= c;
    meta.fc += c;
  }
  // (6a) flood meter: arrivals the rules let through fill it, it drains at twice the cap rate. At least half full
  // (before this arrival), the group's arrivals run past twice its cap: it is always there when the bucket refills
  const flooding = st.flood >= FS_FLOOD / 2 - FS_EPS;
  if (rok) {
    st.flood += c;
    if (st.flood > FS_FLOOD) st.flood = FS_FLOOD;
  }
  // (6b) within-share meter at the guaranteed rate, spent by every arrival the rules let through: a group whose
  // arrivals run within its share keeps it at least a quarter full (priority inside the reserve); a flooder's is empty
  let within = false;
  if (rok && st.tokW >= c - FS_EPS) {
    st.tokW -= c;
    within = st.tokW >= bw / 4 - FS_EPS;
  }
  // arrivals below the cap rate: the group is below the water level. Half its demand meter is left; or its arrivals
  // still run near its share (its within-share meter is not empty: the cap is never below the share, and a bunch
  // of requests at once empties the small demand meter); or its class runs below its share (half the class meter is
  // left after this request). Or only its admissions are below the cap rate (it loses the race for yellow units to a
  // faster borrower: half its cap meter is left)
  const below = st.tokDem >= bc / 2 - FS_EPS || st.tokW >= bw / 16 - FS_EPS || fscBelow(fs, c);
  const lagging = st.tokCap - c >= bc / 2 - FS_EPS;
  const shared = group === NEWCOMERS_GROUP || group === OVERFLOW_GROUP;

  // (7) colour, cap first (RFC 2698 order); how far each kind may take the global bucket down (docs §2.4):
  // green within share 0, amber (yellow within share) ρ/4, green spending credit ρ/2. A flooder (arrivals past twice
  // its cap) borrows below the water level 5ρ/8, lagging behind its cap 7ρ/8, at its cap (ρ + b)/2; any other
  // borrower a step lower: ρ/2 below the level or lagging, 7ρ/8 at its cap (none below a green floor: borrowing never
  // comes before a guarantee; at ρ/2 it ties with the green of a group spending credit). A flooder is there whenever
  // the bucket refills; a borrower near its cap arrives at random moments and, held to the flooder's floors, loses
  // its share to it
  // a request within its class's guarantee: the class meter is its cap (./fair-share-class.ts; undefined: no classes)
  const cw = fscWithin(fs, c);
  const capOk = c <= bc + FS_EPS && (cw === true || st.tokCap >= c - FS_EPS);
  const greenOk = capOk && c <= bg + FS_EPS && st.tokMin >= c - FS_EPS;
  // (a cost > 1 keeps room to pass: c + floor ≤ b; the holder of the green reservation has its units)
  // the shared groups, the reservation's holder, and every group in a fresh limiter's first epoch (all are new, as
  // in '*new*': fsGraduates) take green down to 0
  let greenFloor = shared || (meta.rv > 0 && meta.rg === group) || meta.sh === 0 ? 0 : rho / 2;
  // within its share: the fuller its within-share meter, the further down (the meter's level is how far its arrivals
  // ran below its share). A borrower still within on the meter it started with drains it, and its floor climbs to ρ/3
  // (below a borrower's green, ρ/2) as the meter falls to a quarter: those furthest below their shares come first.
  // In whole units: a floor below one would keep a bucket holding exactly c from admitting at small limits
  if (within && greenFloor > 0) {
    let wUsed = (bw - st.tokW) / (bw - bw / 4);
    if (wUsed < 0) wUsed = 0;
    if (wUsed > 1) wUsed = 1;
    greenFloor = Math.floor((rho / 3) * wUsed);
  }
  if (greenFloor > b - c) greenFloor = b - c;
  if (rv > greenFloor) greenFloor = rv;
  // a flooder at its cap rate takes only from the upper half of the band above the reserve: the lower half goes
  // first to borrowers below theirs, and its cap meter keeps units for the top, which would otherwise overflow
  let atCap = (rho + b) / 2;
  if (atCap > b - c) atCap = b - c;
  if (atCap < rho) atCap = rho;
  let yellowFloor = atCap;
  if (within) yellowFloor = rho / 4;
  else if (!flooding) yellowFloor = below || lagging ? rho / 2 : (7 * rho) / 8;
  else if (below) yellowFloor = (5 * rho) / 8;
  else if (lagging) yellowFloor = (7 * rho) / 8;
  // a request of a class past its guarantee borrows: above every floor of the guaranteed requests
  if (cw === false) {
    const lend = fscLendFloor(rho, b, c, atCap);
    if (greenFloor < lend) greenFloor = lend;
    if (yellowFloor < lend) yellowFloor = lend;
  }
  if (rv > yellowFloor) yellowFloor = rv;
  let allowed = false;
  let colour: 0 | 1 | 2 = 2;
  let retry = 0;
  let hint = 0;
  let policy = 0;
  const globalGreen = greenOk && meta.gt >= c + greenFloor - FS_EPS;
  const globalYellow = capOk && !greenOk && meta.gt >= c + yellowFloor - FS_EPS;
  if (!rok && (globalGreen || globalYellow)) {
    // only a rule says no: its wait, nothing promised or reserved
    retry = rwait;
    hint = rwait;
    policy = rbad;
  } else if (globalGreen) {
    if (!fs.peek) {
      meta.gt -= c;
      st.tokMin -= c;
      st.tokCap -= c;
    }
    allowed = true;
    colour = 0;
  } else if (globalYellow) {
    if (!fs.peek) {
      meta.gt -= c;
      st.tokCap -= c;
    }
    allowed = true;
    colour = 1;
  } else {
    const wc = cw === true ? 0 : fsWait(st.tokCap, Tc, c, bc);
    // the global wait counts another group's reservation as spent (it is, once its holder is admitted)
    const tg = Math.max(wc, fsWait(st.tokMin, Tg, c, bg), fsWait(meta.gt, T, c + greenFloor, b + rv));
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
      if (promise && rok && c > 1 && greenOk && rv === 0 && meta.gt < c + greenFloor - FS_EPS) {
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
    if (allowed && !fs.peek) rlSpend(rules, rs, c);
    ruleStatus = rlMarks(rules, rs);
    rst.rulesUntil = rlKeep(rules, rs, now);
  }

  // the class meter pays for what its guarantee admitted (and the group's cap meter owes nothing past empty)
  if (allowed && cw === true && !fs.peek) {
    fscSpend(fs, c);
    if (st.tokCap < 0) st.tokCap = 0;
  }

  if (allowed && meta.rv > 0 && meta.rg === group) fsRelease(meta);

  // (8) headers
  let k1 = Math.floor(Math.min(st.tokMin, st.tokCap, meta.gt) + FS_EPS);
  if (k1 < 0) k1 = 0;
  let k2 = Math.floor(Math.min(st.tokCap - k1, meta.gt - k1 - yellowFloor) + FS_EPS);
  if (k2 < 0) k2 = 0;
  let reset = (bc - st.tokCap) * Tc;
  if (reset < 0) reset = 0;
  let limit = Math.floor(kappa * cfg.limit + 0.5);
  if (kappa === gamma) limit = Math.floor((st.w * cfg.limit) / meta.ws + 0.5);
  return {
    allowed,
    colour,
    remaining: k1 + k2,
    limit,
    guaranteed: Math.floor((st.w * cfg.limit) / meta.ws + FS_EPS),
    retryUs: retry,
    hintUs: hint,
    resetUs: reset,
    group,
    active: meta.gn,
    emptyUs: fsWait(meta.gt, T, 1, b),
    policy,
    rules: ruleStatus,
  };
}
