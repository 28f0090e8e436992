/**
 * `jobStatus({ limiter, group })`, shared by both adapters: GET <status url>/:id → the job as JSON (state,
 * attempts, times, result or error), 404 problem+json for an unknown id. The payload is not shown.
 * Job ids are sequential, so a job is shown only to requests of its own `group` (others get 404), unless
 * the route is declared `public: true`. The id comes from the route parameter `param` (default `id`); a
 * route without that parameter is only visible per request: a 500 and one warning WRN_BL_ROUTE_PARAM.
 */
import { ConfigError } from '../errors';
import type { Limiter } from '../limiter/limiter';
import { refuseUnknownOptions, type OptionNames } from '../util/option-names';
import type { JobInfo, JobState } from '../types';
import { createMisconfigured } from './misconfigured';
import type { ProblemDetails } from './rejection';
import { boolean, func, refuse } from '../util/validate';

type MaybePromise<T> = T | Promise<T>;

export interface JobStatusOptions<Ctx> {
  readonly limiter: Limiter;
  /**
   * The requester's group, as in `bulkLimiter` (the same function): a job of another group is answered
   * 404, as is a request without a group. Required unless `public: true`.
   */
  readonly group?: (ctx: Ctx) => MaybePromise<string | undefined | null>;
  /** `true`: anyone who has a job's id may read it (no `group`). @defaultValue `false` */
  readonly public?: boolean;
  /** The route parameter that holds the job id (`'/jobs/:id'`). @defaultValue `'id'` */
  readonly param?: string;
  /** The job id of a request, instead of the route parameter. */
  readonly id?: (ctx: Ctx) => string | undefined;
}

/** What an adapter reads from the route: the parameter's value, or NO_PARAM when the route has no such parameter. */
export const NO_PARAM: unique symbol = Symbol('no route parameter');
export type RouteParam<Ctx> = (ctx: Ctx, param: string) => string | undefined | typeof NO_PARAM;

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

const JOB_STATUS_OPTIONS: OptionNames<JobStatusOptions<unknown>> = { limiter: true, group: true, public: true, param: true, id: true };
const JOB_STATUS_OPTION_NAMES = Object.keys(JOB_STATUS_OPTIONS);

export type JobStatusAnswer =
  { readonly status: 200; readonly body: JobStatusBody } | { readonly status: 404 | 500 | 503; readonly problem: ProblemDetails };

const NOT_FOUND: JobStatusAnswer = {
  status: 404,
  problem: { type: 'about:blank', title: 'Not Found', status: 404, detail: 'No such job (unknown, or its record has expired).' },
};
const UNAVAILABLE: JobStatusAnswer = {
  status: 503,
  problem: { type: 'about:blank', title: 'Service Unavailable', status: 503, detail: 'The job store is temporarily unavailable.' },
};

export function createJobStatusReader<Ctx>(options: JobStatusOptions<Ctx>, routeParam: RouteParam<Ctx>): (ctx: Ctx) => Promise<JobStatusAnswer> {
  const o = options as Partial<JobStatusOptions<Ctx>> | null;
  refuseUnknownOptions(o, JOB_STATUS_OPTION_NAMES, 'jobStatus()');
  if (typeof o !== 'object' || o === null || typeof o.limiter?.getJob !== 'function') {
    refuse('limiter', 'a limiter from createLimiter()', o?.limiter);
  }
  for (const name of ['id', 'group'] as const) func(name, o[name], { fallback: undefined, expected: 'a function of the request' });
  const isPublic = boolean('public', o.public, { fallback: false });
  if (isPublic === (o.group !== undefined)) {
    throw new ConfigError(
      'ERR_BL_GROUP',
      isPublic
        ? 'Pass either `group` or `public: true`, not both'
        : "Expected `group` (the requester's group, the same function as bulkLimiter's), or `public: true` to show every job to anyone who has its id: job ids are guessable",
    );
  }
  const param = o.param ?? 'id';
  if (typeof param !== 'string' || param.length === 0) refuse('param', 'a route parameter name', o.param);
  if (o.param !== undefined && o.id !== undefined) throw new ConfigError('ERR_BL_PARAM', 'Pass either `param` or `id`, not both');
  const { limiter, group, id } = options;
  const misconfigured = createMisconfigured(limiter.options.logger, limiter.name);
  return async (ctx) => {
    const jobId = id ? id(ctx) : routeParam(ctx, param);
    if (jobId === NO_PARAM) {
      const message = `the route of jobStatus() has no \`:${param}\` parameter (option \`param\`, default 'id'): mount it as '/jobs/:${param}' or pass the route's parameter name`;
      return { status: 500, problem: misconfigured('param', param, '', { code: 'WRN_BL_ROUTE_PARAM', message }).error.problem };
    }
    let job: JobInfo | null;
    try {
      job = jobId ? await limiter.getJob(jobId) : null;
    } catch {
      return UNAVAILABLE;
    }
    if (job === null) return NOT_FOUND;
    if (group !== undefined) {
      const requester = await group(ctx);
      if (requester !== undefined && requester !== null && typeof requester !== 'string' && typeof requester !== 'object') {
        return { status: 500, problem: misconfigured('group', requester, 'a string, or undefined / null for none').error.problem };
      }
      if (requester !== job.group) return NOT_FOUND;
    }
    return { status: 200, body: toBody(job) };
  };
}

function toBody(job: JobInfo): JobStatusBody {
  const iso = (ms: number) => new Date(ms).toISOString();
  return {
    id: job.id,
    type: job.type,
    state: job.state,
    attempts: job.attempts,
    stalls: job.stalls,
    snoozes: job.snoozes,
    createdAt: iso(job.createdAt),
    runAt: iso(job.runAt),
    ...(job.finishedAt === undefined ? {} : { finishedAt: iso(job.finishedAt) }),
    ...(job.result === undefined ? {} : { result: job.result }),
    ...(job.error === undefined ? {} : { error: job.error }),
  };
}
