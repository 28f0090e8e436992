/**
 * The middleware's defer mode, shared by both adapters: options, and the `'deferred'` outcome of a denied
 * request that the limiter wrote as a job (202 Accepted + Location + `{ jobId, state, runAt }`).
 * Delivery of deferred jobs is at-least-once (see Worker): handlers should be idempotent.
 */
import type { HeaderMap } from './headers';
import { refuseUnknownOptions, type OptionNames } from '../util/option-names';
import type { Limiter } from '../limiter/limiter';
import type { EnqueuedJob } from '../queue/offload';
import type { Decision, JobState, Logger } from '../types';
import { describeValue } from '../errors';
import { func, isIntegerIn, oneOf, refuse } from '../util/validate';

type MaybePromise<T> = T | Promise<T>;

export interface DeferOptions<Ctx> {
  /** The job type; a Worker runs `handlers[type]`. */
  readonly type: string;
  /** What the job needs to do the request's work later (JSON-encodable, ≤ `maxPayloadBytes`). Built for every request that reaches the limiter. @defaultValue `null` */
  readonly payload?: (ctx: Ctx) => MaybePromise<unknown>;
  /** Same key, same job (per group). @defaultValue the `Idempotency-Key` request header */
  readonly idempotencyKey?: (ctx: Ctx) => MaybePromise<string | undefined>;
  /** The URL of the job's status (served by `jobStatus()`), sent as `Location`. */
  readonly statusUrl: (jobId: string, ctx: Ctx) => string;
  /**
   * `'denied'`: a request the limiter denies becomes a job, an allowed one runs now. `'always'`: every request
   * becomes a job (offload to a background consumer; `limiter.enqueue`), answered 202; the route handler never
   * runs; a full backlog is a 429. @defaultValue `'denied'`
   */
  readonly when?: 'denied' | 'always';
  /** Most jobs of the request's group running at once. @defaultValue the limiter's `groupConcurrency` */
  readonly groupConcurrency?: number | ((group: string, ctx: Ctx) => MaybePromise<number>);
}

/** The body of a 202 answer. */
export interface DeferredBody {
  readonly jobId: string;
  readonly state: JobState;
  /** When the job is due, ISO 8601. */
  readonly runAt: string;
  /** True when an idempotency key named an existing job: nothing new was written. */
  readonly duplicate: boolean;
}

export interface DeferredOutcome {
  readonly kind: 'deferred';
  readonly headers: HeaderMap;
  /** The admission that denied the request; undefined with `when: 'always'` (nothing was decided). */
  readonly decision: Decision | undefined;
  readonly body: DeferredBody;
}

const DEFER_OPTIONS: OptionNames<DeferOptions<unknown>> = {
  type: true,
  payload: true,
  idempotencyKey: true,
  statusUrl: true,
  when: true,
  groupConcurrency: true,
};
const DEFER_OPTION_NAMES = Object.keys(DEFER_OPTIONS);

export function validateDefer(defer: unknown): void {
  const d = defer as Partial<DeferOptions<unknown>> | null;
  if (typeof d !== 'object' || d === null) refuse('defer', '{ type, payload?, idempotencyKey?, statusUrl }', defer);
  refuseUnknownOptions(d, DEFER_OPTION_NAMES, 'bulkLimiter()', 'defer.');
  if (typeof d.type !== 'string' || d.type.length === 0 || d.type.length > 128) refuse('defer.type', 'a job type of 1–128 characters', d.type);
  func('defer.payload', d.payload, { fallback: undefined, expected: 'a function of the request' });
  func('defer.idempotencyKey', d.idempotencyKey, { fallback: undefined, expected: 'a function of the request' });
  func('defer.statusUrl', d.statusUrl, { expected: 'a function (jobId) => URL' });
  oneOf('defer.when', d.when, ['denied', 'always'], { fallback: undefined });
  const cap = d.groupConcurrency;
  if (cap !== undefined && typeof cap !== 'function' && !isIntegerIn(cap)) {
    refuse('defer.groupConcurrency', 'an integer ≥ 1 or a function (group, request)', cap);
  }
}

/** The Location of a job's status: `defer.statusUrl`'s answer, checked (see `statusLocation`). */
export type StatusLocation<Ctx> = (jobId: string, ctx: Ctx) => HeaderMap;

/**
 * `defer.statusUrl` as a Location field. It runs after the job is written, so a throw or a non-string is the
 * server's bug with the job already queued: the answer stays the 202 it is (no Location), never a 500 that a
 * client would retry into a second job; one WRN_BL_OPTION_RESULT per middleware says so.
 */
export function statusLocation<Ctx>(defer: DeferOptions<Ctx>, logger: Logger, limiterName: string): StatusLocation<Ctx> {
  let warned = false;
  return (jobId, ctx): HeaderMap => {
    let url: unknown;
    let failure: unknown;
    try {
      url = defer.statusUrl(jobId, ctx);
    } catch (error) {
      failure = error;
    }
    if (typeof url === 'string' && url !== '') return { Location: url };
    if (!warned) {
      warned = true;
      const gave = failure === undefined ? `gave ${describeValue(url)}` : `threw ${String(failure)}`;
      logger.warn(
        `WRN_BL_OPTION_RESULT: \`defer.statusUrl\` ${gave}; expected a URL string. Deferred requests are still queued and answered 202, without Location, until this is fixed (limiter "${limiterName}")`,
      );
    }
    return {};
  };
}

/** The 202 of a request offloaded with `when: 'always'` (no admission decided it). */
export function offloadedOutcome<Ctx>(location: StatusLocation<Ctx>, job: EnqueuedJob, ctx: Ctx): DeferredOutcome {
  return {
    kind: 'deferred',
    headers: location(job.id, ctx),
    decision: undefined,
    body: { jobId: job.id, state: 'delayed', runAt: new Date(job.runAt).toISOString(), duplicate: job.duplicate },
  };
}

export async function deferredOutcome<Ctx>(
  limiter: Limiter,
  location: StatusLocation<Ctx>,
  decision: Decision,
  headers: HeaderMap,
  ctx: Ctx,
): Promise<DeferredOutcome> {
  const job = decision.job!;
  // A new job is waiting for its slot; an existing one (idempotency key) may have moved on since.
  const state = job.duplicate ? ((await limiter.getJob(job.id).catch(() => null))?.state ?? 'delayed') : 'delayed';
  return {
    kind: 'deferred',
    headers: { ...headers, ...location(job.id, ctx) },
    decision,
    body: { jobId: job.id, state, runAt: new Date(job.runAt).toISOString(), duplicate: job.duplicate },
  };
}
