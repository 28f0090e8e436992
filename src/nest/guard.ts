/**
 * The guard: the runner of ../middleware/shared.ts per route, with the module's options and the route's
 * `@BulkLimit` settings (controller's, then the method's). Allowed: the RateLimit headers on the response and
 * `request.rateLimit`. Otherwise a BulkLimitException (an HttpException), the headers already on the response:
 * with `onLimit: 'respond'` the module's BulkLimitFilter answers it as Express and Koa do (429 / 503 / 400
 * problem+json, or 202 + Location + `{ jobId, state, runAt }` for a deferred request); with `'next'` it reaches
 * the app's exception filters with the problem, the headers and the decision on it. Not HTTP (RPC, WebSockets): passes.
 */
import { HttpException, Inject, Injectable, type CanActivate, type ExecutionContext, type Type } from '@nestjs/common';
import { HttpAdapterHost, Reflector } from '@nestjs/core';
import type { ServerResponse } from 'node:http';
import { ConfigError } from '../errors';
import type { HeaderMap } from '../middleware/headers';
import type { Limiter } from '../limiter/limiter';
import { refuseUnknownOptions } from '../util/option-names';
import { ROUTE_SETTING_NAMES } from '../middleware/middleware-options';
import type { ProblemDetails } from '../middleware/rejection';
import { releaseWhenDone } from '../middleware/release';
import { keepDecision } from '../middleware/request-decision';
import { createRunner, type Outcome, type Runner } from '../middleware/shared';
import type { Decision } from '../types';
import type { NestRequest, RouteLimit } from './decorators';
import type { ResolvedModuleOptions } from './options';
import { BULK_LIMITER_OPTIONS, ROUTE_LIMIT } from './tokens';

/** A request the guard did not let through, as an HttpException; its response is the problem (or the 202 body). */
export class BulkLimitException extends HttpException {
  /** As on an http-error (bulk-limiter/express's `onLimit: 'next'`); `getStatus()` too. */
  readonly statusCode: number;
  readonly expose = true;
  readonly code: string | undefined;

  constructor(
    status: number,
    response: object,
    /** The RateLimit headers (and Retry-After, Location), also set on the response. */
    readonly headers: HeaderMap,
    /** The admission that denied the request (429, 503, 202); absent for a 400 or 500. */
    readonly decision: Decision | undefined,
    /** The RFC 9457 problem; absent for a 202. */
    readonly problem: ProblemDetails | undefined,
    code?: string,
    /** The problem+json body as bulk-limiter/express sends it (BulkLimitFilter sends it as is). */
    readonly body?: string,
  ) {
    super(response, status);
    this.message = problem?.detail ?? 'The request was deferred';
    this.statusCode = status;
    this.code = code;
  }
}

const NEST_ROUTE_SETTING_NAMES: readonly (keyof RouteLimit)[] = [...ROUTE_SETTING_NAMES, 'enabled'];
const READER = {
  clientIp: (request: NestRequest) => request.ip,
  header: (request: NestRequest, name: string) => {
    const value = request.headers[name];
    return Array.isArray(value) ? value[0] : value;
  },
};
/** A route without a limit, cached like a runner. */
const OFF = null;

export class BulkLimiterGuard implements CanActivate {
  /** By controller, then handler: an inherited handler may run under another controller's settings. */
  private readonly runners = new Map<object, Map<object, Runner<NestRequest> | typeof OFF>>();

  constructor(
    private readonly options: ResolvedModuleOptions,
    private readonly reflector: Reflector,
    private readonly adapterHost: HttpAdapterHost,
  ) {}

  /** The module's limiter. */
  get limiter(): Limiter {
    return this.options.limiter;
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (context.getType() !== 'http') return true;
    const runner = this.runnerOf(context.getClass(), context.getHandler());
    if (runner === OFF) return true;
    const http = context.switchToHttp();
    const request = http.getRequest<NestRequest>();
    const response = http.getResponse<object>();
    const outcome = await runner.evaluate(request);
    this.setHeaders(response, outcome.headers);
    if (outcome.kind === 'pass') {
      if (outcome.decision !== undefined) keepDecision(request, outcome.decision);
      releaseWhenDone(runner.limiter, outcome.decision, rawResponse(response));
      return true;
    }
    throw this.exceptionOf(outcome);
  }

  /** The runner of a route, made (and its settings checked) once; `onRoutes` makes them all at boot. */
  runnerOf(controller: Type<unknown>, handler: object): Runner<NestRequest> | typeof OFF {
    let ofController = this.runners.get(controller);
    if (ofController === undefined) this.runners.set(controller, (ofController = new Map()));
    let runner = ofController.get(handler);
    if (runner === undefined) {
      const own = this.reflector.get<RouteLimit | undefined>(ROUTE_LIMIT, handler as Type<unknown>);
      const shared = this.reflector.get<RouteLimit | undefined>(ROUTE_LIMIT, controller);
      for (const settings of [shared, own]) refuseUnknownOptions(settings ?? {}, NEST_ROUTE_SETTING_NAMES, '@BulkLimit()');
      const { enabled = true, ...settings }: RouteLimit = { ...(shared ?? {}), ...(own ?? {}) };
      if (typeof enabled !== 'boolean') throw new ConfigError('ERR_BL_ENABLED', 'Expected `enabled` of @BulkLimit() to be a boolean');
      const merged = { ...this.options.middleware, ...settings };
      // A group function of the route replaces the default one, and so its IPv6 grouping.
      if (settings.group !== undefined) delete (merged as { ipv6Subnet?: unknown }).ipv6Subnet;
      runner = enabled ? createRunner<NestRequest>(merged, READER) : OFF;
      ofController.set(handler, runner);
    }
    return runner;
  }

  private exceptionOf(outcome: Exclude<Outcome, { kind: 'pass' }>): BulkLimitException {
    if (outcome.kind === 'deferred') return new BulkLimitException(202, outcome.body, outcome.headers, outcome.decision, undefined);
    const { error } = outcome;
    const code = (error as { code?: string }).code;
    return new BulkLimitException(outcome.status, error.problem, outcome.headers, error.decision, error.problem, code, outcome.body);
  }

  private setHeaders(response: object, headers: HeaderMap): void {
    const adapter = this.adapterHost.httpAdapter;
    for (const name in headers) adapter.setHeader(response, name, headers[name] as string);
  }
}

/** Express's `res` is the Node response; Fastify's reply holds it as `raw`. */
function rawResponse(response: object): ServerResponse {
  return ((response as { raw?: ServerResponse }).raw ?? response) as ServerResponse;
}

// Decorators applied by hand: this package is compiled without experimentalDecorators.
Injectable()(BulkLimiterGuard);
Inject(BULK_LIMITER_OPTIONS)(BulkLimiterGuard, undefined, 0);
Inject(Reflector)(BulkLimiterGuard, undefined, 1);
Inject(HttpAdapterHost)(BulkLimiterGuard, undefined, 2);
