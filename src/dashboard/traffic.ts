/**
 * What the dashboard counts for one limiter, through the same `limiter.observe` hook as the Prometheus
 * metrics: per second for the last minute, the limiter's decisions, those of its busiest groups (a bounded
 * top-k, src/metrics/top-groups.ts: untrusted ids never grow it) and of every other group together, plus the
 * guaranteed share the store last answered for each busy group, and whether the breaker is open.
 */
import type { Limiter } from '../limiter/limiter';
import { TopGroups, outcomeOf } from '../metrics/top-groups';
import type { Decision } from '../types';
import { SecondRing, type Series } from './second-ring';

/** Seconds of history kept (and drawn). */
export const HISTORY_SECONDS = 60;
/** The busy set is re-ranked at most this often (each poll of the page asks). */
const RERANK_MS = 1000;

interface GroupTraffic {
  readonly ring: SecondRing;
  /** Units per window the store last guaranteed this group (−1: no store decision yet). */
  guaranteed: number;
}

export interface GroupSeries {
  readonly group: string;
  readonly guaranteed: number | null;
  readonly series: Series;
}

export class LimiterTraffic {
  private readonly groups: TopGroups<GroupTraffic>;
  private readonly all = new SecondRing(HISTORY_SECONDS);
  private readonly other = new SecondRing(HISTORY_SECONDS);
  private rankedAt = -Infinity;
  degraded = false;

  constructor(
    readonly limiter: Limiter,
    topGroups: number,
    private readonly clock: () => number = Date.now,
  ) {
    this.groups = new TopGroups<GroupTraffic>(topGroups, () => ({ ring: new SecondRing(HISTORY_SECONDS), guaranteed: -1 }));
    limiter.observe({ decision: (d, fallback) => this.count(d, fallback === undefined) });
    limiter
      .on('degraded', () => {
        this.degraded = true;
      })
      .on('recovered', () => {
        this.degraded = false;
      });
  }

  private count(d: Decision, fromStore: boolean): void {
    const second = Math.floor(this.clock() / 1000);
    const outcome = outcomeOf(d);
    this.all.add(second, outcome);
    const own = this.groups.add(d.group, outcome);
    if (own === undefined) {
      this.other.add(second, outcome);
      return;
    }
    own.ring.add(second, outcome);
    // An outage answer's share is the local fallback's, not the store's.
    if (fromStore) own.guaranteed = d.guaranteed;
  }

  /** The last HISTORY_SECONDS seconds, the current (partial) one last. */
  read(): { readonly second: number; readonly all: Series; readonly other: Series; readonly groups: GroupSeries[] } {
    const now = this.clock();
    if (now - this.rankedAt >= RERANK_MS) {
      this.groups.rebalance();
      this.rankedAt = now;
    }
    const second = Math.floor(now / 1000);
    const groups = this.groups.labelledGroups().map(([group, t]): GroupSeries => ({
      group,
      guaranteed: t.guaranteed < 0 ? null : t.guaranteed,
      series: t.ring.read(second),
    }));
    return { second, all: this.all.read(second), other: this.other.read(second), groups };
  }

  /** Groups and summary entries held (for the bound's test). */
  get size(): { readonly labelled: number; readonly candidates: number } {
    return this.groups.size;
  }
}
