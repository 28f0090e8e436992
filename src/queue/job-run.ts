/**
 * One run of one claimed job: keep its lease alive while the handler works, then acknowledge with the
 * fencing token (complete, or fail as error / snooze). A lost lease aborts the handler's signal: the job
 * may already be running elsewhere, and our late acknowledgement will be refused as stale. A completion
 * also claims the worker's next job in the same store call when the worker asks for one (`wantsNext`).
 */
import { BulkLimiterError } from '../errors';
import { isPermanent } from './permanent-error';
import { isRetryLater } from './retry-later-error';
import type { ClaimedJob, FailState } from '../types';
import type { WorkerConfig, WorkerJob } from './worker-options';
import { messageOf } from './validate';

/** How a run ended, for the Worker's events. */
export type RunOutcome =
  | { readonly kind: 'completed'; readonly result: unknown }
  | { readonly kind: 'failed'; readonly error: unknown; readonly delayMs: number; readonly state: FailState }
  | { readonly kind: 'snoozed'; readonly delayMs: number; readonly state: FailState }
  /**
   * The lease was lost (or the ack refused): someone else owns the job now; nothing was recorded, unless a failure
   * sent again after a store error was refused because the first send had counted.
   */
  | { readonly kind: 'lost'; readonly error: BulkLimiterError };

/** How a run ended, and the next job claimed with its completion (the slot passes to it). */
export interface RunEnd {
  readonly outcome: RunOutcome;
  readonly next: ClaimedJob | undefined;
}

/** What a run needs from its worker. */
export interface RunHooks {
  /** A store call failed (lease renewal or acknowledgement). */
  readonly onError: (error: unknown) => void;
  /** Asked at completion time: claim the worker's next job in the same call? */
  readonly wantsNext: () => boolean;
}

/**
 * Attempts of an acknowledgement the store failed to take (an error, not a stale token), and the pause before
 * the second (doubling, at most ACK_RETRY_MAX_MS): about 7 s in all, longer than a restart or a Cluster failover.
 * The repeat carries the same token, so it is refused once someone else holds the job.
 */
export const ACK_ATTEMPTS = 8;
const ACK_RETRY_MS = 100;
const ACK_RETRY_MAX_MS = 2000;

export class LeaseLostError extends BulkLimiterError {
  constructor(jobId: string) {
    super('ERR_BL_LEASE_LOST', `The lease on job ${jobId} was lost (expired or taken over); the job may run again elsewhere`);
  }
}

export class WorkerClosedError extends BulkLimiterError {
  constructor(jobId: string) {
    super('ERR_BL_WORKER_CLOSED', `The worker closed before job ${jobId} finished; the job is handed back`);
  }
}

export class JobRun {
  readonly job: WorkerJob | undefined;
  /** When the claim spent the budget, on the store's clock (`WorkerJob.startedAt`). */
  readonly startedAt: number;
  readonly controller = new AbortController();
  /** Resolves when the run is acknowledged (or known lost). Never rejects. */
  readonly done: Promise<RunEnd>;
  private leaseUntil: number;
  private renewing = false;
  private closedByWorker = false;

  constructor(
    private readonly config: WorkerConfig,
    readonly claimed: ClaimedJob,
    private readonly hooks: RunHooks,
  ) {
    this.leaseUntil = config.scheduler.now() + config.leaseMs;
    this.startedAt = claimed.leaseUntil - config.leaseMs;
    let job: WorkerJob | undefined;
    let decodeError: unknown;
    try {
      job = {
        id: claimed.id,
        type: claimed.type,
        group: claimed.group,
        payload: JSON.parse(claimed.payload) as unknown,
        attempts: claimed.attempts,
        startedAt: this.startedAt,
      };
      const { reservation } = claimed;
      const settle = config.settle;
      if (reservation !== undefined && settle !== undefined) job = { ...job, settle: (actual: number) => settle(reservation, actual) };
    } catch (error) {
      decodeError = new BulkLimiterError('ERR_BL_JOB_PAYLOAD', `Job ${claimed.id} has a payload that is not JSON: ${messageOf(error)}`);
    }
    this.job = job;
    this.done = this.run(decodeError);
  }

  /** The worker is closing past its timeout: abort the handler and hand the job back when it returns. */
  abortForClose(): void {
    this.closedByWorker = true;
    this.controller.abort(new WorkerClosedError(this.claimed.id));
  }

  private async run(decodeError: unknown): Promise<RunEnd> {
    const stopRenewing = this.renewEvery(Math.max(10, Math.floor(this.config.leaseMs / 3)));
    let outcome: { ok: true; result: unknown } | { ok: false; error: unknown };
    try {
      if (decodeError !== undefined) throw decodeError;
      const handler = this.config.handlers.get(this.claimed.type);
      if (handler === undefined) {
        throw new BulkLimiterError(
          'ERR_BL_NO_HANDLER',
          `No handler for job type ${JSON.stringify(this.claimed.type)} (job ${this.claimed.id}); known types: ${[...this.config.handlers.keys()].join(', ') || 'none'}`,
        );
      }
      outcome = { ok: true, result: await handler(this.job!, this.controller.signal) };
    } catch (error) {
      outcome = { ok: false, error };
    } finally {
      stopRenewing();
    }
    try {
      return await this.acknowledge(outcome);
    } catch (error) {
      // The store failed at ack time: the lease will expire and the job be reclaimed (at-least-once).
      this.hooks.onError(error);
      return { outcome: { kind: 'lost', error: new LeaseLostError(this.claimed.id) }, next: undefined };
    }
  }

  private async acknowledge(outcome: { ok: true; result: unknown } | { ok: false; error: unknown }): Promise<RunEnd> {
    const { queue } = this.config;
    const { id, token } = this.claimed;
    const lost = (): RunOutcome => ({ kind: 'lost', error: new LeaseLostError(id) });
    const end = (o: RunOutcome, next?: ClaimedJob): RunEnd => ({ outcome: o, next });
    if (outcome.ok) {
      let resultJson: string | undefined;
      try {
        resultJson = outcome.result === undefined ? undefined : JSON.stringify(outcome.result);
      } catch (error) {
        return this.acknowledge({
          ok: false,
          error: new BulkLimiterError('ERR_BL_JOB_RESULT', `Job ${id} returned a result that is not JSON-serialisable: ${messageOf(error)}`),
        });
      }
      const completed: RunOutcome = { kind: 'completed', result: outcome.result };
      // the upstream served: the adaptive limit may rise (the limiter coalesces these; a failed report is logged)
      void this.config.report?.('ok');
      const { keepCompletedMs, leaseMs } = this.config;
      // The hot path: acknowledge and take the next job in one round trip. A repeat only completes: the claim
      // of a call that failed may have happened, and a job claimed twice waits for its lease to end.
      const r = await this.sendAck(async (repeat) => {
        if (repeat || !this.hooks.wantsNext()) return { completed: await this.completedOnce(resultJson, repeat), claimed: [] };
        return queue.completeAndClaim(id, token, resultJson, keepCompletedMs, leaseMs, 1);
      });
      return end(r.completed ? completed : lost(), r.claimed[0]);
    }
    if (this.closedByWorker || isRetryLater(outcome.error)) {
      // Interrupted by close, or asked to wait: not an attempt (River's JobSnooze), capped by maxSnoozes.
      const delayMs = isRetryLater(outcome.error) ? outcome.error.delayMs : 0;
      // the upstream refused: the adaptive limit falls (once per interval), not just this job's start
      if (isRetryLater(outcome.error)) void this.config.report?.('throttled', { retryAfterMs: delayMs });
      const { state } = await this.sendAck(() => queue.fail(id, token, { kind: 'snooze', delayMs, maxSnoozes: this.config.maxSnoozes }));
      return end(state === 'stale' ? lost() : { kind: 'snoozed', delayMs, state });
    }
    const delayMs = Math.max(0, Math.floor(this.config.backoff(this.claimed.attempts + 1)));
    // A permanent error goes to dead at once (cap 0), whatever attempts are left.
    const maxAttempts = isPermanent(outcome.error) ? 0 : this.config.maxAttempts;
    const { state } = await this.sendAck(() => queue.fail(id, token, { kind: 'error', error: messageOf(outcome.error), delayMs, maxAttempts }));
    return end(state === 'stale' ? lost() : { kind: 'failed', error: outcome.error, delayMs, state });
  }

  /**
   * The completion, once: a repeat refused after a call that failed may mean that call counted (the job is
   * completed), which a read tells. A failure's repeat refused stays 'stale' (lost): a failed job is waiting
   * again, and may already run elsewhere.
   */
  private async completedOnce(resultJson: string | undefined, repeat: boolean): Promise<boolean> {
    const { id, token } = this.claimed;
    const { queue, keepCompletedMs } = this.config;
    if (await queue.complete(id, token, resultJson, keepCompletedMs)) return true;
    return repeat && (await queue.getJob(id))?.state === 'completed';
  }

  /**
   * Sends an acknowledgement, again with the same token while the store fails (each failure reported), up to
   * ACK_ATTEMPTS times; then the last error stands and the job runs again when its lease ends. An acknowledgement
   * `durability` could not confirm has been sent again already (ERR_BL_NOT_DURABLE): not repeated here.
   */
  private async sendAck<T>(send: (repeat: boolean) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await send(attempt > 1);
      } catch (error) {
        const durable = error instanceof BulkLimiterError && error.code === 'ERR_BL_NOT_DURABLE';
        if (attempt >= ACK_ATTEMPTS || durable) throw error;
        this.hooks.onError(error);
        await this.config.scheduler.sleep(Math.min(ACK_RETRY_MAX_MS, ACK_RETRY_MS * 2 ** (attempt - 1)));
      }
    }
  }

  /** Renews the lease every `ms` until the returned function is called (an interval on the worker's scheduler). */
  private renewEvery(ms: number): () => void {
    let cancel = (): void => undefined;
    const tick = (): void => {
      cancel = this.config.scheduler.setTimeout(tick, ms);
      void this.renew();
    };
    cancel = this.config.scheduler.setTimeout(tick, ms);
    return () => cancel();
  }

  private async renew(): Promise<void> {
    if (this.renewing || this.controller.signal.aborted) return;
    this.renewing = true;
    const { id, token } = this.claimed;
    try {
      const startedAt = this.config.scheduler.now();
      if (await this.config.queue.extendLease(id, token, this.config.leaseMs)) this.leaseUntil = startedAt + this.config.leaseMs;
      else this.controller.abort(new LeaseLostError(id));
    } catch (error) {
      this.hooks.onError(error);
      // Could not renew in time: assume the lease is gone rather than run unfenced.
      if (this.config.scheduler.now() >= this.leaseUntil) this.controller.abort(new LeaseLostError(id));
    } finally {
      this.renewing = false;
    }
  }
}
