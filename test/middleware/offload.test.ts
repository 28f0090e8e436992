/**
 * Offload through the middleware, Express and Koa alike: `defer.when: 'always'` turns every request into a
 * job (202 + Location, the route never runs; a full backlog is a 429 with Retry-After), and
 * `defer.groupConcurrency` (a number or a function of the group and request) caps a group's jobs.
 */
import Router from '@koa/router';
import express from 'express';
import Koa from 'koa';
import type { RequestListener } from 'node:http';
import request from 'supertest';
import { createLimiter, type Limiter } from '../../src/limiter/limiter';
import * as onExpress from '../../src/middleware/express';
import * as onKoa from '../../src/middleware/koa';
import type { DeferOptions } from '../../src/middleware/shared';
import { MemoryStore } from '../../src/memory/memory-store';

interface AnyCtx {
  readonly query: Record<string, unknown>;
}
const tenant = (c: AnyCtx) => c.query.tenant as string | undefined;
const warnings: string[] = [];
const logger = { warn: (m: string) => void warnings.push(m), error: () => undefined };
let seq = 0;
const newLimiter = (): Limiter =>
  createLimiter({ store: new MemoryStore(), name: `offload-mw-${++seq}`, limit: 1000, windowMs: 1000, maxBacklog: 2, logger });

type MakeApp = (limiter: Limiter, defer: DeferOptions<AnyCtx>, ran: string[]) => RequestListener;

const expressApp: MakeApp = (limiter, defer, ran) => {
  const app = express();
  app.post('/export', onExpress.bulkLimiter({ limiter, group: tenant, defer }), (req, res) => {
    ran.push(String(req.query.tenant));
    res.send('ran now');
  });
  return app;
};
const koaApp: MakeApp = (limiter, defer, ran) => {
  const app = new Koa();
  app.silent = true;
  const router = new Router();
  router.post('/export', onKoa.bulkLimiter({ limiter, group: tenant, defer }), (ctx) => {
    ran.push(String(ctx.query.tenant));
    ctx.body = 'ran now';
  });
  app.use(router.routes());
  return app.callback();
};

const always = (extra: Partial<DeferOptions<AnyCtx>> = {}): DeferOptions<AnyCtx> => ({
  type: 'export',
  when: 'always',
  payload: (c) => ({ tenant: tenant(c) }),
  statusUrl: (id) => `/jobs/${id}`,
  ...extra,
});

describe.each<[string, MakeApp]>([
  ['Express', expressApp],
  ['Koa', koaApp],
])('offload middleware: %s', (_name, makeApp) => {
  test("when: 'always' writes every request as a job, within budget too; the route never runs; a full backlog is a 429", async () => {
    const limiter = newLimiter();
    const ran: string[] = [];
    const app = makeApp(limiter, always(), ran);
    for (let i = 0; i < 2; i++) {
      const res = await request(app).post('/export?tenant=acme');
      expect(res.status).toBe(202);
      expect(res.headers.location).toBe(`/jobs/${res.body.jobId as string}`);
      expect(res.body).toMatchObject({ state: 'delayed', duplicate: false });
      expect(await limiter.getJob(res.body.jobId as string)).toMatchObject({ group: 'acme', type: 'export', payload: { tenant: 'acme' } });
    }
    const full = await request(app).post('/export?tenant=acme');
    expect(full.status).toBe(429);
    expect(Number(full.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(full.headers['content-type']).toMatch(/application\/problem\+json/);
    // Another tenant's backlog is its own.
    expect((await request(app).post('/export?tenant=globex')).status).toBe(202);
    expect(ran).toEqual([]);
    expect(await limiter.counts()).toMatchObject({ delayed: 3 });
  });

  test('the same Idempotency-Key names the same job', async () => {
    const limiter = newLimiter();
    const app = makeApp(limiter, always(), []);
    const a = await request(app).post('/export?tenant=acme').set('Idempotency-Key', 'k-1');
    const b = await request(app).post('/export?tenant=acme').set('Idempotency-Key', 'k-1');
    expect(b.body).toMatchObject({ jobId: a.body.jobId, duplicate: true });
  });

  test('defer.groupConcurrency (a function of group and request) caps how many of a group run at once', async () => {
    const limiter = newLimiter();
    const app = makeApp(limiter, always({ groupConcurrency: (group) => (group === 'free' ? 1 : 2) }), []);
    for (const t of ['free', 'free', 'pro', 'pro']) expect((await request(app).post(`/export?tenant=${t}`)).status).toBe(202);
    // The dispatcher moves at most the cap of each group towards the workers; the rest wait (pending).
    expect((await limiter.queue.dispatch({ readyMax: 10, moveMax: 10, promoteMax: 10, scanMax: 10 })).moved).toBe(3);
    expect(await limiter.counts()).toMatchObject({ ready: 3, pending: 1 });
  });

  test("a groupConcurrency function giving an unusable value is a 500 and one warning, not the client's fault", async () => {
    warnings.length = 0;
    const limiter = newLimiter();
    const app = makeApp(limiter, always({ groupConcurrency: () => 0 }), []);
    expect((await request(app).post('/export?tenant=acme')).status).toBe(500);
    expect((await request(app).post('/export?tenant=acme')).status).toBe(500);
    expect(warnings.filter((w) => w.includes('defer.groupConcurrency'))).toHaveLength(1);
  });
});

test('bad defer.when and defer.groupConcurrency fail at construction', () => {
  const limiter = newLimiter();
  const base = { type: 'x', statusUrl: (id: string) => id };
  expect(() => onExpress.bulkLimiter({ limiter, defer: { ...base, when: 'sometimes' as never } })).toThrow(
    expect.objectContaining({ code: 'ERR_BL_DEFER_WHEN' }),
  );
  expect(() => onKoa.bulkLimiter({ limiter, defer: { ...base, groupConcurrency: 0 } })).toThrow(
    expect.objectContaining({ code: 'ERR_BL_DEFER_GROUP_CONCURRENCY' }),
  );
});
