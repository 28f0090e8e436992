/**
 * Defer mode and jobStatus: one table of HTTP cases run through Express and Koa with supertest, on
 * MemoryStore and (cases marked `redis`) on RedisStore with a real redis-server.
 */
import Router from '@koa/router';
import express from 'express';
import Koa from 'koa';
import type { RequestListener } from 'node:http';
import request from 'supertest';
import type Redis from 'ioredis';
import { createLimiter, type Limiter, type LimiterOptions } from '../../src/limiter/limiter';
import * as onExpress from '../../src/middleware/express';
import * as onKoa from '../../src/middleware/koa';
import { Dispatcher } from '../../src/queue/dispatcher';
import { Worker } from '../../src/queue/worker';
import { MemoryStore } from '../../src/memory/memory-store';
import { RedisStore } from '../../src/redis/redis-store';
import type { Store } from '../../src/types';
import { startRedis, type RedisServer } from '../helpers/redis-server';

interface AnyCtx {
  readonly query: Record<string, unknown>;
}
const tenant = (c: AnyCtx) => c.query.tenant as string | undefined;
const silent = { warn: () => undefined, error: () => undefined };

/** GET /work runs the limiter in defer mode, then answers "ok"; GET /jobs/:id serves job status. */
type MakeApp = (limiter: Limiter, statusGroup?: boolean) => RequestListener;

const deferOptions = {
  type: 'report',
  payload: (c: AnyCtx) => ({ tenant: tenant(c), q: c.query.q ?? null }),
  statusUrl: (id: string) => `/jobs/${id}`,
};

const expressApp: MakeApp = (limiter, statusGroup) => {
  const app = express();
  app.get('/work', onExpress.bulkLimiter({ limiter, group: tenant, defer: deferOptions }), (_req, res) => {
    res.send('ok');
  });
  app.get('/jobs/:id', onExpress.jobStatus({ limiter, ...(statusGroup ? { group: tenant } : { public: true }) }));
  return app;
};

const koaApp: MakeApp = (limiter, statusGroup) => {
  const app = new Koa();
  app.silent = true;
  const router = new Router();
  router.get('/work', onKoa.bulkLimiter({ limiter, group: tenant, defer: deferOptions }), (ctx) => {
    ctx.body = 'ok';
  });
  router.get('/jobs/:id', onKoa.jobStatus({ limiter, ...(statusGroup ? { group: tenant } : { public: true }) }));
  app.use(router.routes());
  return app.callback();
};

interface Env {
  readonly app: MakeApp;
  limiter(extra?: Partial<LimiterOptions>): Limiter;
}

interface DeferCase {
  readonly title: string;
  readonly redis?: boolean;
  run(env: Env): Promise<void>;
}

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

const CASES: readonly DeferCase[] = [
  {
    title: 'allowed requests run the route at once and write no job',
    redis: true,
    async run(env) {
      const limiter = env.limiter();
      const res = await request(env.app(limiter)).get('/work?tenant=a');
      expect(res.status).toBe(200);
      expect(res.text).toBe('ok');
      expect(res.headers.ratelimit).toBeDefined();
      expect(await limiter.counts()).toMatchObject({ delayed: 0, pending: 0, ready: 0 });
    },
  },
  {
    title: 'a denied request is deferred: 202, Location, { jobId, state, runAt }, RateLimit headers; the status URL shows the job',
    redis: true,
    async run(env) {
      const limiter = env.limiter();
      const app = env.app(limiter);
      for (let i = 0; i < 2; i++) expect((await request(app).get('/work?tenant=a')).status).toBe(200);
      const res = await request(app).get('/work?tenant=a&q=sales');
      expect(res.status).toBe(202);
      expect(res.body).toEqual({ jobId: expect.any(String), state: 'delayed', runAt: expect.stringMatching(ISO), duplicate: false });
      expect(res.headers.location).toBe(`/jobs/${res.body.jobId}`);
      expect(res.headers.ratelimit).toMatch(/r=0/);
      expect(res.headers['ratelimit-policy']).toBeDefined();
      const status = await request(app).get(res.headers.location!);
      expect(status.status).toBe(200);
      expect(status.body).toMatchObject({ id: res.body.jobId, type: 'report', state: 'delayed', attempts: 0, runAt: res.body.runAt });
      expect(status.body.payload).toBeUndefined(); // the payload is not shown
      expect((await limiter.getJob(res.body.jobId))?.payload).toEqual({ tenant: 'a', q: 'sales' });
    },
  },
  {
    title: 'the Idempotency-Key header names one job per group',
    redis: true,
    async run(env) {
      const limiter = env.limiter({ limit: 1, tuning: { burst: 1 } });
      const app = env.app(limiter);
      await request(app).get('/work?tenant=a');
      const first = await request(app).get('/work?tenant=a').set('Idempotency-Key', 'k-1');
      const again = await request(app).get('/work?tenant=a').set('Idempotency-Key', 'k-1');
      const other = await request(app).get('/work?tenant=b').set('Idempotency-Key', 'k-1');
      expect([first.status, again.status, other.status]).toEqual([202, 202, 202]);
      expect(again.body).toMatchObject({ jobId: first.body.jobId, duplicate: true, state: 'delayed' });
      expect(other.body.jobId).not.toBe(first.body.jobId);
      expect((await limiter.counts()).delayed).toBe(2);
    },
  },
  {
    title: 'a full backlog (maxBacklog) is a 429 with Retry-After, not a 202',
    redis: true,
    async run(env) {
      const limiter = env.limiter({ limit: 1, tuning: { burst: 1 }, maxBacklog: 1 });
      const app = env.app(limiter);
      await request(app).get('/work?tenant=a');
      expect((await request(app).get('/work?tenant=a')).status).toBe(202);
      const res = await request(app).get('/work?tenant=a');
      expect(res.status).toBe(429);
      expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
      expect(res.headers['retry-after']).toMatch(/^[1-9][0-9]*$/);
      expect(res.headers.location).toBeUndefined();
      // Another tenant's backlog is its own: still deferred, not refused.
      expect((await request(app).get('/work?tenant=b')).status).toBe(202);
    },
  },
  {
    title: 'a wait beyond maxDeferMs is a 429',
    async run(env) {
      const limiter = env.limiter({ limit: 1, tuning: { burst: 1 }, maxDeferMs: 1 });
      const app = env.app(limiter);
      await request(app).get('/work?tenant=a');
      const res = await request(app).get('/work?tenant=a');
      expect(res.status).toBe(429);
      expect(await limiter.counts()).toMatchObject({ delayed: 0 });
    },
  },
  {
    title: 'a payload over maxPayloadBytes runs when allowed; when it would be deferred it is a 400 and writes nothing',
    async run(env) {
      const limiter = env.limiter({ limit: 1, tuning: { burst: 1 }, maxPayloadBytes: 40 });
      const app = env.app(limiter);
      const big = `/work?tenant=a&q=${'x'.repeat(100)}`;
      expect((await request(app).get(big)).status).toBe(200);
      const res = await request(app).get(big);
      expect(res.status).toBe(400);
      expect(res.body.detail ?? JSON.parse(res.text).detail).toMatch(/at most 40 bytes/);
      expect(await limiter.counts()).toMatchObject({ delayed: 0, pending: 0, ready: 0 });
    },
  },
  {
    title: 'the status URL answers 404 for an unknown id, and (with `group`) for another tenant’s job',
    redis: true,
    async run(env) {
      const limiter = env.limiter({ limit: 1, tuning: { burst: 1 } });
      const app = env.app(limiter, true);
      expect((await request(app).get('/jobs/no-such-job?tenant=a')).status).toBe(404);
      await request(app).get('/work?tenant=a');
      const deferred = await request(app).get('/work?tenant=a');
      expect((await request(app).get(`${deferred.headers.location}?tenant=a`)).status).toBe(200);
      const foreign = await request(app).get(`${deferred.headers.location}?tenant=b`);
      expect(foreign.status).toBe(404);
      expect(foreign.headers['content-type']).toMatch(/application\/problem\+json/);
    },
  },
  {
    title: 'end to end: a deferred request runs on a worker and its status shows the result',
    redis: true,
    async run(env) {
      const limiter = env.limiter({ limit: 2, tuning: { burst: 2 }, windowMs: 400 });
      const app = env.app(limiter);
      let deferred: request.Response | undefined;
      for (let i = 0; i < 5 && deferred === undefined; i++) {
        const res = await request(app).get('/work?tenant=a&q=eu');
        if (res.status === 202) deferred = res;
      }
      expect(deferred).toBeDefined();
      const dispatcher = new Dispatcher({ limiter, pollMs: 20, logger: silent });
      const worker = new Worker({ limiter, handlers: { report: async (job) => ({ rows: 3, for: job.payload }) }, logger: silent, idleWaitMs: 200 });
      dispatcher.start();
      worker.start();
      try {
        let body: { state?: string; result?: unknown } = {};
        for (let i = 0; i < 300 && body.state !== 'completed'; i++) {
          body = (await request(app).get(deferred!.headers.location!)).body;
          if (body.state !== 'completed') await new Promise((r) => setTimeout(r, 20));
        }
        expect(body).toMatchObject({
          state: 'completed',
          result: { rows: 3, for: { tenant: 'a', q: 'eu' } },
          finishedAt: expect.stringMatching(ISO),
        });
      } finally {
        await dispatcher.stop();
        await worker.close(1000);
      }
    },
  },
];

let seq = 0;
function envFor(app: MakeApp, store: () => Store): Env {
  return {
    app,
    limiter: (extra = {}) =>
      createLimiter({ store: store(), name: `defer-${process.pid}-${++seq}`, limit: 2, tuning: { burst: 2 }, windowMs: 60_000, ...extra }),
  };
}

describe.each([
  ['express', expressApp],
  ['koa', koaApp],
] as const)('defer mode through %s', (_name, app) => {
  describe('on MemoryStore', () => {
    for (const c of CASES) test(c.title, () => c.run(envFor(app, () => new MemoryStore())));
  });

  describe('on RedisStore', () => {
    let server: RedisServer;
    let client: Redis;
    const limiters: Limiter[] = [];
    beforeAll(async () => {
      server = await startRedis();
      client = server.client();
    });
    afterAll(async () => {
      await Promise.all(limiters.map((l) => l.close()));
      await server.stop();
    });
    const store = (): Store => new RedisStore({ client, prefix: 'dft' });
    for (const c of CASES.filter((x) => x.redis)) {
      test(c.title, () => {
        const env = envFor(app, store);
        return c.run({
          ...env,
          limiter: (extra) => {
            const l = env.limiter(extra);
            limiters.push(l);
            return l;
          },
        });
      });
    }
  });
});

describe('defer options', () => {
  const limiter = createLimiter({ store: new MemoryStore(), name: 'defer-options', limit: 5 });
  test('bad defer options throw a coded ConfigError', () => {
    expect(() => onExpress.bulkLimiter({ limiter, defer: { type: '', statusUrl: (id) => id } })).toThrow(
      expect.objectContaining({ code: 'ERR_BL_DEFER_TYPE' }),
    );
    expect(() => onExpress.bulkLimiter({ limiter, defer: { type: 'a' } as never })).toThrow(
      expect.objectContaining({ code: 'ERR_BL_DEFER_STATUS_URL' }),
    );
    expect(() => onKoa.bulkLimiter({ limiter, defer: { type: 'a', payload: 5 as never, statusUrl: (id) => id } })).toThrow(/defer.payload/);
    expect(() => createLimiter({ limit: 5, maxBacklog: 0 })).toThrow(expect.objectContaining({ code: 'ERR_BL_MAX_BACKLOG' }));
    expect(() => onExpress.jobStatus({ limiter: {} as never })).toThrow(/limiter/);
  });

  test('check() refuses a bad deferral with an InputError', async () => {
    await expect(limiter.check('g', { defer: { type: 'x'.repeat(200) } })).rejects.toMatchObject({ code: 'ERR_BL_BAD_JOB_TYPE' });
    const one = createLimiter({ store: new MemoryStore(), name: 'defer-options-one', limit: 1 });
    // An allowed request runs whatever its payload; a denied one cannot be written.
    await expect(one.check('g', { defer: { type: 'a', payload: 10n } })).resolves.toMatchObject({ allowed: true });
    await expect(one.check('g', { defer: { type: 'a', payload: 10n } })).rejects.toMatchObject({ code: 'ERR_BL_BAD_PAYLOAD' });
    await expect(limiter.check('g', { defer: { type: 'a', idempotencyKey: 'k'.repeat(300) } })).rejects.toMatchObject({
      code: 'ERR_BL_BAD_IDEMPOTENCY_KEY',
    });
  });
});
