/**
 * `jobStatus({ limiter })`, shared by both adapters: GET <status url>/:id → the job as JSON (state,
 * attempts, times, result or error), 404 problem+json for an unknown id. The payload is not shown.
 * With `group`, a job is only shown to requests of its own group (others get 404): job ids are not secrets.
 */
import { ConfigError, describeValue } from '../errors';
import type { Limiter } from '../limiter';
import { refuseUnknownOptions, type OptionNames } from '../option-names';
import type { JobInfo, JobState } from '../queue/types';
import type { ProblemDetails } from './shared';

type MaybePromise<T> = T | Promise<T>;

export interface JobStatusOptions<Ctx> {
  readonly limiter: Limiter;
  /** The job id of a request. @defaultValue the `id` route parameter */
  readonly id?: (ctx: Ctx) => string | undefined;
  /** The requester's group: when given, jobs of other groups are answered 404. */
  readonly group?: (ctx: Ctx) => MaybePromise<string | undefined | null>;
}

/** What the status URL answers for a known job. Times are ISO 8601. */
export interface JobStatusBody {
  readonly id: string;
  readonly type: string;
  readonly state: JobState;
  readonly attempts: number;
  readonly stalls: number;
  readonly snoozes: number;
  readonly createdAt: string;
  readonly runAt: string;
  readonly finishedAt?: string;
  readonly result?: unknown;
  readonly error?: string;
}

const JOB_STATUS_OPTIONS: OptionNames<JobStatusOptions<unknown>> = { limiter: true, id: true, group: true };
const JOB_STATUS_OPTION_NAMES = Object.keys(JOB_STATUS_OPTIONS);

export type JobStatusAnswer =
  | { readonly status: 200; readonly body: JobStatusBody }
  | { readonly status: 404 | 503; readonly problem: ProblemDetails };

export function createJobStatusReader<Ctx>(options: JobStatusOptions<Ctx>, routeId: (ctx: Ctx) => string | undefined): (ctx: Ctx) => Promise<JobStatusAnswer> {
  const o = options as Partial<JobStatusOptions<Ctx>> | null;
  refuseUnknownOptions(o, JOB_STATUS_OPTION_NAMES, 'jobStatus()');
  if (typeof o !== 'object' || o === null || typeof o.limiter?.getJob !== 'function') {
    throw new ConfigError('ERR_BL_LIMITER', `Expected \`limiter\` to be a limiter from createLimiter(), got ${describeValue(o?.limiter)}`);
  }
  for (const name of ['id', 'group'] as const) {
    if (o[name] !== undefined && typeof o[name] !== 'function') {
      throw new ConfigError(`ERR_BL_${name.toUpperCase()}`, `Expected \`${name}\` to be a function of the request, got ${describeValue(o[name])}`);
    }
  }
  const { limiter, group } = options;
  const idOf = options.id ?? routeId;
  return async (ctx) => {
    const id = idOf(ctx);
    let job: JobInfo | null;
    try {
      job = id ? await limiter.getJob(id) : null;
    } catch {
      return { status: 503, problem: { type: 'about:blank', title: 'Service Unavailable', status: 503, detail: 'The job store is temporarily unavailable.' } };
    }
    if (job !== null && group !== undefined && (await group(ctx)) !== job.group) job = null;
    if (job === null) return { status: 404, problem: { type: 'about:blank', title: 'Not Found', status: 404, detail: 'No such job (unknown, or its record has expired).' } };
    return { status: 200, body: toBody(job) };
  };
}

function toBody(job: JobInfo): JobStatusBody {
  const iso = (ms: number) => new Date(ms).toISOString();
  return {
    id: job.id, type: job.type, state: job.state, attempts: job.attempts, stalls: job.stalls, snoozes: job.snoozes,
    createdAt: iso(job.createdAt), runAt: iso(job.runAt),
    ...(job.finishedAt === undefined ? {} : { finishedAt: iso(job.finishedAt) }),
    ...(job.result === undefined ? {} : { result: job.result }),
    ...(job.error === undefined ? {} : { error: job.error }),
  };
}
