/**
 * Worker: claims ready jobs under a lease and runs the handler registered for each job's type.
 *
 * Delivery is **at-least-once**. A job whose worker crashes, hangs past its lease or is closed past its
 * timeout is handed to another run, so a handler can run more than once for the same job (and a stale run
 * may still be finishing its side effects while the new one starts; its acknowledgement is then refused
 * by the fencing token). Make handlers idempotent, e.g. keyed by `job.id` or the request's idempotency key.
 *
 * A job spends the limiter's budget when it starts: a claim admits jobs through the same admission as live
 * requests, and when the budget refuses them it says when the next may start, so the worker sleeps exactly
 * that long (concurrent workers get slots one unit apart). When ready is empty, wake-ups come from the
 * store's `waitForReady` (a blocking read on Redis, a signal in memory), so a job made ready is started at
 * once, not at the next poll; `idleWaitMs` only bounds a missed wake-up.
 */
import { EventEmitter } from 'node:events';
import { exponentialBackoff } from './backoff';
import { reportClaimed } from './claim-signal';
import { JobRun, type RunOutcome } from './job-run';
import { settlesWithin, Sleeper } from './sleeper';
import type { ClaimedJob } from '../types';
import { resolveWorkerOptions, type JobTypes, type WorkerConfig, type WorkerJob, type WorkerOptions } from './worker-options';

export type { JobHandler, JobHandlers, JobTypes, WorkerJob, WorkerOptions } from './worker-options';
export { LeaseLostError, WorkerClosedError } from './job-run';

export interface WorkerEvents {
  /** A run of the job has started (`payload` is undefined when it is not valid JSON). */
  active: [job: WorkerJob];
  /** The handler resolved and the completion was acknowledged. */
  completed: [job: WorkerJob, result: unknown];
  /** The handler threw (not a snooze). Followed by `'retrying'` or `'dead'`. */
  failed: [job: WorkerJob, error: unknown];
  /** The job will run again after `delayMs`: after an error (`'error'`) or a snooze (`'snooze'`). */
  retrying: [job: WorkerJob, info: { kind: 'error' | 'snooze'; delayMs: number }];
  /** Too many attempts, snoozes or stalls: the job is a dead letter now (`limiter.listDead()`). */
  dead: [job: WorkerJob, error: unknown];
  /** A store call failed or a lease was lost. The worker goes on; it never throws from its loop. */
  error: [error: unknown, job?: WorkerJob];
}

const RECLAIM_BATCH = 100;

/** Runs jobs of the limiter's queue; `Jobs` (job type → payload type) types the handlers' payloads. */
export class Worker<Jobs extends JobTypes = Record<string, unknown>> extends EventEmitter<WorkerEvents> {
  private readonly config: WorkerConfig;
  private readonly runs = new Set<JobRun>();
  private readonly slotFreed: Sleeper;
  private readonly retrySleeper: Sleeper;
  /** Sleeps until the limiter's budget lets the next job start (the claim says when). */
  private readonly budgetSleeper: Sleeper;
  private readonly retryDelay = exponentialBackoff({ baseMs: 100, capMs: 5000 });
  private state: 'idle' | 'running' | 'closing' | 'closed' = 'idle';
  private pumping: Promise<void> | undefined;
  /** Resolves when close() starts, so a blocked wait for work ends at once. */
  private readonly closingSignal: Sleeper;
  /** Woken whenever a run ends, so close() can wait for the set of runs to empty. */
  private readonly runEnded: Sleeper;
  /** close() ran out of time: runs started from now on are aborted at once. */
  private aborting = false;
  private reclaimedAt = 0;
  private stopReportingStoreErrors: (() => void) | undefined;

  constructor(options: WorkerOptions<Jobs>) {
    super();
    this.config = resolveWorkerOptions(options);
    const { scheduler } = this.config;
    this.slotFreed = new Sleeper(scheduler);
    this.retrySleeper = new Sleeper(scheduler);
    this.budgetSleeper = new Sleeper(scheduler);
    this.closingSignal = new Sleeper(scheduler);
    this.runEnded = new Sleeper(scheduler);
  }

  /** Jobs running now. */
  get running(): number {
    return this.runs.size;
  }

  /** Starts claiming and running jobs; returns the worker, so `new Worker({...}).start()` keeps it. */
  start(): this {
    if (this.state !== 'idle') return this;
    this.state = 'running';
    this.stopReportingStoreErrors = this.config.queue.onError((error) => this.report(error));
    this.pumping = this.pump();
    return this;
  }

  /**
   * Stops claiming, waits up to `timeoutMs` for running jobs, then aborts their signals. A handler that
   * returns after the abort hands its job back at once (a snooze, not an attempt); one that does not return
   * keeps the job until its lease expires and the dispatcher reclaims it (a stall). Resolves when every run
   * is acknowledged, or 1 s after the abort at most, even when a store call hangs (a job such a call hands
   * over later is handed back at once).
   */
  async close(timeoutMs = 30_000): Promise<void> {
    if (this.state === 'closed') return;
    this.state = 'closing';
    this.slotFreed.wake();
    this.retrySleeper.wake();
    this.budgetSleeper.wake();
    this.closingSignal.wake();
    const { scheduler } = this.config;
    const deadline = scheduler.now() + timeoutMs;
    // A claim in flight may still hand us a job to run; a hung one is given up on at the deadline.
    if (this.pumping) await settlesWithin(this.pumping, timeoutMs, scheduler);
    if (!(await this.runsEndWithin(deadline - scheduler.now()))) {
      this.aborting = true;
      for (const run of this.runs) run.abortForClose();
      await this.runsEndWithin(Math.min(1000, this.config.leaseMs));
    }
    this.state = 'closed';
    this.stopReportingStoreErrors?.();
  }

  /** True when no run is left within `ms`, counting runs that start meanwhile (a completion hands over its slot). */
  private async runsEndWithin(ms: number): Promise<boolean> {
    const deadline = this.config.scheduler.now() + ms;
    while (this.runs.size > 0) {
      const left = deadline - this.config.scheduler.now();
      if (left <= 0) return false;
      await this.runEnded.sleep(left);
    }
    return true;
  }

  private async pump(): Promise<void> {
    let failures = 0;
    // Started before the client connects (a boot): wait for it, rather than report "not connected" errors.
    const connecting = this.config.queue.firstConnection?.();
    while (connecting && this.state === 'running' && !(await settlesWithin(connecting, this.config.idleWaitMs, this.config.scheduler)));
    while (this.state === 'running') {
      const free = this.config.concurrency - this.runs.size;
      if (free <= 0) {
        await this.slotFreed.sleep(this.config.idleWaitMs);
        continue;
      }
      try {
        const { claimed, wakeMs } = await this.config.queue.claimMany(this.config.leaseMs, free);
        failures = 0;
        this.startAll(claimed);
        if (claimed.length >= free) continue;
        if (wakeMs >= 0) {
          // Jobs wait in ready but the budget lets none start yet: sleep exactly until it may (0: yield, look again).
          await this.budgetSleeper.sleep(Math.min(wakeMs, this.config.idleWaitMs));
          continue;
        }
        await this.reclaimNow();
        if (this.state === 'running') await this.waitForWork();
      } catch (error) {
        if (this.state !== 'running') break;
        failures += 1;
        this.report(error);
        await this.retrySleeper.sleep(Math.max(10, this.retryDelay(failures)));
      }
    }
  }

  /** The store's blocking wait, cut short by close(). */
  private async waitForWork(): Promise<void> {
    const closing = this.closingSignal.sleep(this.config.idleWaitMs + 1000);
    const waiting = new AbortController();
    const ready = this.config.queue.waitForReady(this.config.idleWaitMs, waiting.signal);
    ready.catch(() => undefined); // a failure after close() is of no interest
    try {
      await Promise.race([ready, closing]);
    } finally {
      waiting.abort(); // no store timer outlives this wait
      if (this.state === 'running') this.closingSignal.wake();
    }
  }

  /** Runs jobs just claimed; after close() they are handed back at once instead. */
  private startAll(claimed: readonly ClaimedJob[]): void {
    if (claimed.length === 0) return;
    reportClaimed(this.config.queue, claimed.length);
    for (const job of claimed) {
      if (this.state === 'closed') {
        this.handBack(job);
        continue;
      }
      const run = new JobRun(this.config, job, { onError: (error) => this.report(error), wantsNext: () => this.state === 'running' });
      if (this.aborting) run.abortForClose();
      this.runs.add(run);
      this.emit(
        'active',
        run.job ?? { id: job.id, type: job.type, group: job.group, payload: undefined, attempts: job.attempts, startedAt: run.startedAt },
      );
      void run.done.then(({ outcome, next }) => {
        this.runs.delete(run);
        if (next)
          this.startAll([next]); // the slot passes straight to the next job
        else this.slotFreed.wake();
        this.runEnded.wake();
        this.publish(run, outcome);
      });
    }
  }

  /** A job that reached us after close() resolved: snoozed back (not an attempt) so it runs again at once. */
  private handBack(job: ClaimedJob): void {
    this.config.queue
      .fail(job.id, job.token, { kind: 'snooze', delayMs: 0, maxSnoozes: this.config.maxSnoozes })
      .catch((error: unknown) => this.report(error));
  }

  private publish(run: JobRun, outcome: RunOutcome): void {
    const job: WorkerJob = run.job ?? {
      id: run.claimed.id,
      type: run.claimed.type,
      group: run.claimed.group,
      payload: run.claimed.payload,
      attempts: run.claimed.attempts,
      startedAt: run.startedAt,
    };
    switch (outcome.kind) {
      case 'completed':
        this.emit('completed', job, outcome.result);
        return;
      case 'lost':
        this.report(outcome.error, job);
        return;
      case 'failed':
        this.emit('failed', job, outcome.error);
        if (outcome.state === 'dead') this.emit('dead', job, outcome.error);
        else this.emit('retrying', job, { kind: 'error', delayMs: outcome.delayMs });
        return;
      case 'snoozed':
        if (outcome.state === 'dead') this.emit('dead', job, new Error(`Job ${job.id} was snoozed more than ${this.config.maxSnoozes} times`));
        else this.emit('retrying', job, { kind: 'snooze', delayMs: outcome.delayMs });
    }
  }

  /** Workers also return expired leases, so crashed jobs come back even while no dispatcher reclaims. */
  private async reclaimNow(): Promise<void> {
    const now = this.config.scheduler.now();
    if (now - this.reclaimedAt < this.config.leaseMs) return;
    this.reclaimedAt = now;
    await this.config.queue.reclaimExpired(this.config.maxStalls, RECLAIM_BATCH);
  }

  private report(error: unknown, job?: WorkerJob): void {
    if (this.listenerCount('error') > 0) this.emit('error', error, job);
    else (this.config.logger.error ?? this.config.logger.warn).call(this.config.logger, `bulk-limiter worker: ${String(error)}`);
  }
}
