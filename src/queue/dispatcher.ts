/**
 * Dispatcher: moves deferred jobs to the ready list through the limiter's admission budget (one atomic
 * `dispatch()` per step) and returns jobs of crashed workers (expired leases) to the queue.
 *
 * Run one per process or as many as you like: a lease keeps one of them busy; the others stay idle and try
 * the lease again every sixth of `leaseMs`, so one takes over at most `leaseMs` × 7/6 (3.5 s by default) after
 * the busy one dies. Several busy at once (e.g. during a
 * network partition) are still correct, because every step is one atomic script; they only waste work.
 *
 * The loop sleeps exactly as long as `dispatch()` says (`wakeMs`): 0 → go on at once (after yielding to the
 * event loop), > 0 → that long, -1 (nothing waits) → `pollMs`. A full ready list is refilled as workers
 * empty it: the sleep starts at 5 ms and doubles while little room opens (at most min(pollMs, 100 ms)),
 * and claims by Workers of this process on the same limiter wake it once half a batch is free. It never
 * spins, and a failing store is reported through the `'error'` event and retried with backoff: it never throws.
 */
import { EventEmitter } from 'node:events';
import { randomUUID } from 'node:crypto';
import { refuseUnknownOptions, type OptionNames } from '../util/option-names';
import type { Logger } from '../types';
import { exponentialBackoff, type Backoff } from './backoff';
import { onClaimed } from './claim-signal';
import { schedulerOf, type Scheduler } from '../util/scheduler';
import { settlesWithin, Sleeper } from './sleeper';
import type { DispatchOptions, DispatchResult, QueueStore } from '../types';
import { requireQueue, type QueueHolder } from './validate';
import { integer, loggerOption } from '../util/validate';

export interface DispatcherOptions {
  /** The limiter whose deferred jobs this dispatcher moves. */
  readonly limiter: QueueHolder;
  /** @defaultValue 1000 — the ready list is never filled beyond this (backpressure towards workers). */
  readonly readyMax?: number;
  /** @defaultValue 500 — most jobs moved to ready per step. */
  readonly moveMax?: number;
  /** @defaultValue 1000 — most due jobs moved delayed → pending per step. */
  readonly promoteMax?: number;
  /** @defaultValue 1000 — most pending entries looked at per step. */
  readonly scanMax?: number;
  /**
   * @defaultValue 3000 — lifetime of the dispatcher lease; renewed every leaseMs/3, tried by spares every
   * leaseMs/6: a spare takes over within leaseMs × 7/6 of the busy one dying. A busy dispatcher whose event
   * loop stalls longer than this loses the lease (two busy for a moment: correct, only wasted work).
   */
  readonly leaseMs?: number;
  /** @defaultValue 1000 — sleep when nothing waits; also caps the (short, adaptive) sleep on a full ready list. */
  readonly pollMs?: number;
  /** @defaultValue 1000 — how often jobs with expired leases are returned to the queue. */
  readonly reclaimIntervalMs?: number;
  /**
   * @defaultValue 1 — a job whose lease expired more often than this goes to dead. Must be the same on every
   * Dispatcher and Worker of one limiter: both reclaim expired leases, so whichever gets there first decides.
   */
  readonly maxStalls?: number;
  /** @defaultValue console — where errors go when nobody listens to `'error'`. */
  readonly logger?: Logger;
}

const DISPATCHER_OPTIONS: OptionNames<DispatcherOptions> = {
  limiter: true,
  readyMax: true,
  moveMax: true,
  promoteMax: true,
  scanMax: true,
  leaseMs: true,
  pollMs: true,
  reclaimIntervalMs: true,
  maxStalls: true,
  logger: true,
};

/** The option names of `new Dispatcher()` (a typo is refused with a suggestion). */
export const DISPATCHER_OPTION_NAMES: readonly string[] = Object.freeze(Object.keys(DISPATCHER_OPTIONS));

export interface DispatcherEvents {
  /** After every step that moved or promoted something. */
  dispatched: [result: DispatchResult];
  /** Jobs whose lease expired were requeued (or sent to dead after too many stalls). */
  reclaimed: [result: { requeued: number; dead: number }];
  /** A store call failed; the dispatcher retries with backoff. */
  error: [error: unknown];
}

const RECLAIM_BATCH = 100;
/** Bounds of the sleep on a full ready list (see fullSleep). */
const FULL_SLEEP_MIN_MS = 5;
const FULL_SLEEP_MAX_MS = 100;

export class Dispatcher extends EventEmitter<DispatcherEvents> {
  /** Identifies this dispatcher in the lease. */
  readonly id = randomUUID();
  private readonly queue: QueueStore;
  private readonly batch: DispatchOptions;
  private readonly leaseMs: number;
  private readonly pollMs: number;
  private readonly reclaimIntervalMs: number;
  private readonly maxStalls: number;
  private readonly logger: Logger;
  /** Time and timers; a test attaches a manual one to the options (see src/util/scheduler.ts). */
  private readonly scheduler: Scheduler;
  private readonly sleeper: Sleeper;
  private readonly retryDelay: Backoff = exponentialBackoff({ baseMs: 100, capMs: 5000 });
  /** The current loop's identity: a loop left behind by a timed-out stop() sees it changed and ends. */
  private loopToken: object | undefined;
  private loop: Promise<void> | undefined;
  private unsubscribe: (() => void) | undefined;
  /** Claims of the ready list to wait for before refilling it (half a batch). */
  private readonly refillAt: number;
  private fullSleepMs = 0;
  /** Local claims counted since the last step found ready full; undefined while it was not full. */
  private claimedSinceFull: number | undefined;
  private leader = false;
  private leaseRenewedAt = 0;
  private reclaimedAt = 0;

  constructor(options: DispatcherOptions) {
    super();
    refuseUnknownOptions(options, DISPATCHER_OPTION_NAMES, 'new Dispatcher()');
    this.queue = requireQueue(options?.limiter);
    this.batch = {
      readyMax: integer('readyMax', options.readyMax, { fallback: 1000 }),
      moveMax: integer('moveMax', options.moveMax, { fallback: 500 }),
      promoteMax: integer('promoteMax', options.promoteMax, { fallback: 1000 }),
      scanMax: integer('scanMax', options.scanMax, { fallback: 1000 }),
    };
    this.leaseMs = integer('leaseMs', options.leaseMs, { fallback: 3000, min: 6 });
    this.pollMs = integer('pollMs', options.pollMs, { fallback: 1000 });
    this.reclaimIntervalMs = integer('reclaimIntervalMs', options.reclaimIntervalMs, { fallback: 1000 });
    this.maxStalls = integer('maxStalls', options.maxStalls, { fallback: 1, min: 0 });
    this.logger = loggerOption(options.logger);
    this.scheduler = schedulerOf(options);
    this.sleeper = new Sleeper(this.scheduler);
    this.refillAt = Math.max(1, Math.floor(Math.min(this.batch.moveMax, this.batch.readyMax) / 2));
  }

  /** True while this dispatcher holds the lease (the busy one). */
  get isLeader(): boolean {
    return this.leader;
  }

  /** Starts the loop; returns the dispatcher, so `new Dispatcher({...}).start()` keeps it. */
  start(): this {
    if (this.loopToken) return this;
    const token = {};
    this.loopToken = token;
    this.unsubscribe = onClaimed(this.queue, (n) => this.onLocalClaims(n));
    this.loop = this.run(token);
    return this;
  }

  /**
   * Stops after the current step, waiting for it at most `timeoutMs` (a store call may hang; the step left
   * behind ends on its own and does nothing more). The lease is not released: a spare takes over within
   * `leaseMs` × 7/6.
   */
  async stop(timeoutMs = 5000): Promise<void> {
    const loop = this.loop;
    this.loopToken = undefined;
    this.loop = undefined;
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    this.sleeper.wake();
    if (loop) await settlesWithin(loop, timeoutMs, this.scheduler);
    this.leader = false;
  }

  private async run(token: object): Promise<void> {
    let failures = 0;
    // Started before the client connects (a boot): wait for it, rather than report "not connected" errors.
    const connecting = this.queue.firstConnection?.();
    while (connecting && this.loopToken === token && !(await settlesWithin(connecting, this.pollMs, this.scheduler)));
    while (this.loopToken === token) {
      let sleepMs: number;
      try {
        sleepMs = await this.step();
        failures = 0;
      } catch (error) {
        failures += 1;
        this.leader = false; // re-take the lease before trusting it again
        if (this.loopToken === token) this.report(error);
        sleepMs = Math.max(10, this.retryDelay(failures));
      }
      if (this.loopToken === token) await this.sleeper.sleep(sleepMs);
    }
    if (this.loopToken === undefined) this.leader = false;
  }

  /** A local Worker claimed jobs: refill a full ready list once half a batch is free. */
  private onLocalClaims(n: number): void {
    if (this.claimedSinceFull === undefined) return;
    this.claimedSinceFull += n;
    if (this.claimedSinceFull >= this.refillAt) {
      this.claimedSinceFull = undefined;
      this.sleeper.wake();
    }
  }

  /**
   * The sleep on a full ready list. Workers may empty it within milliseconds, so a long poll would cap the
   * drain at readyMax per poll: start short, double while a step finds little room (slow or no workers),
   * back to the minimum when it found half a batch of room.
   */
  private fullSleep(moved: number): number {
    const cap = Math.min(this.pollMs, FULL_SLEEP_MAX_MS);
    this.fullSleepMs = moved >= this.refillAt || this.fullSleepMs === 0 ? FULL_SLEEP_MIN_MS : this.fullSleepMs * 2;
    return Math.min(cap, this.fullSleepMs);
  }

  /** One turn of the loop; returns how long to sleep. */
  private async step(): Promise<number> {
    const renewEveryMs = Math.floor(this.leaseMs / 3);
    const now = this.scheduler.now();
    if (!this.leader || now - this.leaseRenewedAt >= renewEveryMs) {
      this.leader = await this.queue.acquireDispatcherLease(this.id, this.leaseMs);
      // A spare: try again soon, so it takes over within a sixth of a lease after the busy one's ran out.
      if (!this.leader) return Math.floor(this.leaseMs / 6);
      this.leaseRenewedAt = now;
    }
    if (now - this.reclaimedAt >= this.reclaimIntervalMs) {
      this.reclaimedAt = now;
      const reclaimed = await this.queue.reclaimExpired(this.maxStalls, RECLAIM_BATCH);
      if (reclaimed.requeued + reclaimed.dead > 0) this.emit('reclaimed', reclaimed);
    }
    const result = await this.queue.dispatch(this.batch);
    if (result.moved + result.promoted > 0) this.emit('dispatched', result);
    let wantMs: number;
    if (result.readyFull) {
      wantMs = this.fullSleep(result.moved);
      this.claimedSinceFull = 0;
    } else {
      this.fullSleepMs = 0;
      this.claimedSinceFull = undefined;
      wantMs = result.wakeMs < 0 ? this.pollMs : result.wakeMs;
    }
    // Wake in time to renew the lease and to reclaim, whatever dispatch() asked for.
    return Math.min(wantMs, renewEveryMs, this.reclaimIntervalMs);
  }

  private report(error: unknown): void {
    if (this.listenerCount('error') > 0) this.emit('error', error);
    else (this.logger.error ?? this.logger.warn).call(this.logger, `bulk-limiter dispatcher: ${String(error)}`);
  }
}
