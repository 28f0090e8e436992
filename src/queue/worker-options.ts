/**
 * Worker options: TSDoc with defaults, validated once at construction into a frozen config.
 */
import { refuseUnknownOptions, type OptionNames } from '../util/option-names';
import { schedulerOf, type Scheduler } from '../util/scheduler';
import type { Logger } from '../types';
import { exponentialBackoff, type Backoff, type BackoffOptions } from './backoff';
import type { QueueStore, SettleResult } from '../types';
import { reporterOf, requireQueue, settlerOf, type QueueHolder } from './validate';
import { func, integer, loggerOption, plainObject, refuse } from '../util/validate';

/** What a handler sees of its job. */
export interface WorkerJob<Payload = unknown> {
  readonly id: string;
  readonly type: string;
  readonly group: string;
  /** The payload given at defer (or enqueue) time, parsed from JSON. */
  readonly payload: Payload;
  /** Earlier runs of this job that ended in an error (0 on the first run). */
  readonly attempts: number;
  /**
   * When this run was claimed, in ms on the store's clock (Redis TIME): the moment it spent the limit's budget,
   * comparable with a live decision's `at`.
   */
  readonly startedAt: number;
  /**
   * A job enqueued with `settle: true`: its cost was an estimate, reserved when it started; settle it with the
   * units the work really took (docs/settle.md). Absent for other jobs.
   */
  readonly settle?: (actual: number) => Promise<SettleResult>;
}

/**
 * Runs one job. Resolve with a JSON-serialisable result (kept on the job record for `keepCompletedMs`);
 * throw to fail the attempt; throw `RetryLaterError(ms)` to snooze. Stop work when `signal` aborts: the
 * worker is closing past its timeout, or the lease was lost and the job may already run elsewhere.
 */
export type JobHandler<Payload = unknown> = (job: WorkerJob<Payload>, signal: AbortSignal) => unknown;

/**
 * Job types and their payloads, e.g. `{ import: { rows: string[] }; email: { to: string } }`: a Worker
 * typed with it gets one handler per type, each seeing its own payload type. The payload comes back from
 * JSON, so name types JSON can carry (no Date, Map, undefined fields).
 */
export type JobTypes = object;

/** One handler per job type of `Jobs`. */
export type JobHandlers<Jobs extends JobTypes> = { readonly [Type in keyof Jobs & string]: JobHandler<Jobs[Type]> };

export interface WorkerOptions<Jobs extends JobTypes = Record<string, unknown>> {
  /** The limiter whose jobs this worker runs. */
  readonly limiter: QueueHolder;
  /** One handler per job type. A job of another type fails (and is retried) with a clear error. */
  readonly handlers: JobHandlers<Jobs>;
  /** @defaultValue 1 — jobs run at the same time. */
  readonly concurrency?: number;
  /** @defaultValue 30_000 — a job's lease; renewed every leaseMs/3 while the handler runs. */
  readonly leaseMs?: number;
  /** @defaultValue 5 — runs that end in an error before the job goes to dead. */
  readonly maxAttempts?: number;
  /** @defaultValue 25 — `RetryLaterError` snoozes before the job goes to dead. */
  readonly maxSnoozes?: number;
  /**
   * @defaultValue 1 — expired leases (crashes) before the job goes to dead. Must be the same on every Worker
   * and Dispatcher of one limiter: both reclaim expired leases, so whichever gets there first decides.
   */
  readonly maxStalls?: number;
  /** @defaultValue exponential, full jitter, base 1 s, cap 1 h — delay before retry number n (n ≥ 1). */
  readonly backoff?: BackoffOptions | Backoff;
  /** @defaultValue 3_600_000 — how long completed jobs (and their results) stay readable by `getJob`. */
  readonly keepCompletedMs?: number;
  /** @defaultValue 5000 — longest blocking wait for a job before looking again (a missed wake-up costs at most this). */
  readonly idleWaitMs?: number;
  /** @defaultValue console — where errors go when nobody listens to `'error'`. */
  readonly logger?: Logger;
}

const WORKER_OPTIONS: OptionNames<WorkerOptions> = {
  limiter: true,
  handlers: true,
  concurrency: true,
  leaseMs: true,
  maxAttempts: true,
  maxSnoozes: true,
  maxStalls: true,
  backoff: true,
  keepCompletedMs: true,
  idleWaitMs: true,
  logger: true,
};

/** The option names of `new Worker()` (a typo is refused with a suggestion). */
export const WORKER_OPTION_NAMES: readonly string[] = Object.freeze(Object.keys(WORKER_OPTIONS));

export interface WorkerConfig {
  readonly queue: QueueStore;
  /** The limiter's adaptive limit: a RetryLaterError reports 'throttled' (its delay the Retry-After), a success 'ok'. */
  readonly report: QueueHolder['report'];
  /** The limiter's settle, for jobs with a reservation (`WorkerJob.settle`). */
  readonly settle: QueueHolder['settle'];
  readonly handlers: ReadonlyMap<string, JobHandler>;
  readonly concurrency: number;
  readonly leaseMs: number;
  readonly maxAttempts: number;
  readonly maxSnoozes: number;
  readonly maxStalls: number;
  readonly backoff: Backoff;
  readonly keepCompletedMs: number;
  readonly idleWaitMs: number;
  readonly logger: Logger;
  /** Time and timers of the worker and its runs; a test attaches a manual one to the options (src/util/scheduler.ts). */
  readonly scheduler: Scheduler;
}

export function resolveWorkerOptions<Jobs extends JobTypes>(options: WorkerOptions<Jobs>): WorkerConfig {
  refuseUnknownOptions(options, WORKER_OPTION_NAMES, 'new Worker()');
  const queue = requireQueue(options?.limiter);
  const handlers = options.handlers;
  plainObject('handlers', handlers, { expected: 'an object of job type → handler' });
  const map = new Map<string, JobHandler>();
  // Each handler gets only jobs of its own type, so it sees that type's payload; the map is untyped inside.
  for (const [type, handler] of Object.entries(handlers) as Array<[string, JobHandler]>) {
    func(`handlers[${JSON.stringify(type)}]`, handler, { code: 'ERR_BL_HANDLERS' });
    map.set(type, handler);
  }
  const backoff = options.backoff;
  if (backoff !== undefined && typeof backoff !== 'function' && (typeof backoff !== 'object' || backoff === null)) {
    refuse('backoff', '{ baseMs, capMs } or a function', backoff);
  }
  return Object.freeze({
    queue,
    report: reporterOf(options?.limiter),
    settle: settlerOf(options?.limiter),
    handlers: map,
    concurrency: integer('concurrency', options.concurrency, { fallback: 1 }),
    leaseMs: integer('leaseMs', options.leaseMs, { fallback: 30_000, min: 30 }),
    maxAttempts: integer('maxAttempts', options.maxAttempts, { fallback: 5 }),
    maxSnoozes: integer('maxSnoozes', options.maxSnoozes, { fallback: 25, min: 0 }),
    maxStalls: integer('maxStalls', options.maxStalls, { fallback: 1, min: 0 }),
    backoff: typeof backoff === 'function' ? backoff : exponentialBackoff(backoff),
    keepCompletedMs: integer('keepCompletedMs', options.keepCompletedMs, { fallback: 3_600_000, min: 0 }),
    idleWaitMs: integer('idleWaitMs', options.idleWaitMs, { fallback: 5000 }),
    logger: loggerOption(options.logger),
    scheduler: schedulerOf(options),
  });
}
