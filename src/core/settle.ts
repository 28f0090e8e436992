/**
 * Reserve, then settle (docs/settle.md): the same code as lua/includes/settle.lua, name for name (see there for
 * the keys, the record and the parking state). A check's cost is a reservation; settling it with the actual cost
 * gives the unused units back to every policy that spent them (the global bucket, the group's share meters, its
 * rules) or charges the overage to them as debt, at most once per reservation.
 */
import { fsGroup } from './fair-share-groups';
import { NEWCOMERS_GROUP, type FairShare, type ParkState } from './fair-share-state';
import { rlConfig, rlKeep, rlSettle, type RuleConfig } from './rules';
import type { LimiterSpec } from '../types';

/** A reservation's record (in Redis: struct.pack(ST_PACK, cost, at_us, colour, gen, due_ms) .. group). */
export interface ReservationRecord {
  readonly cost: number;
  readonly atUs: number;
  readonly colour: number;
  readonly gen: number;
  readonly due: number;
  readonly group: string;
  /** The override's rules the reservation spent (lua: recorded between ST_RULES bytes); undefined: the call's own. */
  readonly rules?: readonly RuleConfig[] | false;
}

/** One limiter's reservations (in Redis the `reservations` HASH and `due` ZSET, under the limiter's hash tag). */
export interface ReservationState {
  /** id → record, or ST_DONE once settled (until its due). */
  readonly records: Map<string, ReservationRecord | typeof ST_DONE>;
  /** id → due ms. */
  readonly due: Map<string, number>;
  seq: number;
  /** When the keys lapse (ms): the PEXPIRE of the last reservation, 2 · holdMs. */
  expiresAtMs: number;
}

export const ST_DONE = 'x';
/** Lapsed records forgotten per call at most. */
const ST_SWEEP = 10;

export type SettleStatus = 'settled' | 'settled-before' | 'unknown';

export function createReservationState(): ReservationState {
  return { records: new Map(), due: new Map(), seq: 0, expiresAtMs: 0 };
}

/** Like a Redis key whose TTL lapsed: the reservations of an abandoned limiter are forgotten (clock ms, as Redis). */
export function stOpen(rs: ReservationState, clockMs: number): ReservationState {
  if (rs.expiresAtMs > 0 && clockMs > rs.expiresAtMs) {
    rs.records.clear();
    rs.due.clear();
    rs.seq = 0;
    rs.expiresAtMs = 0;
  }
  return rs;
}

function stTouch(fs: FairShare, rs: ReservationState, holdMs: number): void {
  rs.expiresAtMs = Math.floor(fs.clockUs / 1000) + 2 * holdMs;
}

/** The parking state openFairShare read, or a new one (a new generation: no record on file can be of it). */
export function stPark(fs: FairShare): ParkState {
  if (!fs.park) {
    fs.park = { p: 0, due: 0, gen: fs.nowMs, z: 0 };
    if (!fs.peek) fs.state.park = fs.park;
  }
  return fs.park;
}

/**
 * A reservation of this generation ends (settled for `actual`, or lapsed at its estimate): its cost is unparked and
 * its part of the refill parking held back (at most what it really took) comes back. Returns that part.
 */
function stUnpark(park: ParkState, cost: number, actual: number): number {
  park.p -= cost;
  const z = Math.min(park.z, cost, actual);
  park.z -= z;
  // nothing parked: no refill is owed any more
  if (park.p <= 0) {
    park.p = 0;
    park.z = 0;
  }
  return z;
}

/** The global bucket after units came back: never above burst − parked. */
function stFit(fs: FairShare, park: ParkState): void {
  const size = fs.cfg.burst - park.p;
  if (fs.meta.gt > size) fs.meta.gt = size;
}

/**
 * ZRANGEBYSCORE due −inf now LIMIT 0 ST_SWEEP: by due, ties by id (ids are ASCII: code unit order is byte order).
 * `due` is in insertion order, which is due order (due = now + holdMs, and the store's time never steps back): the
 * page is read from its front, ties at the page's edge all read and sorted.
 */
export function stSweep(fs: FairShare, rs: ReservationState): void {
  const page: Array<[string, number]> = [];
  for (const entry of rs.due) {
    if (entry[1] > fs.nowMs || (page.length >= ST_SWEEP && entry[1] !== page[page.length - 1]![1])) break;
    page.push(entry);
  }
  const old = page.sort((a, b) => a[1] - b[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)).slice(0, ST_SWEEP);
  if (old.length === 0) return;
  const park = stPark(fs);
  for (const [id] of old) {
    const rec = rs.records.get(id);
    // lapsed: it counted at its estimate
    if (rec !== undefined && rec !== ST_DONE && rec.gen === park.gen) fs.meta.gt += stUnpark(park, rec.cost, rec.cost);
    rs.records.delete(id);
    rs.due.delete(id);
  }
  stFit(fs, park);
}

/** Records an admitted check (after decide); returns its id. */
export function stReserve(
  fs: FairShare,
  rs: ReservationState,
  group: string,
  cost: number,
  colour: number,
  holdMs: number,
  tail: string,
  rules?: readonly RuleConfig[] | false,
): string {
  rs.seq += 1;
  const id = `${fs.nowMs}-${rs.seq}${tail}`;
  const due = fs.nowMs + holdMs;
  const park = stPark(fs);
  rs.records.set(
    id,
    rules === undefined
      ? { cost, atUs: fs.nowUs, colour, gen: park.gen, due, group }
      : { cost, atUs: fs.nowUs, colour, gen: park.gen, due, group, rules },
  );
  rs.due.set(id, due);
  park.p += cost;
  if (due > park.due) park.due = due;
  stTouch(fs, rs, holdMs);
  return id;
}

/** The record's group: its share meters and (unless on probation) its rules get back or pay what the global did. */
function stGroup(fs: FairShare, group: string, colour: number, d: number, t1: number, rules: readonly RuleConfig[] | false): void {
  const found = fs.state.groups.get(group);
  if (!found) return;
  const [g, st] = fsGroup(fs, group, found.w);
  // the share meters: a refund adds, a debt takes (below zero: the group waits until they refill past it); the
  // next decision's refill caps them at their sizes
  st.tokCap -= d;
  if (colour === 0) st.tokMin -= d;
  if (rules && st.rs && g !== NEWCOMERS_GROUP) {
    rlSettle(rules, st.rs, fs.nowUs, t1, d);
    st.rulesUntil = rlKeep(rules, st.rs, fs.nowUs);
  }
}

/** [status, units given back to the global bucket, units charged as debt]. */
export function stSettle(
  fs: FairShare,
  rs: ReservationState,
  id: string,
  actual: number,
  rules: readonly RuleConfig[] | false,
): [SettleStatus, number, number] {
  const rec = rs.records.get(id);
  if (rec === undefined) return ['unknown', 0, 0];
  if (rec === ST_DONE) return ['settled-before', 0, 0];
  if (rec.due <= fs.nowMs) return ['unknown', 0, 0];
  // d > 0: the overage (debt), d < 0: the units to give back
  const d = actual - rec.cost;
  const park = stPark(fs);
  const meta = fs.meta;
  const before = meta.gt;
  meta.gt -= d;
  if (rec.gen === park.gen) meta.gt += stUnpark(park, rec.cost, actual);
  // (a record of a lapsed generation was unparked already: its refund may not fit)
  stFit(fs, park);
  // the override's rules the reservation spent, when it recorded them
  if (d !== 0) stGroup(fs, rec.group, rec.colour, d, rec.atUs, rec.rules === undefined ? rules : rec.rules);
  rs.records.set(id, ST_DONE);
  if (d < 0) return ['settled', Math.max(0, Math.min(-d, meta.gt - before)), 0];
  return ['settled', 0, d];
}

/**
 * How long a reservation can be settled (ms): the longest window the limiter or any of its plans' rules has (a
 * refund past it would give back units of a window that has passed). Past it the record is forgotten: the
 * reservation counted at its estimate and `settle` answers 'unknown'.
 */
export function reservationHoldMs(spec: LimiterSpec): number {
  let span = Math.max(spec.windowMs, rlConfig(spec.rules)[1]);
  for (const plan of spec.plans?.values() ?? []) span = Math.max(span, rlConfig(plan.rules)[1]);
  return span;
}

/** The plan a reservation id names ('<ms>-<seq>' then '.' and the plan, when the check had one). */
export function planOfReservation(id: string): string | undefined {
  const dot = id.indexOf('.');
  return dot < 0 ? undefined : id.slice(dot + 1);
}

/** The id's tail for a check of `plan`. */
export function reservationTail(plan: string | undefined): string {
  return plan === undefined ? '' : `.${plan}`;
}
