/**
 * Request concurrency: the same code as lua/includes/concurrency.lua, name for name, over an in-memory state
 * (the MemoryStore's). At most `cap` requests of a group in flight; a slot is a lease taken in the same decision
 * as the rate (decide's `busy`: a request over the cap spends nothing, a request the rate denies takes no slot)
 * that expires, and a release is idempotent.
 *
 * State, as the two Redis keys: `leases` ('<ms>-<seq>:<group>' → expiry ms) and `slots` (group → leases held;
 * the sequence in `seq`). Both "expire" (start afresh) lease ms + 1 s after the latest take, as PEXPIRE does.
 */
import { SortedSet } from './sorted-set';
import type { FairShare, FairShareResult } from './fair-share';
import { decide } from './fair-share-decide';

/** A slot's lease when the limiter names none (`concurrencyLeaseMs`). */
export const DEFAULT_LEASE_MS = 60_000;

/** CC_SWEEP: expired leases swept per check at most (lua/includes/constants.lua). */
import { CC_SWEEP } from './constants.generated';

export interface ConcurrencyState {
  leases: SortedSet;
  slots: Map<string, number>;
  seq: number;
  /** Clock ms after which both keys are gone (Redis: `now > expireAt`, on the clock, not the clamped store time). */
  expireAt: number;
  /** The clock at ccOpen, in ms: what PEXPIRE counts from. */
  clockMs: number;
  /** Set by a take in this call: ccClose renews the keys' TTL. */
  leaseMs: number;
}

/** A decision with its lease ('' = no slot) and the group's leases held after it. */
export type ConcurrencyResult = FairShareResult & { lease: string; held: number };

export const createConcurrencyState = (): ConcurrencyState => ({
  leases: new SortedSet(),
  slots: new Map(),
  seq: 0,
  expireAt: Infinity,
  clockMs: 0,
  leaseMs: 0,
});

/** The keys as a script at clock `clockMs` sees them (expired keys are gone). */
export function ccOpen(cc: ConcurrencyState, clockMs: number): ConcurrencyState {
  cc.clockMs = clockMs;
  cc.leaseMs = 0;
  if (clockMs > cc.expireAt) {
    cc.leases = new SortedSet();
    cc.slots = new Map();
    cc.seq = 0;
    cc.expireAt = Infinity;
  }
  return cc;
}

/** The group's slots held (the Lua reads it once per call and writes it back in cc_close; here it is in place). */
function ccHeld(cc: ConcurrencyState, group: string): number {
  return cc.slots.get(group) ?? 0;
}

/** One lease of `member` ends: its group's count goes down (the entry goes at 0). */
function ccDrop(cc: ConcurrencyState, member: string): void {
  const group = member.slice(member.indexOf(':') + 1);
  const n = ccHeld(cc, group) - 1;
  if (n <= 0) cc.slots.delete(group);
  else cc.slots.set(group, n);
}

/** Every check sweeps (cc_sweep skips what would find nothing: the checks of one script call share `now`). */
function ccSweep(cc: ConcurrencyState, nowMs: number): void {
  for (const { member } of cc.leases.rangeToScore(nowMs, CC_SWEEP)) {
    cc.leases.remove(member);
    ccDrop(cc, member);
  }
}

function ccTake(cc: ConcurrencyState, group: string, nowMs: number, leaseMs: number): string {
  cc.seq += 1;
  const member = `${nowMs}-${cc.seq}:${group}`;
  cc.leases.add(member, nowMs + leaseMs);
  cc.slots.set(group, ccHeld(cc, group) + 1);
  cc.leaseMs = leaseMs;
  return member;
}

export function ccDecide(
  fs: FairShare,
  cc: ConcurrencyState,
  group: string,
  weight: number,
  cost: number,
  cap: number,
  leaseMs: number,
  rules: FairShare['cfg']['rules'] = fs.cfg.rules,
): ConcurrencyResult {
  if (cap <= 0) return { ...decide(fs, group, weight, cost, true, rules), lease: '', held: 0 };
  ccSweep(cc, fs.nowMs);
  const held = ccHeld(cc, group);
  const r: ConcurrencyResult = { ...decide(fs, group, weight, cost, true, rules, held >= cap), lease: '', held };
  if (r.allowed) {
    r.lease = ccTake(cc, group, fs.nowMs, leaseMs);
    r.held = held + 1;
  }
  return r;
}

/** 1 released, 0 not held (released before, or expired and swept). */
export function ccRelease(cc: ConcurrencyState, member: string): 0 | 1 {
  if (!cc.leases.remove(member)) return 0;
  ccDrop(cc, member);
  return 1;
}

/** After a take: the keys' TTL (the Lua also writes the counts back here). */
export function ccClose(cc: ConcurrencyState): void {
  // every lease ends by now + leaseMs: the keys need not outlive the latest one (by a second, for clock slack)
  if (cc.leaseMs > 0) cc.expireAt = cc.clockMs + cc.leaseMs + 1000;
}
