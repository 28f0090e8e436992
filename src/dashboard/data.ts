/**
 * The dashboard's JSON (`GET <mount>/data`): what the page draws, read from the same counts as the metrics
 * (./traffic.ts) and from the store's queue (job counts, each busy group's jobs, the newest dead letters),
 * each store read bounded by the limiter's `timeoutMs` so a failing store leaves a gap, not a hung page.
 */
import type { Limiter } from '../limiter/limiter';
import { withTimeout } from '../util/store-call';
import type { GroupJobCounts, JobCounts, Override } from '../types';
import type { Series } from './second-ring';
import type { LimiterTraffic } from './traffic';

export type { Series } from './second-ring';

/** Dead letters shown per limiter (newest first). */
export const DEAD_SHOWN = 20;
/** Overrides listed per limiter (the first page, by group). */
export const OVERRIDES_SHOWN = 50;

/** `none`: no `authorize` option (read-only); `locked`: authorize said no for this request; `allowed`. */
export type ActionsState = 'none' | 'locked' | 'allowed';

export interface DashboardData {
  /** ms since the epoch; the last entry of every series is the second that holds it (still filling). */
  readonly now: number;
  readonly actions: ActionsState;
  readonly limiters: LimiterView[];
}

export interface LimiterView {
  readonly name: string;
  readonly limit: number;
  /** The limit in force: with `adaptive` the shared value read from the store (docs/adaptive.md), else `limit`. */
  readonly limitInForce: number;
  readonly windowMs: number;
  readonly burst: number;
  readonly sustained: boolean;
  /**
   * Requests (of cost 1) per second the limit admits under steady demand: (limit − burst + 1) × 1000 / windowMs
   * when strict (no window ever holds more than `limit`), limit × 1000 / windowMs with `sustained: true`.
   */
  readonly capacityPerSecond: number;
  /** The breaker is open: the store is skipped and `onStoreError` answers. */
  readonly degraded: boolean;
  /** Every decision of this process, per second. */
  readonly traffic: Series;
  /** Decisions of groups not among the busiest, per second. */
  readonly other: Series;
  /** The busiest groups that sent traffic in the last minute or have jobs, busiest first. */
  readonly groups: GroupView[];
  /** null when the store did not answer. */
  readonly jobs: JobCounts | null;
  readonly dead: DeadView[] | null;
  /** The first OVERRIDES_SHOWN overrides in force (limiter.listOverrides); null when the store did not answer. */
  readonly overrides: Override[] | null;
  /** The limiter's plan names (the override form's choices). */
  readonly plans: string[];
}

export interface GroupView {
  readonly group: string;
  /** From the `plan` option. */
  readonly plan?: string;
  /** Units per window the store guarantees the group (its fair share of the limit); null before a store decision. */
  readonly guaranteed: number | null;
  readonly traffic: Series;
  /** The group's waiting and running jobs; null when the store did not answer. */
  readonly jobs: GroupJobCounts | null;
}

export interface DeadView {
  readonly id: string;
  readonly type: string;
  readonly group: string;
  readonly attempts: number;
  /** Why it died: the last error. */
  readonly error?: string;
  readonly diedAt?: number;
}

export async function readLimiter(traffic: LimiterTraffic, plan: ((group: string) => string | undefined) | undefined): Promise<LimiterView> {
  const { limiter } = traffic;
  const { all, other, groups } = traffic.read();
  const [inForce, jobs, dead, overrides, groupJobs] = await Promise.all([
    limiter.limitInForce(),
    attempt(limiter, limiter.counts()),
    attempt(limiter, limiter.listDead(0, DEAD_SHOWN)),
    attempt(limiter, limiter.listOverrides({ count: OVERRIDES_SHOWN })),
    Promise.all(groups.map((g) => attempt(limiter, limiter.counts({ group: g.group })))),
  ]);
  const views = groups.map((g, i): GroupView & { readonly busy: number } => {
    const label = plan?.(g.group);
    return {
      group: g.group,
      ...(label === undefined ? {} : { plan: label }),
      guaranteed: g.guaranteed,
      traffic: g.series,
      jobs: groupJobs[i] ?? null,
      busy: sum(g.series),
    };
  });
  const shown = views
    .filter((v) => v.busy > 0 || (v.jobs !== null && v.jobs.waiting + v.jobs.active > 0))
    .sort((a, b) => b.busy - a.busy || (a.group < b.group ? -1 : 1))
    .map(({ busy: _busy, ...view }) => view);
  const { spec } = limiter;
  return {
    name: limiter.name,
    limit: spec.limit,
    limitInForce: inForce,
    windowMs: spec.windowMs,
    burst: spec.burst,
    sustained: spec.sustained,
    // the limit in force sizes the bucket (burst keeps its proportion of the limit: lua/includes/adaptive.lua)
    capacityPerSecond: capacityOf(
      spec.sustained,
      inForce,
      Math.max(1, Math.min(inForce, Math.floor((spec.burst * inForce) / spec.limit + 0.5))),
      spec.windowMs,
    ),
    degraded: traffic.degraded,
    traffic: all,
    other,
    groups: shown,
    jobs,
    dead:
      dead === null
        ? null
        : dead.map((j) => ({
            id: j.id,
            type: j.type,
            group: j.group,
            attempts: j.attempts,
            ...(j.error === undefined ? {} : { error: j.error }),
            ...(j.finishedAt === undefined ? {} : { diedAt: j.finishedAt }),
          })),
    overrides: overrides === null ? null : [...overrides.overrides],
    plans: spec.plans === undefined ? [] : [...spec.plans.keys()],
  };
}

/** Requests per second under steady demand: (limit − burst + 1) per window when strict, limit when sustained. */
function capacityOf(sustained: boolean, limit: number, burst: number, windowMs: number): number {
  return ((sustained ? limit : limit - burst + 1) * 1000) / windowMs;
}

function sum(series: Series): number {
  let n = 0;
  for (const key of ['allowed', 'denied', 'deferred'] as const) for (const v of series[key]) n += v;
  return n;
}

async function attempt<T>(limiter: Limiter, read: Promise<T>): Promise<T | null> {
  try {
    return await withTimeout(read, limiter.options.timeoutMs);
  } catch {
    return null;
  }
}
