/**
 * A scheduler whose time moves only when the test says: `advance(ms)` runs the timers that fall due, one at a
 * time in order of due time (ties in the order they were set), and lets the promise chains each one starts
 * settle before the next, so a loop on it takes the same steps on every run, however loaded the machine.
 * Attach it with `withScheduler(options, scheduler)` (src/util/scheduler.ts).
 */
import { sleepOn, type CancelTimer, type Scheduler } from '../../src/util/scheduler';

interface Timer {
  readonly at: number;
  readonly seq: number;
  readonly callback: () => void;
}

/** More timers than this in one advance(): a loop spins at one instant (sleep(0) forever). */
const MAX_TIMERS_PER_ADVANCE = 10_000;

/** Lets promise chains (and real I/O already done) run: a few turns of the real event loop. */
export async function settle(turns = 5): Promise<void> {
  for (let i = 0; i < turns; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

export class ManualScheduler implements Scheduler {
  private time: number;
  private seq = 0;
  private timers: Timer[] = [];

  constructor(startMs = 1_800_000_000_000) {
    this.time = startMs;
  }

  now(): number {
    return this.time;
  }

  setTimeout(callback: () => void, ms: number): CancelTimer {
    const timer: Timer = { at: this.time + Math.max(0, ms), seq: this.seq++, callback };
    this.timers.push(timer);
    return () => {
      this.timers = this.timers.filter((t) => t !== timer);
    };
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return sleepOn((callback, delay) => this.setTimeout(callback, delay), ms, signal);
  }

  /** Timers set and not yet run or cancelled. */
  get pending(): number {
    return this.timers.length;
  }

  /** Delays (ms from now) of the pending timers, soonest first. */
  get pendingDelays(): number[] {
    return this.timers.map((t) => t.at - this.time).sort((a, b) => a - b);
  }

  /** Moves time forward by `ms`, running every timer due by then (also those set meanwhile), in order. */
  async advance(ms: number): Promise<void> {
    const target = this.time + ms;
    await settle();
    for (let fired = 0; ; fired++) {
      if (fired > MAX_TIMERS_PER_ADVANCE) throw new Error(`more than ${MAX_TIMERS_PER_ADVANCE} timers in one advance: a loop spins`);
      const next = this.nextDue(target);
      if (next === undefined) break;
      this.timers = this.timers.filter((t) => t !== next);
      this.time = Math.max(this.time, next.at);
      next.callback();
      await settle();
    }
    this.time = target;
  }

  /** Advances in steps of `stepMs` until `predicate` holds; fails after `maxMs` of scheduler time. */
  async until(what: string, predicate: () => boolean, maxMs = 60_000, stepMs = 1): Promise<void> {
    const deadline = this.time + maxMs;
    await settle();
    while (!predicate()) {
      if (this.time >= deadline) throw new Error(`${what}: not within ${maxMs} ms of scheduler time`);
      await this.advance(stepMs);
    }
  }

  private nextDue(target: number): Timer | undefined {
    let best: Timer | undefined;
    for (const t of this.timers) {
      if (t.at <= target && (best === undefined || t.at < best.at || (t.at === best.at && t.seq < best.seq))) best = t;
    }
    return best;
  }
}
