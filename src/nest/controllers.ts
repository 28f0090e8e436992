/**
 * A deferred job's status and the dashboard as Nest controllers, made for a path: add the returned classes to a
 * module's `controllers`. Translation only (../middleware/job-status.ts, ../dashboard/handler.ts); both are left
 * out of a global BulkLimiterGuard. Replies go through Nest's HTTP adapter, so they work on Express and Fastify.
 */
import { All, Controller, Get, Inject, Req, Res, type Type } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { createDashboard, type DashboardHandler, type DashboardOptions } from '../dashboard/handler';
import type { Limiter } from '../limiter/limiter';
import { NO_PARAM, createJobStatusReader, type JobStatusOptions } from '../middleware/job-status';
import { PROBLEM_CONTENT_TYPE } from '../middleware/rejection';
import { refuse } from '../util/validate';
import { SkipBulkLimit, type NestRequest } from './decorators';
import { BULK_LIMITER } from './tokens';

export interface JobStatusControllerOptions extends Omit<JobStatusOptions<NestRequest>, 'limiter'> {
  /** The controller's path; the id follows it (`/jobs/:id`). @defaultValue `'jobs'` */
  readonly path?: string;
  /** @defaultValue the module's limiter */
  readonly limiter?: Limiter;
}

export interface DashboardControllerOptions extends Omit<DashboardOptions<NestRequest>, 'limiters'> {
  /** @defaultValue `'dashboard'` */
  readonly path?: string;
  /** @defaultValue the module's limiter */
  readonly limiters?: readonly Limiter[];
}

interface Adapter {
  setHeader(response: unknown, name: string, value: string): unknown;
  reply(response: unknown, body: unknown, status?: number): unknown;
}

/** `controllers: [jobStatusController({ group: (req) => req.headers['x-tenant'] })]` serves GET /jobs/:id. */
export function jobStatusController(options: JobStatusControllerOptions): Type<unknown> {
  const { path = 'jobs', limiter: given, ...rest } = options ?? ({} as JobStatusControllerOptions);
  if (typeof path !== 'string') refuse('path', 'a path', path);
  const param = rest.param ?? 'id';
  // checked now, with a stand-in limiter: a wrong option fails where it is written
  if (given === undefined) createJobStatusReader({ ...rest, limiter: { getJob: () => null, options: {} } as never }, () => NO_PARAM);
  class JobStatusController {
    private readonly read: (request: NestRequest) => Promise<import('../middleware/job-status').JobStatusAnswer>;
    constructor(
      limiter: Limiter,
      private readonly host: HttpAdapterHost,
    ) {
      this.read = createJobStatusReader<NestRequest>({ ...rest, limiter: given ?? limiter }, (request, name) => {
        const params = request.params as Record<string, unknown> | undefined;
        if (typeof params !== 'object' || params === null || !(name in params)) return NO_PARAM;
        const value = params[name];
        return typeof value === 'string' ? value : undefined;
      });
    }

    async status(request: NestRequest, response: unknown): Promise<void> {
      const adapter = this.host.httpAdapter as unknown as Adapter;
      const answer = await this.read(request);
      if (answer.status === 200) return void adapter.reply(response, answer.body, 200);
      adapter.setHeader(response, 'Content-Type', PROBLEM_CONTENT_TYPE);
      adapter.reply(response, JSON.stringify(answer.problem), answer.status);
    }
  }
  Controller(path)(JobStatusController);
  SkipBulkLimit()(JobStatusController);
  Inject(BULK_LIMITER)(JobStatusController, undefined, 0);
  Inject(HttpAdapterHost)(JobStatusController, undefined, 1);
  route(JobStatusController.prototype, 'status', Get(`:${param}`));
  return JobStatusController;
}

/** `controllers: [dashboardController({ authorize })]` serves the page at /dashboard, its JSON, dead-letter and override actions. */
export function dashboardController(options: DashboardControllerOptions = {}): Type<unknown> {
  const { path = 'dashboard', limiters: given, ...rest } = options ?? {};
  if (typeof path !== 'string') refuse('path', 'a path', path);
  if (given !== undefined) createDashboard({ ...rest, limiters: given });
  class DashboardController {
    private readonly handle: DashboardHandler<NestRequest>;
    constructor(
      limiter: Limiter,
      private readonly host: HttpAdapterHost,
    ) {
      this.handle = createDashboard<NestRequest>({ ...rest, limiters: given ?? [limiter] });
    }

    page(request: NestRequest, response: unknown) {
      return this.answer('/', request, response);
    }
    data(request: NestRequest, response: unknown) {
      return this.answer('/data', request, response);
    }
    retry(request: NestRequest, response: unknown) {
      return this.answer('/dead/retry', request, response);
    }
    remove(request: NestRequest, response: unknown) {
      return this.answer('/dead/remove', request, response);
    }
    setOverride(request: NestRequest, response: unknown) {
      return this.answer('/overrides/set', request, response);
    }
    removeOverride(request: NestRequest, response: unknown) {
      return this.answer('/overrides/remove', request, response);
    }

    private async answer(path: string, request: NestRequest, response: unknown): Promise<void> {
      const adapter = this.host.httpAdapter as unknown as Adapter;
      const { method, url } = request as unknown as { method: string; url: string };
      const query = url.indexOf('?');
      const answer = await this.handle(request, {
        method,
        path,
        search: query < 0 ? '' : url.slice(query + 1),
        header: (name) => {
          const value = request.headers[name];
          return Array.isArray(value) ? value[0] : value;
        },
      });
      // every path routed here is the dashboard's
      const { status, headers, body } = answer!;
      for (const name in headers) adapter.setHeader(response, name, headers[name]!);
      adapter.reply(response, body, status);
    }
  }
  Controller(path)(DashboardController);
  SkipBulkLimit()(DashboardController);
  Inject(BULK_LIMITER)(DashboardController, undefined, 0);
  Inject(HttpAdapterHost)(DashboardController, undefined, 1);
  route(DashboardController.prototype, 'page', Get());
  route(DashboardController.prototype, 'data', Get('data'));
  route(DashboardController.prototype, 'retry', All('dead/retry'));
  route(DashboardController.prototype, 'remove', All('dead/remove'));
  route(DashboardController.prototype, 'setOverride', All('overrides/set'));
  route(DashboardController.prototype, 'removeOverride', All('overrides/remove'));
  return DashboardController;
}

/** A route handler `(request, response)`: its method decorator, `@Req()` and `@Res()`, applied by hand. */
function route(prototype: object, name: string, method: MethodDecorator): void {
  method(prototype, name, Object.getOwnPropertyDescriptor(prototype, name)!);
  Req()(prototype, name, 0);
  Res()(prototype, name, 1);
}
