/**
 * Dispatcher: moves deferred jobs to the ready list through the limiter's admission budget (one atomic
 * `dispatch()` per step) and returns jobs of crashed workers (expired leases) to the queue.
 *
 * Run one per process or as many as you like: a lease keeps one of them busy; the others stay idle and try
 * the lease again every `leaseMs`, taking over when the busy one dies. Several busy at once (e.g. during a
 * network partition) are still correct, because every step is one atomic script; they only waste work.
 *
 * The loop sleeps exactly as long as `dispatch()` says (`wakeMs`): 0 → go on at once (after yielding to the
 * event loop), > 0 → that long, -1 (nothing waits) or a full ready list → `pollMs`. It never spins, and a
 * failing store is reported through the `'error'` event and retried with backoff: it never throws.
 */
import { EventEmitter } from 'node:events';
import { randomUUID } from 'node:crypto';
import type { Logger } from '../types';
import { exponentialBackoff, type Backoff } from './backoff';
import { Sleeper } from './sleeper';
import type { DispatchOptions, DispatchResult, QueueStore } from './types';
import { intOption, loggerOption, requireQueue, type QueueHolder } from './validate';

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
  /** @defaultValue 10_000 — lifetime of the dispatcher lease; renewed every leaseMs/3. */
  readonly leaseMs?: number;
  /** @defaultValue 1000 — sleep when nothing waits or the ready list is full. */
  readonly pollMs?: number;
  /** @defaultValue 1000 — how often jobs with expired leases are returned to the queue. */
  readonly reclaimIntervalMs?: number;
  /** @defaultValue 1 — a job whose lease expired more often than this goes to dead. Use the Worker's value. */
  readonly maxStalls?: number;
  /** @defaultValue console — where errors go when nobody listens to `'error'`. */
  readonly logger?: Logger;
}

export interface DispatcherEvents {
  /** After every step that moved or promoted something. */
  dispatched: [result: DispatchResult];
  /** Jobs whose lease expired were requeued (or sent to dead after too many stalls). */
  reclaimed: [result: { requeued: number; dead: number }];
  /** A store call failed; the dispatcher retries with backoff. */
  error: [error: unknown];
}

const RECLAIM_BATCH = 100;

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
  private readonly sleeper = new Sleeper();
  private readonly retryDelay: Backoff = exponentialBackoff({ baseMs: 100, capMs: 5000 });
  private running = false;
  private loop: Promise<void> | undefined;
  private leader = false;
  private leaseRenewedAt = 0;
  private reclaimedAt = 0;

  constructor(options: DispatcherOptions) {
    super();
    this.queue = requireQueue(options?.limiter);
    this.batch = {
      readyMax: intOption('readyMax', options.readyMax, 1000),
      moveMax: intOption('moveMax', options.moveMax, 500),
      promoteMax: intOption('promoteMax', options.promoteMax, 1000),
      scanMax: intOption('scanMax', options.scanMax, 1000),
    };
    this.leaseMs = intOption('leaseMs', options.leaseMs, 10_000, 3);
    this.pollMs = intOption('pollMs', options.pollMs, 1000);
    this.reclaimIntervalMs = intOption('reclaimIntervalMs', options.reclaimIntervalMs, 1000);
    this.maxStalls = intOption('maxStalls', options.maxStalls, 1, 0);
    this.logger = loggerOption(options.logger);
  }

  /** True while this dispatcher holds the lease (the busy one). */
  get isLeader(): boolean {
    return this.leader;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  /** Stops after the current step. The lease is not released: a spare takes over within `leaseMs`. */
  async stop(): Promise<void> {
    this.running = false;
    this.sleeper.wake();
    await this.loop;
    this.loop = undefined;
    this.leader = false;
  }

  private async run(): Promise<void> {
    let failures = 0;
    while (this.running) {
      let sleepMs: number;
      try {
        sleepMs = await this.step();
        failures = 0;
      } catch (error) {
        failures += 1;
        this.leader = false; // re-take the lease before trusting it again
        this.report(error);
        sleepMs = Math.max(10, this.retryDelay(failures));
      }
      if (this.running) await this.sleeper.sleep(sleepMs);
    }
  }

  /** One turn of the loop; returns how long to sleep. */
  private async step(): Promise<number> {
    const renewEveryMs = Math.floor(this.leaseMs / 3);
    const now = Date.now();
    if (!this.leader || now - this.leaseRenewedAt >= renewEveryMs) {
      this.leader = await this.queue.acquireDispatcherLease(this.id, this.leaseMs);
      if (!this.leader) return this.leaseMs; // a spare: try again when the busy one's lease could have ended
      this.leaseRenewedAt = now;
    }
    if (now - this.reclaimedAt >= this.reclaimIntervalMs) {
      this.reclaimedAt = now;
      const reclaimed = await this.queue.reclaimExpired(this.maxStalls, RECLAIM_BATCH);
      if (reclaimed.requeued + reclaimed.dead > 0) this.emit('reclaimed', reclaimed);
    }
    const result = await this.queue.dispatch(this.batch);
    if (result.moved + result.promoted > 0) this.emit('dispatched', result);
    const wantMs = result.readyFull || result.wakeMs < 0 ? this.pollMs : result.wakeMs;
    // Wake in time to renew the lease and to reclaim, whatever dispatch() asked for.
    return Math.min(wantMs, renewEveryMs, this.reclaimIntervalMs);
  }

  private report(error: unknown): void {
    if (this.listenerCount('error') > 0) this.emit('error', error);
    else (this.logger.error ?? this.logger.warn).call(this.logger, `bulk-limiter dispatcher: ${String(error)}`);
  }
}
