/**
 * Nest apps for the HTTP tests, on platform-express or platform-fastify, as supertest request listeners: the
 * app's own HTTP server gets each request once the app is initialised. Controllers are decorated by hand (the
 * tests compile without experimentalDecorators), as a plain-JavaScript Nest app does.
 */
import 'reflect-metadata';
import {
  Catch,
  Controller,
  Get,
  Module,
  Req,
  Res,
  type ArgumentsHost,
  type DynamicModule,
  type ExceptionFilter,
  type INestApplication,
  type Type,
} from '@nestjs/common';
import { HttpAdapterHost, NestFactory } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import type { RequestListener, Server } from 'node:http';

export type Platform = 'express' | 'fastify';

export interface NestAppSpec {
  readonly imports?: Array<DynamicModule | Type<unknown>>;
  readonly controllers?: Array<Type<unknown>>;
  readonly providers?: Array<Type<unknown>>;
  /** An exception filter for every error, answering JSON `{ handled, status, code, message, errHeaders, hasDecision }`. */
  readonly appFilter?: boolean;
  readonly trustProxy?: boolean;
}

/** Decorates `prototype[name]` as a route handler `(req, res)` with `decorators` (a method's, then `@Req()`, `@Res()`). */
export function handler(prototype: object, name: string, decorators: MethodDecorator[]): void {
  const descriptor = Object.getOwnPropertyDescriptor(prototype, name)!;
  for (const d of decorators) d(prototype, name, descriptor);
  Req()(prototype, name, 0);
  Res()(prototype, name, 1);
}

/** A controller at `path` whose GET routes answer 'ok' (text) after `before(req)`. */
export function okController(paths: Record<string, MethodDecorator[]>, before?: (req: unknown) => Promise<void>): Type<unknown> {
  class OkController {
    constructor(readonly host: HttpAdapterHost) {}
  }
  Object.entries(paths).forEach(([path, decorators], i) => {
    const name = `route${i}`;
    Object.defineProperty(OkController.prototype, name, {
      configurable: true,
      writable: true,
      value: async function (this: OkController, req: { rateLimit?: { remaining: number; rules?: unknown } }, res: unknown) {
        await before?.(req);
        const adapter = this.host.httpAdapter;
        const seen = req.rateLimit;
        if (seen) adapter.setHeader(res, 'x-seen-decision', JSON.stringify({ remaining: seen.remaining, rules: seen.rules }));
        adapter.setHeader(res, 'content-type', 'text/plain; charset=utf-8');
        adapter.reply(res, 'ok', 200);
      },
    });
    handler(OkController.prototype, name, [Get(path), ...decorators]);
  });
  Controller()(OkController);
  Reflect.defineMetadata('design:paramtypes', [HttpAdapterHost], OkController);
  return OkController;
}

class AppFilter implements ExceptionFilter {
  constructor(private readonly host: HttpAdapterHost) {}
  catch(exception: unknown, host: ArgumentsHost): void {
    const e = exception as { getStatus?: () => number; status?: number; code?: string; message: string; headers?: object; decision?: unknown };
    const status = e.getStatus?.() ?? e.status ?? 500;
    const res = host.switchToHttp().getResponse<unknown>();
    const adapter = this.host.httpAdapter;
    adapter.setHeader(res, 'content-type', 'application/json; charset=utf-8');
    adapter.reply(
      res,
      { handled: true, status, code: e.code, message: e.message, errHeaders: e.headers, hasDecision: e.decision !== undefined },
      status,
    );
  }
}
Catch()(AppFilter);

/** A request listener that also holds its Nest app (to close it, or get a provider). */
export type NestListener = RequestListener & { readonly app: Promise<INestApplication> };

/** A Nest app of `spec` on `platform`, as a request listener (initialised at once; requests wait for it). */
export function nestListener(platform: Platform, spec: NestAppSpec): NestListener {
  // eslint-disable-next-line @typescript-eslint/no-extraneous-class -- a Nest module is a decorated class
  class AppModule {}
  Module({ imports: spec.imports ?? [], controllers: spec.controllers ?? [], providers: spec.providers ?? [] })(AppModule);
  const app = (async (): Promise<INestApplication> => {
    const adapter = platform === 'express' ? new ExpressAdapter() : new FastifyAdapter({ trustProxy: spec.trustProxy ?? false });
    const app = await NestFactory.create(AppModule, adapter, { logger: false });
    if (platform === 'express' && spec.trustProxy)
      (app.getHttpAdapter().getInstance() as { set(k: string, v: unknown): void }).set('trust proxy', true);
    if (spec.appFilter) app.useGlobalFilters(new AppFilter(app.get(HttpAdapterHost)));
    await app.init();
    if (platform === 'fastify') await (app.getHttpAdapter().getInstance() as { ready(): Promise<unknown> }).ready();
    return app;
  })();
  // unhandled until a request or the test awaits it
  app.catch(() => undefined);
  const listener: RequestListener = (req, res) => {
    app.then(
      (a) => (a.getHttpServer() as Server).emit('request', req, res),
      (error: unknown) => {
        res.statusCode = 599;
        res.end(String(error));
      },
    );
  };
  return Object.assign(listener, { app });
}
