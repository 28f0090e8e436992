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

describe("koa: a 429 is the middleware's answer with onLimit 'respond', the app's error with 'next'", () => {
  const make = (onLimit: 'respond' | 'next') => {
    const app = new Koa();
    app.silent = true;
    const errors: Array<{ status?: number; expose?: boolean; headers?: Record<string, string>; problem?: unknown; stack?: string }> = [];
    app.on('error', (error) => errors.push(error));
    app.use(bulkLimiter({ limiter: createLimiter({ limit: 1, tuning: { burst: 1 }, windowMs: 60_000 }), group: () => 'tenant', onLimit }));
    app.use((ctx) => {
      ctx.body = 'ok';
    });
    return { server: app.callback(), errors };
  };

  test("'respond': answered directly (problem+json, headers), no 'error' event, Koa's error path not taken", async () => {
    const { server, errors } = make('respond');
    expect((await request(server).get('/')).status).toBe(200);
    const denied = await request(server).get('/');
    expect(denied.status).toBe(429);
    expect(denied.headers['content-type']).toBe('application/problem+json');
    expect(denied.headers['retry-after']).toBeDefined();
    expect(denied.headers.ratelimit).toMatch(/^"default";r=0;t=\d+$/);
    expect(JSON.parse(denied.text)).toMatchObject({ status: 429, title: 'Too Many Requests', 'violated-policies': ['default'] });
    expect(errors).toEqual([]);
  });

  test("'next': the http-error reaches the app's error handling with status, expose, headers and the same problem body", async () => {
    const respond = make('respond');
    await request(respond.server).get('/');
    const answered = await request(respond.server).get('/');
    const { server, errors } = make('next');
    expect((await request(server).get('/')).status).toBe(200);
    const denied = await request(server).get('/');
    expect(denied.status).toBe(429);
    expect(denied.headers['retry-after']).toBeDefined(); // Koa renders err.headers
    expect(errors).toHaveLength(1);
    const [error] = errors;
    expect(error!.status).toBe(429);
    expect(error!.expose).toBe(true);
    expect(error!.headers).toMatchObject({ 'Retry-After': expect.any(String), RateLimit: expect.stringMatching(/^"default";r=0;t=\d+$/) });
    expect(JSON.stringify(error!.problem)).toBe(answered.text);
  });
});
