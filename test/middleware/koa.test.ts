import Koa from 'koa';
import request from 'supertest';
import { createLimiter } from '../../src/limiter/limiter';
import { bulkLimiter } from '../../src/middleware/koa';
import type { Decision } from '../../src/types';
import type { Harness, Options } from './cases';
import { runCases } from './run-cases';

const harness: Harness = {
  name: 'koa',
  app(routes, errorHandler = 'default', settings = {}) {
    const app = new Koa();
    app.silent = true;
    app.proxy = settings.trustProxy ?? false;
    if (errorHandler === 'app') {
      app.use(async (ctx, next) => {
        try {
          await next();
        } catch (e) {
          const err = e as { status?: number; code?: string; message: string; headers?: Record<string, string>; decision?: unknown };
          ctx.status = err.status ?? 500;
          if (err.headers) ctx.set(err.headers);
          ctx.body = {
            handled: true,
            status: err.status,
            code: err.code,
            message: err.message,
            errHeaders: err.headers,
            hasDecision: err.decision !== undefined,
          };
        }
      });
    }
    const mounted = Object.entries(routes).map(
      ([path, options]) => [path, bulkLimiter(options as Options as Parameters<typeof bulkLimiter>[0])] as const,
    );
    app.use(async (ctx, next) => {
      const route = mounted.find(([path]) => path === ctx.path);
      if (!route) return next();
      await route[1](ctx, async () => {
        if (settings.hold) await settings.hold();
        // what downstream code sees of the decision
        const seen = (ctx.state as { rateLimit?: Decision }).rateLimit;
        if (seen) ctx.set('x-seen-decision', JSON.stringify({ remaining: seen.remaining, rules: seen.rules }));
        ctx.body = 'ok';
      });
    });
    return app.callback();
  },
};

runCases(harness);

describe('koa: an error thrown after the limiter let the request through', () => {
  const make = (thrown: () => unknown) => {
    const app = new Koa();
    app.silent = true;
    app.use(bulkLimiter({ limiter: createLimiter({ limit: 100, windowMs: 60_000 }), group: () => 'tenant' }));
    app.use(async () => {
      throw thrown();
    });
    return app.callback();
  };

  test.each([
    ['a plain Error', () => new Error('boom')],
    ['an http-error with its own headers', () => Object.assign(new Error('teapot'), { status: 418, expose: true, headers: { 'x-own': '1' } })],
  ])('%s keeps the RateLimit headers on the error response', async (_label, thrown) => {
    const res = await request(make(thrown)).get('/');
    expect(res.status).toBe((thrown() as { status?: number }).status ?? 500);
    expect(res.headers['ratelimit-policy']).toBeDefined();
    expect(res.headers.ratelimit).toMatch(/^"default";r=\d+;t=\d+$/);
    if ((thrown() as { headers?: object }).headers) expect(res.headers['x-own']).toBe('1');
  });
});
