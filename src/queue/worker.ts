/**
 * Worker: claims ready jobs under a lease and runs the handler registered for each job's type.
 *
 * Delivery is **at-least-once**. A job whose worker crashes, hangs past its lease or is closed past its
 * timeout is handed to another run, so a handler can run more than once for the same job (and a stale run
 * may still be finishing its side effects while the new one starts; its acknowledgement is then refused
 * by the fencing token). Make handlers idempotent, e.g. keyed by `job.id` or the request's idempotency key.
 *
 * Wake-ups come from the store's `waitForReady` (a blocking read on Redis, a signal in memory), so a job
 * made ready is started at once, not at the next poll; `idleWaitMs` only bounds a missed wake-up.
 */
import { EventEmitter } from 'node:events';
import { exponentialBackoff } from './backoff';
import { JobRun, type RunOutcome } from './job-run';
import { Sleeper } from './sleeper';
import { resolveWorkerOptions, type WorkerConfig, type WorkerJob, type WorkerOptions } from './worker-options';

export type { JobHandler, WorkerJob, WorkerOptions } from './worker-options';
export { LeaseLostError, WorkerClosedError } from './job-run';

export interface WorkerEvents {
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

export class Worker extends EventEmitter<WorkerEvents> {
  private readonly config: WorkerConfig;
  private readonly runs = new Set<JobRun>();
  private readonly slotFreed = new Sleeper();
  private readonly retrySleeper = new Sleeper();
  private readonly retryDelay = exponentialBackoff({ baseMs: 100, capMs: 5000 });
  private state: 'idle' | 'running' | 'closing' | 'closed' = 'idle';
  private pumping: Promise<void> | undefined;
  /** Resolves when close() starts, so a blocked wait for work ends at once. */
  private readonly closingSignal = new Sleeper();
  private reclaimedAt = 0;

  constructor(options: WorkerOptions) {
    super();
    this.config = resolveWorkerOptions(options);
  }

  /** Jobs running now. */
  get running(): number {
    return this.runs.size;
  }

  start(): void {
    if (this.state !== 'idle') return;
    this.state = 'running';
    this.pumping = this.pump();
  }

  /**
   * Stops claiming, waits up to `timeoutMs` for running jobs, then aborts their signals. A handler that
   * returns after the abort hands its job back at once (a snooze, not an attempt); one that does not return
   * keeps the job until its lease expires and the dispatcher reclaims it (a stall). Resolves when every run
   * is acknowledged, or 1 s after the abort at most.
   */
  async close(timeoutMs = 30_000): Promise<void> {
    if (this.state === 'closed') return;
    this.state = 'closing';
    this.slotFreed.wake();
    this.retrySleeper.wake();
    this.closingSignal.wake();
    await this.pumping; // a claim in flight may still hand us a job to run
    const all = () => Promise.all([...this.runs].map((run) => run.done));
    if (!(await settlesWithin(all(), timeoutMs))) {
      for (const run of this.runs) run.abortForClose();
      await settlesWithin(all(), Math.min(1000, this.config.leaseMs));
    }
    this.state = 'closed';
  }

  private async pump(): Promise<void> {
    let failures = 0;
    while (this.state === 'running') {
      if (this.runs.size >= this.config.concurrency) {
        await this.slotFreed.sleep(this.config.idleWaitMs);
        continue;
      }
      try {
        const claimed = await this.config.queue.claim(this.config.leaseMs);
        failures = 0;
        if (claimed !== null) {
          this.track(new JobRun(this.config, claimed, (error) => this.report(error)));
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

  private track(run: JobRun): void {
    this.runs.add(run);
    void run.done.then((outcome) => {
      this.runs.delete(run);
      this.slotFreed.wake();
      this.publish(run, outcome);
    });
  }

  private publish(run: JobRun, outcome: RunOutcome): void {
    const job: WorkerJob = run.job ?? { id: run.claimed.id, type: run.claimed.type, group: run.claimed.group, payload: run.claimed.payload, attempts: run.claimed.attempts };
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
    const now = Date.now();
    if (now - this.reclaimedAt < this.config.leaseMs) return;
    this.reclaimedAt = now;
    await this.config.queue.reclaimExpired(this.config.maxStalls, RECLAIM_BATCH);
  }

  private report(error: unknown, job?: WorkerJob): void {
    if (this.listenerCount('error') > 0) this.emit('error', error, job);
    else (this.config.logger.error ?? this.config.logger.warn).call(this.config.logger, `bulk-limiter worker: ${String(error)}`);
  }
}

/** True when `promise` settled within `ms`. */
async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([promise.then(() => true), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
