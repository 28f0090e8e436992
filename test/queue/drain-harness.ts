/**
 * A simulated drain: a backlog of jobs from weighted groups, live traffic through the same limiter, the
 * dispatcher called on an injected clock, and instant "workers" that start (claim) whatever the budget
 * allows after each step and complete it at once. Records every admission (live and job starts) with its
 * store time, so tests can check the window bound and per-group drain ratios. Store-agnostic: each store
 * supplies a DrainTarget.
 */
import type { ClaimedJob, DispatchOptions, DispatchResult, JobCounts, QueueStore } from '../../src/types';

export interface DrainTarget {
  enqueue(group: string, weight: number): Promise<void>;
  dispatch(options: DispatchOptions): Promise<DispatchResult>;
  /** The queue the instant workers claim from. */
  readonly queue: Pick<QueueStore, 'claimMany' | 'complete'>;
  /** One live request; returns the store time when admitted, else undefined. */
  admitLive(group: string): Promise<number | undefined>;
  counts(): Promise<JobCounts>;
}

/**
 * Instant workers: claim until the budget refuses or ready is empty, completing each job at once (its
 * record dropped). Returns the jobs started and the last claim's wakeMs.
 */
export async function startWhatTheBudgetAllows(
  queue: Pick<QueueStore, 'claimMany' | 'complete'>,
): Promise<{ started: ClaimedJob[]; wakeMs: number }> {
  const started: ClaimedJob[] = [];
  for (;;) {
    const r = await queue.claimMany(60_000, 100);
    for (const c of r.claimed) {
      started.push(c);
      await queue.complete(c.id, c.token, undefined, 0);
    }
    if (r.wakeMs !== 0 || r.claimed.length === 0) return { started, wakeMs: r.wakeMs };
  }
}

export interface DrainReport {
  /** Store ms of every admitted unit, live and drained. */
  readonly admittedAt: number[];
  /** second index → group → jobs started in that second. */
  readonly perSecond: Map<number, Map<string, number>>;
  readonly liveAdmitted: number;
  readonly liveTried: number;
  readonly maxReady: number;
  readonly moved: number;
  readonly drainedAtMs: number;
  readonly dispatchCalls: number;
}

export interface DrainPlan {
  readonly groups: ReadonlyArray<{ readonly group: string; readonly weight: number; readonly jobs: number }>;
  readonly liveGroup: string;
  /** One live request every this many ms. */
  readonly liveEveryMs: number;
  readonly stepMs: number;
  readonly readyMax: number;
  readonly maxSimMs: number;
}

export async function runDrain(target: DrainTarget, plan: DrainPlan, clock: { now: number }): Promise<DrainReport> {
  const t0 = clock.now;
  for (const { group, weight, jobs } of plan.groups) {
    for (let i = 0; i < jobs; i += 500) {
      await Promise.all(Array.from({ length: Math.min(500, jobs - i) }, () => target.enqueue(group, weight)));
    }
  }
  const total = plan.groups.reduce((s, g) => s + g.jobs, 0);
  const admittedAt: number[] = [];
  const perSecond = new Map<number, Map<string, number>>();
  let liveAdmitted = 0;
  let liveTried = 0;
  let maxReady = 0;
  let moved = 0;
  let dispatchCalls = 0;
  let nextLive = t0;
  const options = { readyMax: plan.readyMax, moveMax: 100, promoteMax: 1000, scanMax: 200 };
  while (moved < total && clock.now - t0 < plan.maxSimMs) {
    if (clock.now >= nextLive) {
      nextLive += plan.liveEveryMs;
      liveTried += 1;
      const at = await target.admitLive(plan.liveGroup);
      if (at !== undefined) {
        liveAdmitted += 1;
        admittedAt.push(at);
      }
    }
    for (let i = 0; i < 10; i++) {
      const r = await target.dispatch(options);
      dispatchCalls += 1;
      if (r.wakeMs !== 0) break;
    }
    maxReady = Math.max(maxReady, (await target.counts()).ready);
    const { started } = await startWhatTheBudgetAllows(target.queue);
    const second = Math.floor((clock.now - t0) / 1000);
    const row = perSecond.get(second) ?? new Map<string, number>();
    perSecond.set(second, row);
    for (const { group } of started) {
      admittedAt.push(clock.now);
      row.set(group, (row.get(group) ?? 0) + 1);
    }
    moved += started.length;
    clock.now += plan.stepMs;
  }
  return { admittedAt, perSecond, liveAdmitted, liveTried, maxReady, moved, drainedAtMs: clock.now - t0, dispatchCalls };
}

/** Most admissions in any window [x, x + windowMs). */
export function maxInWindow(times: number[], windowMs: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let best = 0;
  let lo = 0;
  for (let hi = 0; hi < sorted.length; hi++) {
    while (sorted[hi]! - sorted[lo]! >= windowMs) lo += 1;
    best = Math.max(best, hi - lo + 1);
  }
  return best;
}

/** A weighted backlog: 20,000 jobs from 5 groups with weights 1,1,2,1,1, next to a live group every 10 ms. */
export const WEIGHTED_BACKLOG_PLAN: DrainPlan = {
  groups: [
    { group: 'A', weight: 1, jobs: 4000 },
    { group: 'B', weight: 1, jobs: 4000 },
    { group: 'C', weight: 2, jobs: 4000 },
    { group: 'D', weight: 1, jobs: 4000 },
    { group: 'E', weight: 1, jobs: 4000 },
  ],
  liveGroup: 'live',
  liveEveryMs: 10,
  stepMs: 10,
  readyMax: 300,
  maxSimMs: 60_000,
};

/** A live request of `group` through the store's admission: its store time when allowed. */
export const admitLiveWith =
  (store: { admit(input: { group: string; weight: number; cost: number }): Promise<{ allowed: boolean; at: number }> }) =>
  async (group: string): Promise<number | undefined> => {
    const d = await store.admit({ group, weight: 1, cost: 1 });
    return d.allowed ? d.at : undefined;
  };
