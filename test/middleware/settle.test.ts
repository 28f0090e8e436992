/**
 * The middleware's `settle` option (docs/settle.md): an allowed request's decision carries settle(actual) on
 * `req.rateLimit` (Express), `ctx.state.rateLimit` (Koa) and `request.rateLimit` (Fastify, also in a route's
 * `config.bulkLimiter`); the unused units come back for the group's next requests. `settle` with `defer` fails at
 * construction. The store clock is frozen: only settling frees the budget.
 */
import express from 'express';
import Koa from 'koa';
import request from 'supertest';
import { ConfigError } from '../../src/errors';
import { createLimiter, type Limiter } from '../../src/limiter/limiter';
import { MemoryStore } from '../../src/memory/memory-store';
import { bulkLimiter as expressLimiter, type RateLimitedRequest } from '../../src/middleware/express';
import { bulkLimiter as fastifyLimiter } from '../../src/middleware/fastify';
import { bulkLimiter as koaLimiter } from '../../src/middleware/koa';
import type { Decision } from '../../src/types';
import { FROZEN_NOW } from './cases';
import { fastifyListener } from './fastify-app';

let seq = 0;
/** 20 units a minute, all of them at once: an estimate of 16 leaves 4 until it is settled. */
const newLimiter = (): Limiter =>
  createLimiter({
    store: new MemoryStore({ clock: () => FROZEN_NOW }),
    name: `settle-mw-${++seq}`,
    limit: 20,
    windowMs: 60_000,
    tuning: { burst: 20, reserve: 1 },
  });
const tenant = (r: { headers: Record<string, unknown> }) => r.headers['x-tenant'] as string | undefined;

/** GET /work?used=n: estimated 16, settled at n; returns the settle result. */
async function walk(app: Parameters<typeof request>[0]): Promise<void> {
  const first = await request(app).get('/work?used=2').set('x-tenant', 'a');
  expect(first.status).toBe(200);
  expect(first.body).toEqual({ status: 'settled', refunded: 14, debt: 0 });
  // 4 + 14 = 18 units: a second estimate of 16 fits only because of the refund
  const second = await request(app).get('/work?used=16').set('x-tenant', 'a');
  expect(second.status).toBe(200);
  expect((await request(app).get('/work?used=0').set('x-tenant', 'a')).status).toBe(429);
}

test('Express: req.rateLimit.settle(n)', async () => {
  const app = express();
  app.use(expressLimiter({ limiter: newLimiter(), group: (req) => tenant(req), cost: 16, settle: true }));
  app.get('/work', async (req, res) => {
    const decision = (req as RateLimitedRequest).rateLimit!;
    res.json(await decision.settle!(Number(req.query['used'])));
  });
  await walk(app);
});

test('Koa: ctx.state.rateLimit.settle(n)', async () => {
  const app = new Koa();
  app.use(koaLimiter({ limiter: newLimiter(), group: (ctx) => tenant(ctx.request), cost: 16, settle: true }));
  app.use(async (ctx) => {
    const decision = (ctx.state as { rateLimit: Decision }).rateLimit;
    ctx.body = await decision.settle!(Number(ctx.query['used']));
  });
  await walk(app.callback());
});

test('Fastify: request.rateLimit.settle(n), from a route setting', async () => {
  const limiter = newLimiter();
  const app = fastifyListener((root) => {
    void root.register(async (scope) => {
      await scope.register(fastifyLimiter, { limiter, group: tenant });
      scope.get('/work', { config: { bulkLimiter: { cost: 16, settle: true } } }, async (req) => {
        return req.rateLimit!.settle!(Number((req.query as { used: string }).used));
      });
    });
  });
  await walk(app);
});

test('a request without settle has nothing to settle; settle with defer fails at construction', () => {
  expect(() => expressLimiter({ limiter: newLimiter(), settle: true, defer: { type: 'x', statusUrl: (id: string) => `/jobs/${id}` } })).toThrow(
    ConfigError,
  );
  expect(() => expressLimiter({ limiter: newLimiter(), settle: 'yes' as unknown as boolean })).toThrow(ConfigError);
});

test('settle with a limiter that has classes fails at construction (ERR_BL_SETTLE)', () => {
  const limiter = createLimiter({
    store: new MemoryStore({ clock: () => FROZEN_NOW }),
    name: `settle-mw-${++seq}`,
    limit: 20,
    windowMs: 60_000,
    classes: { critical: { share: 0.5 } },
  });
  expect(() => expressLimiter({ limiter, settle: true })).toThrow(expect.objectContaining({ code: 'ERR_BL_SETTLE' }) as Error);
  expect(() => expressLimiter({ limiter, settle: false })).not.toThrow();
});
