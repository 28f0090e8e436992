/**
 * One run of one claimed job: keep its lease alive while the handler works, then acknowledge with the
 * fencing token (complete, or fail as error / snooze). A lost lease aborts the handler's signal: the job
 * may already be running elsewhere, and our late acknowledgement will be refused as stale. A completion
 * also claims the worker's next job in the same store call when the worker asks for one (`wantsNext`).
 */
import { BulkLimiterError } from '../errors';
import { isPermanent } from './permanent-error';
import { isRetryLater } from './retry-later-error';
import type { ClaimedJob, FailResult } from '../types';
import type { WorkerConfig, WorkerJob } from './worker-options';
import { messageOf } from './validate';

/** How a run ended, for the Worker's events. */
export type RunOutcome =
  | { readonly kind: 'completed'; readonly result: unknown }
  | { readonly kind: 'failed'; readonly error: unknown; readonly delayMs: number; readonly state: FailResult }
  | { readonly kind: 'snoozed'; readonly delayMs: number; readonly state: FailResult }
  /** The lease was lost (or the ack refused): someone else owns the job now; nothing was recorded. */
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
      if (!this.hooks.wantsNext()) return end((await queue.complete(id, token, resultJson, keepCompletedMs)) ? completed : lost());
      // The hot path: acknowledge and take the next job in one round trip.
      const r = await queue.completeAndClaim(id, token, resultJson, keepCompletedMs, leaseMs, 1);
      return end(r.completed ? completed : lost(), r.claimed[0]);
    }
    if (this.closedByWorker || isRetryLater(outcome.error)) {
      // Interrupted by close, or asked to wait: not an attempt (River's JobSnooze), capped by maxSnoozes.
      const delayMs = isRetryLater(outcome.error) ? outcome.error.delayMs : 0;
      // the upstream refused: the adaptive limit falls (once per interval), not just this job's start
      if (isRetryLater(outcome.error)) void this.config.report?.('throttled', { retryAfterMs: delayMs });
      const state = await queue.fail(id, token, { kind: 'snooze', delayMs, maxSnoozes: this.config.maxSnoozes });
      return end(state === 'stale' ? lost() : { kind: 'snoozed', delayMs, state });
    }
    const delayMs = Math.max(0, Math.floor(this.config.backoff(this.claimed.attempts + 1)));
    // A permanent error goes to dead at once (cap 0), whatever attempts are left.
    const maxAttempts = isPermanent(outcome.error) ? 0 : this.config.maxAttempts;
    const state = await queue.fail(id, token, { kind: 'error', error: messageOf(outcome.error), delayMs, maxAttempts });
    return end(state === 'stale' ? lost() : { kind: 'failed', error: outcome.error, delayMs, state });
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
