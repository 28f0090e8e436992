/**
 * bulkLimiter and jobStatus for Koa: translation only; the logic is in ./shared.ts, ./defer.ts and
 * ./job-status.ts. Allowed: RateLimit headers, then `await next()`. Deferred: 202 + Location +
 * `{ jobId, state, runAt }`. Rejected: 429 / 503 / 400 with the headers and a problem+json body, or
 * (`onLimit: 'next'`) the http-error thrown to the app's error handling. Koa clears response headers
 * before rendering an error, so they also ride on `err.headers`.
 */
import type { Context, Middleware, Next } from 'koa';
import { PROBLEM_CONTENT_TYPE } from './rejection';
import { createRunner, type BulkLimiterOptions } from './shared';
import { releaseWhenDone } from './release';
import { NO_PARAM, createJobStatusReader, type JobStatusOptions } from './job-status';
import { createDashboard, type DashboardOptions } from '../dashboard/handler';
import type { Decision } from '../types';
import { refuse } from '../util/validate';

export type { BulkLimiterOptions, DeferOptions, DeferredBody } from './shared';
export type { LimitError, ProblemDetails } from './rejection';
export type { JobStatusOptions, JobStatusBody } from './job-status';
export type { DashboardOptions } from '../dashboard/handler';
export type { ActionsState, DashboardData, DeadView, GroupView, LimiterView, Series } from '../dashboard/data';

/** Koa has no mount paths: the dashboard answers under `path`. */
export interface KoaDashboardOptions extends DashboardOptions<Context> {
  /** Where the page lives; everything else passes through. @defaultValue `'/dashboard'` */
  readonly path?: string;
}

export function bulkLimiter(options: BulkLimiterOptions<Context>): Middleware {
  const runner = createRunner<Context>(options, { clientIp: (ctx) => ctx.ip, header: (ctx, name) => ctx.get(name) || undefined });
  const throwErrors = runner.onLimit === 'next';

  const limiter = runner.limiter;

  return async function bulkLimiterMiddleware(ctx: Context, next: Next): Promise<void> {
    const outcome = await runner.evaluate(ctx);
    if (outcome.kind === 'pass') {
      const headers = outcome.headers;
      // Koa's ctx.set(object) goes through two delegations and checks per field; these are strings and nothing is sent yet.
      const res = ctx.res;
      for (const name in headers) res.setHeader(name, headers[name]!);
      const decision = outcome.decision;
      if (decision === undefined) return next(); // skipped: no headers, nothing to keep or release
      // downstream code reads the decision (remaining, each rule's state)
      (ctx.state as { rateLimit?: Decision }).rateLimit = decision;
      const release = releaseWhenDone(limiter, decision, res);
      try {
        await next();
      } catch (error) {
        release();
        // Koa drops the response headers when it renders a downstream error; keep the RateLimit ones.
        keepHeadersOn(error, headers);
        throw error;
      }
      return;
    }
    if (outcome.kind === 'deferred') {
      ctx.set(outcome.headers);
      ctx.status = 202;
      ctx.body = outcome.body;
      return;
    }
    // 'next': the http-error (status, headers, expose, problem) to the app's error handling. 'respond': the answer
    // itself, not a thrown error rendered by Koa's ctx.onerror (no stack trace, no 'error' event).
    if (throwErrors) throw outcome.error;
    const headers = outcome.headers;
    const res = ctx.res;
    for (const name in headers) res.setHeader(name, headers[name]!);
    // the header ctx.type would write (Koa adds no charset to this type), without its MIME lookup per denial
    res.setHeader('Content-Type', PROBLEM_CONTENT_TYPE);
    ctx.status = outcome.status;
    ctx.body = outcome.body;
  };
}

/** GET handler for a deferred job's status URL (@koa/router route `…/:id`, or the last path segment). */
export function jobStatus(options: JobStatusOptions<Context>): Middleware {
  const read = createJobStatusReader<Context>(options, (ctx, param) => {
    const params = (ctx as Context & { params?: Record<string, unknown> }).params;
    // Without a router (no ctx.params) the id is the last path segment.
    if (params === undefined) return lastSegment(ctx.path);
    if (!(param in params)) return NO_PARAM;
    const value = params[param];
    return typeof value === 'string' ? value : undefined;
  });
  return async function jobStatusHandler(ctx: Context): Promise<void> {
    const answer = await read(ctx);
    ctx.status = answer.status;
    if (answer.status === 200) ctx.body = answer.body;
    else {
      ctx.type = PROBLEM_CONTENT_TYPE;
      ctx.body = JSON.stringify(answer.problem);
    }
  };
}

/**
 * The live dashboard page and its JSON under `path`: `app.use(dashboard({ limiters, path: '/dashboard' }))`.
 * Dead-letter actions answer 403 unless `authorize(ctx)` resolves to true.
 */
export function dashboard(options: KoaDashboardOptions): Middleware {
  const { path: mount = '/dashboard', ...rest } = options ?? ({} as KoaDashboardOptions);
  if (typeof mount !== 'string' || !mount.startsWith('/')) refuse('path', "a path starting with '/'", mount);
  const prefix = mount.replace(/\/+$/, '');
  const handle = createDashboard<Context>(options === null || typeof options !== 'object' ? options : rest, ['path']);
  return async function dashboardMiddleware(ctx: Context, next: Next): Promise<void> {
    const path = ctx.path === prefix ? '/' : ctx.path.startsWith(`${prefix}/`) ? ctx.path.slice(prefix.length) : undefined;
    const answer =
      path === undefined
        ? undefined
        : await handle(ctx, { method: ctx.method, path, search: ctx.querystring, header: (name) => ctx.get(name) || undefined });
    if (answer === undefined) return next();
    ctx.status = answer.status;
    ctx.set(answer.headers);
    ctx.body = answer.body;
  };
}

function keepHeadersOn(error: unknown, headers: Record<string, string>): void {
  if (typeof error !== 'object' || error === null || Object.isFrozen(error)) return;
  const own = (error as { headers?: unknown }).headers;
  const merged = { ...headers, ...(typeof own === 'object' && own !== null ? own : {}) };
  try {
    (error as { headers?: unknown }).headers = merged;
  } catch {
    // a read-only headers property: leave the error as the app made it
  }
}

function lastSegment(path: string): string | undefined {
  const segment = path.slice(path.lastIndexOf('/') + 1);
  try {
    return segment ? decodeURIComponent(segment) : undefined;
  } catch {
    return undefined;
  }
}
