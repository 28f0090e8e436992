/**
 * A random walk of checks, reservations and settlements on one store and an injected clock, and the honest bound
 * of reserve-then-settle measured on it (docs/settle.md "The bound"): for every window [x, x + windowMs), the
 * actual cost admitted in it minus (limit + the overages of the reservations admitted in it or settled in it).
 * `worst` ≤ 0 is the bound holding. Used by test/core/settle-bound.property.test.ts and the conformance suite.
 */
import type { LimiterSpec, LimiterStore } from '../../src/types';

export interface WalkStep {
  readonly dtMs: number;
  readonly group: string;
  readonly cost: number;
  /** The actual cost in % of the estimate; −1: never settled (it lapses and counts at its estimate). */
  readonly actualPct: number;
  /** A check without a reservation (its cost is its actual cost). */
  readonly plain: boolean;
  /** Settle the oldest reservation in flight before this step's check. */
  readonly settleFirst: boolean;
}

export interface Walk {
  readonly spec: LimiterSpec;
  /** Most reservations in flight at once (the oldest is settled to make room). */
  readonly inFlight: number;
  readonly steps: readonly WalkStep[];
}

interface Admitted {
  readonly at: number;
  actual: number;
  over: number;
  settledAt: number | undefined;
}

interface Flight {
  readonly reservation: string;
  readonly cost: number;
  readonly actual: number;
  readonly entry: Admitted;
}

export interface WalkResult {
  /** max over windows of (actual admitted − allowance); ≤ 0 when the bound holds. */
  readonly worst: number;
  readonly refunds: number;
  readonly debts: number;
  readonly admitted: number;
}

const T0 = 1_700_000_000_000;

export async function settleWalk(walk: Walk, make: (spec: LimiterSpec, clock: () => number) => LimiterStore): Promise<WalkResult> {
  let now = T0;
  const store = make(walk.spec, () => now);
  const log: Admitted[] = [];
  const flights: Flight[] = [];
  let refunds = 0;
  let debts = 0;
  const settleOldest = async (): Promise<void> => {
    const f = flights.shift()!;
    if (f.actual < 0) return; // never settled: it lapses, counted at its estimate
    const r = await store.settle!({ reservation: f.reservation, actual: f.actual });
    if (r.status !== 'settled') return; // lapsed before its settle: counted at its estimate
    f.entry.actual = f.actual;
    f.entry.over = Math.max(0, f.actual - f.cost);
    f.entry.settledAt = now;
    if (r.refunded > 0) refunds += 1;
    if (r.debt > 0) debts += 1;
  };
  try {
    for (const step of walk.steps) {
      now += step.dtMs;
      if (flights.length > 0 && (step.settleFirst || flights.length >= walk.inFlight)) await settleOldest();
      const d = await store.admit({ group: step.group, weight: 1, cost: step.cost, ...(step.plain ? {} : { reserve: true }) });
      if (!d.allowed) continue;
      const entry: Admitted = { at: d.at, actual: step.cost, over: 0, settledAt: undefined };
      log.push(entry);
      if (!step.plain) {
        const actual = step.actualPct < 0 ? -1 : Math.round((step.cost * step.actualPct) / 100);
        flights.push({ reservation: d.reservation!, cost: step.cost, actual, entry });
      }
    }
    while (flights.length > 0) await settleOldest();
  } finally {
    await store.destroy();
  }
  const W = walk.spec.windowMs;
  const starts = [...log.map((a) => a.at), ...log.filter((a) => a.settledAt !== undefined).map((a) => a.settledAt! + 0.5)];
  let worst = -Infinity;
  for (const x of starts) {
    const inside = (t: number | undefined): boolean => t !== undefined && t >= x && t < x + W;
    let sum = 0;
    let allowance = walk.spec.limit;
    for (const a of log) {
      if (inside(a.at)) sum += a.actual;
      if (a.over > 0 && (inside(a.at) || inside(a.settledAt))) allowance += a.over;
    }
    worst = Math.max(worst, sum - allowance);
  }
  return { worst, refunds, debts, admitted: log.length };
}
