/**
 * Decision counts per wall-clock second for the last `size` seconds: a fixed ring of three counters per
 * second, so counting is an index and an addition, and memory never grows.
 */
import type { OutcomeIndex } from '../metrics/top-groups';

/** Per second, oldest first: [allowed, denied, deferred]. */
export interface Series {
  readonly allowed: number[];
  readonly denied: number[];
  readonly deferred: number[];
}

export class SecondRing {
  private readonly counts: Float64Array;
  /** The second each slot holds (-1: none yet). */
  private readonly stamps: Float64Array;

  constructor(readonly size: number) {
    this.counts = new Float64Array(size * 3);
    this.stamps = new Float64Array(size).fill(-1);
  }

  add(second: number, outcome: OutcomeIndex): void {
    const slot = second % this.size;
    if (this.stamps[slot] !== second) {
      this.stamps[slot] = second;
      this.counts.fill(0, slot * 3, slot * 3 + 3);
    }
    this.counts[slot * 3 + outcome]! += 1;
  }

  /** The `size` seconds up to and including `second`. */
  read(second: number): Series {
    const series: Series = { allowed: [], denied: [], deferred: [] };
    for (let s = second - this.size + 1; s <= second; s++) {
      const slot = ((s % this.size) + this.size) % this.size;
      const held = this.stamps[slot] === s;
      series.allowed.push(held ? this.counts[slot * 3]! : 0);
      series.denied.push(held ? this.counts[slot * 3 + 1]! : 0);
      series.deferred.push(held ? this.counts[slot * 3 + 2]! : 0);
    }
    return series;
  }
}
