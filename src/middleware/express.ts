/**
 * bulkLimiter and jobStatus for Express (4 and 5): translation only; the logic is in ./shared.ts,
 * ./defer.ts and ./job-status.ts. Allowed: RateLimit headers, then `next()`. Deferred: 202 + Location +
 * `{ jobId, state, runAt }`. Rejected: 429 / 503 / 400 with the headers and a problem+json body, or
 * (`onLimit: 'next'`) the http-error passed to `next(err)` with the headers on `err.headers`.
 */
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { PROBLEM_CONTENT_TYPE } from './rejection';
import { createRunner, type BulkLimiterOptions, type Outcome } from './shared';
import { releaseWhenDone } from './release';
import { keepDecision } from './request-decision';
import { NO_PARAM, createJobStatusReader, type JobStatusOptions } from './job-status';
import type { HeaderMap } from './headers';
import type { Decision } from '../types';
import { createDashboard, type DashboardOptions } from '../dashboard/handler';

export type { BulkLimiterOptions, DeferOptions, DeferredBody } from './shared';
export type { LimitError, ProblemDetails } from './rejection';
export type { JobStatusOptions, JobStatusBody } from './job-status';
export type { DashboardOptions } from '../dashboard/handler';
export type { ActionsState, DashboardData, DeadView, GroupView, LimiterView, Series } from '../dashboard/data';

/** An Express request the middleware let through: `req.rateLimit` holds its decision. */
export type RateLimitedRequest = Request & { rateLimit?: Decision };

export function bulkLimiter(options: BulkLimiterOptions<Request>): RequestHandler {
  const runner = createRunner<Request>(options, { clientIp: (req) => req.ip, header: (req, name) => req.get(name) });
  const passErrors = runner.onLimit === 'next';

  const limiter = runner.limiter;

  /** The outcome as Express answers it. */
  function answer(outcome: Outcome, req: Request, res: Response, next: NextFunction): void {
    try {
      const headers = outcome.headers;
      for (const name in headers) res.setHeader(name, headers[name]!);
      if (outcome.kind === 'pass') {
        // downstream code reads the decision (remaining, each rule's state); skipped requests have none
        if (outcome.decision !== undefined) {
          keepDecision(req, outcome.decision);
          releaseWhenDone(limiter, outcome.decision, res);
        }
        return next();
      }
      if (outcome.kind === 'deferred') {
        res.status(202).json(outcome.body);
        return;
      }
      if (passErrors) return next(outcome.error);
      res.statusCode = outcome.status;
      res.setHeader('Content-Type', PROBLEM_CONTENT_TYPE);
      res.end(outcome.body);
    } catch (error) {
      next(error);
    }
  }

  // Not an async function: Express 5's router would chain a handler on the promise it returned, per request.
  return function bulkLimiterMiddleware(req: Request, res: Response, next: NextFunction): void {
    runner.evaluate(req).then((outcome) => answer(outcome, req, res, next), next);
  };
}

/** GET handler for a deferred job's status URL (route `…/:id`, or the parameter named by `param`). */
export function jobStatus(options: JobStatusOptions<Request>): RequestHandler {
  const read = createJobStatusReader<Request>(options, (req, param) => {
    const params = req.params as Record<string, unknown>;
    if (!(param in params)) return NO_PARAM;
    const value = params[param];
    return typeof value === 'string' ? value : undefined;
  });
  return async function jobStatusHandler(req: Request, res: Response, next: NextFunction): Promise<void> {
    try {
      const answer = await read(req);
      if (answer.status === 200) res.json(answer.body);
      else res.status(answer.status).setHeader('Content-Type', PROBLEM_CONTENT_TYPE).end(JSON.stringify(answer.problem));
    } catch (error) {
      next(error);
    }
  };
}

/**
 * The live dashboard page and its JSON, on a mount path: `app.use('/dashboard', dashboard({ limiters }))`.
 * Dead-letter actions answer 403 unless `authorize(req)` resolves to true.
 */
export function dashboard(options: DashboardOptions<Request>): RequestHandler {
  const handle = createDashboard<Request>(options);
  return async function dashboardHandler(req: Request, res: Response, next: NextFunction): Promise<void> {
    try {
      const query = req.originalUrl.indexOf('?');
      const answer = await handle(req, {
        method: req.method,
        path: req.path,
        search: query < 0 ? '' : req.originalUrl.slice(query + 1),
        header: (name) => req.get(name),
      });
      if (answer === undefined) return next();
      res.status(answer.status);
      setHeaders(res, answer.headers);
      res.end(req.method === 'HEAD' ? undefined : answer.body);
    } catch (error) {
      next(error);
    }
  };
}

function setHeaders(res: Response, headers: HeaderMap): void {
  for (const name in headers) res.setHeader(name, headers[name] as string);
}
