/**
 * Per-group decision counts with bounded label cardinality: at most `k` groups have series of their own, every
 * other group is counted under OTHER_GROUP. Group ids are untrusted, so the set is chosen by traffic, never
 * grown by new ids: between two scrapes a Misra–Gries summary (at most 4k entries) of one unlabelled decision in
 * eight finds the busiest unlabelled groups, and at the scrape one that sent more than the quietest labelled group
 * takes its place. Each series only grows; an evicted group's series ends (its later traffic counts as
 * OTHER_GROUP), so every counter stays monotonic. A labelled group may carry data of its own (`attach`): the
 * dashboard keeps its per-second history there, so it is bounded by the same k.
 */
import { OTHER_GROUP } from '../limiter/group-id';

/** A power of two. */
const SAMPLE_EVERY = 8;

/** Decision outcomes, in the order of the count arrays. */
export const OUTCOMES = ['allowed', 'denied', 'deferred'] as const;
export type OutcomeIndex = 0 | 1 | 2;

interface Labelled<T> {
  readonly counts: [number, number, number];
  /** Decisions since the last scrape: how busy it is now. */
  recent: number;
  readonly data: T;
}

/** Decision outcome: allowed, denied, or denied and deferred (a job holds its work). */
export const outcomeOf = (d: { readonly allowed: boolean; readonly job?: unknown }): OutcomeIndex => (d.allowed ? 0 : d.job === undefined ? 1 : 2);

export class TopGroups<T = undefined> {
  private readonly labelled = new Map<string, Labelled<T>>();
  private readonly other: [number, number, number] = [0, 0, 0];
  private readonly candidates = new Map<string, number>();
  private readonly maxCandidates: number;
  private ticks = 0;

  /** @param attach makes the data of a group that gets a series of its own */
  constructor(
    private readonly k: number,
    private readonly attach: () => T = () => undefined as T,
  ) {
    this.maxCandidates = Math.max(16, 4 * k);
  }

  /** Counts one decision; returns the group's data when it is labelled, undefined when it counts as OTHER_GROUP. */
  add(group: string, outcome: OutcomeIndex): T | undefined {
    const own = this.labelled.get(group);
    if (own !== undefined) {
      own.counts[outcome] += 1;
      own.recent += 1;
      return own.data;
    }
    if (this.labelled.size < this.k) {
      const counts: [number, number, number] = [0, 0, 0];
      counts[outcome] = 1;
      const data = this.attach();
      this.labelled.set(group, { counts, recent: 1, data });
      return data;
    }
    this.other[outcome] += 1;
    // The summary sees one decision in SAMPLE_EVERY: the busiest groups still stand out, at a fraction of the cost.
    if (this.k === 0 || (++this.ticks & (SAMPLE_EVERY - 1)) !== 0) return undefined;
    const seen = this.candidates.get(group);
    if (seen !== undefined) this.candidates.set(group, seen + 1);
    else if (this.candidates.size < this.maxCandidates) this.candidates.set(group, 1);
    else this.decrementAll();
    return undefined;
  }

  /** Misra–Gries: a new id in a full summary takes one from everyone (and is dropped itself). */
  private decrementAll(): void {
    for (const [group, count] of this.candidates) {
      if (count <= 1) this.candidates.delete(group);
      else this.candidates.set(group, count - 1);
    }
  }

  /** Swaps the busiest unlabelled groups in for quieter labelled ones; starts the next interval. */
  rebalance(): void {
    const ranked = [...this.candidates].sort((a, b) => b[1] - a[1]);
    for (const [group, count] of ranked) {
      let quietest: string | undefined;
      let least = Infinity;
      for (const [g, entry] of this.labelled) {
        if (entry.recent < least) {
          least = entry.recent;
          quietest = g;
        }
      }
      if (quietest === undefined || count <= least) break;
      this.labelled.delete(quietest);
      this.labelled.set(group, { counts: [0, 0, 0], recent: count, data: this.attach() });
    }
    this.candidates.clear();
    for (const entry of this.labelled.values()) entry.recent = 0;
  }

  /** The labelled groups and their data. */
  labelledGroups(): Array<[string, T]> {
    return [...this.labelled].map(([group, entry]) => [group, entry.data]);
  }

  /** Labelled groups and summary entries held now (bounded by k and 4k). */
  get size(): { readonly labelled: number; readonly candidates: number } {
    return { labelled: this.labelled.size, candidates: this.candidates.size };
  }

  /** Every series: [group, outcome, count], OTHER_GROUP last. */
  series(): Array<[string, string, number]> {
    const out: Array<[string, string, number]> = [];
    const push = (group: string, counts: readonly number[]): void => {
      counts.forEach((n, i) => {
        if (n > 0) out.push([group, OUTCOMES[i]!, n]);
      });
    };
    for (const [group, entry] of this.labelled) push(group, entry.counts);
    push(OTHER_GROUP, this.other);
    return out;
  }
}
