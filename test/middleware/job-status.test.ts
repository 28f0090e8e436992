/**
 * jobStatus's safe defaults, through Express, Koa (with @koa/router, and without a router) and Fastify: tenant-scoped
 * unless `public: true`, the route parameter named by `param`, a route without it a 500 with one warning.
 */
import Router from '@koa/router';
import express from 'express';
import Koa from 'koa';
import type { RequestListener } from 'node:http';
import request from 'supertest';
import { ConfigError } from '../../src/errors';
import { createLimiter, type Limiter } from '../../src/limiter/limiter';
import * as onExpress from '../../src/middleware/express';
import * as onFastify from '../../src/middleware/fastify';
import * as onKoa from '../../src/middleware/koa';
import { MemoryStore } from '../../src/memory/memory-store';
import { recordingLogger } from './cases';
import { fastifyListener } from './fastify-app';

interface AnyCtx {
  readonly query: Record<string, unknown>;
}
type Options = Record<string, unknown>;
const tenant = (c: AnyCtx): string | undefined => c.query.tenant as string | undefined;

/** An app serving jobStatus(options) on `route`. */
type Mount = (route: string, options: Options) => RequestListener;

const mounts: ReadonlyArray<readonly [string, Mount]> = [
  [
    'express',
    (route, options) => {
      const app = express();
      app.get(route, onExpress.jobStatus(options as never));
      return app;
    },
  ],
  [
    'koa + @koa/router',
    (route, options) => {
      const app = new Koa();
      app.silent = true;
      const router = new Router();
      router.get(route, onKoa.jobStatus(options as never));
      app.use(router.routes());
      return app.callback();
    },
  ],
  ['fastify', (route, options) => fastifyListener((app) => app.get(route, onFastify.jobStatus(options as never)))],
];

let seq = 0;
/** A limiter holding one deferred job of group `a`. */
async function limiterWithJob(logger = recordingLogger()): Promise<{ limiter: Limiter; jobId: string; logger: ReturnType<typeof recordingLogger> }> {
  const limiter = createLimiter({ store: new MemoryStore(), name: `job-status-${++seq}`, limit: 1, tuning: { burst: 1 }, logger });
  await limiter.check('a');
  const decision = await limiter.check('a', { defer: { type: 'report' } });
  return { limiter, jobId: decision.job!.id, logger };
}

describe.each(mounts)('jobStatus through %s', (_name, mount) => {
  test('with `group`: the owner reads its job, another group and a request without a group get 404', async () => {
    const { limiter, jobId } = await limiterWithJob();
    const app = mount('/jobs/:id', { limiter, group: tenant });
    const own = await request(app).get(`/jobs/${jobId}?tenant=a`);
    expect(own.status).toBe(200);
    expect(own.body).toMatchObject({ id: jobId, state: 'delayed' });
    for (const path of [`/jobs/${jobId}?tenant=b`, `/jobs/${jobId}`]) {
      const res = await request(app).get(path);
      expect(res.status).toBe(404);
      expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
    }
  });

  test('`public: true`: anyone with the id reads the job', async () => {
    const { limiter, jobId } = await limiterWithJob();
    const app = mount('/jobs/:id', { limiter, public: true });
    expect((await request(app).get(`/jobs/${jobId}?tenant=b`)).status).toBe(200);
    expect((await request(app).get('/jobs/999999')).status).toBe(404);
  });

  test('`param` names the route parameter', async () => {
    const { limiter, jobId } = await limiterWithJob();
    const app = mount('/jobs/:jobId', { limiter, group: tenant, param: 'jobId' });
    expect((await request(app).get(`/jobs/${jobId}?tenant=a`)).status).toBe(200);
  });

  test('a route without the parameter: 500, one WRN_BL_ROUTE_PARAM warning naming `param`', async () => {
    const { limiter, jobId, logger } = await limiterWithJob();
    const app = mount('/jobs/:jobId', { limiter, group: tenant });
    for (let i = 0; i < 2; i++) {
      const res = await request(app).get(`/jobs/${jobId}?tenant=a`);
      expect(res.status).toBe(500);
      expect(JSON.parse(res.text)).toMatchObject({ status: 500, title: 'Internal Server Error' });
    }
    expect(logger.lines).toHaveLength(1);
    expect(logger.lines[0]).toMatch(/^WRN_BL_ROUTE_PARAM: .*`:id`.*`param`/);
  });

  test('a group function returning a number: 500, one WRN_BL_OPTION_RESULT warning', async () => {
    const { limiter, jobId, logger } = await limiterWithJob();
    const app = mount('/jobs/:id', { limiter, group: () => 1 });
    expect((await request(app).get(`/jobs/${jobId}`)).status).toBe(500);
    expect((await request(app).get(`/jobs/${jobId}`)).status).toBe(500);
    expect(logger.lines).toEqual([expect.stringMatching(/^WRN_BL_OPTION_RESULT: `group` gave `1` \(number\)/)]);
  });
});

test('koa without a router: the id is the last path segment', async () => {
  const { limiter, jobId } = await limiterWithJob();
  const app = new Koa();
  app.silent = true;
  app.use(onKoa.jobStatus({ limiter, group: tenant }));
  expect((await request(app.callback()).get(`/anything/${jobId}?tenant=a`)).status).toBe(200);
  expect((await request(app.callback()).get(`/anything/${jobId}?tenant=b`)).status).toBe(404);
});

describe.each([
  ['express', onExpress.jobStatus],
  ['koa', onKoa.jobStatus],
  ['fastify', onFastify.jobStatus],
] as const)('%s jobStatus options', (_name, jobStatus) => {
  const limiter = createLimiter({ store: new MemoryStore(), name: 'job-status-options', limit: 5 });
  test.each([
    ['no group and not public', { limiter }, 'ERR_BL_GROUP', /`group`.*or `public: true`/],
    ['group and public', { limiter, group: tenant, public: true }, 'ERR_BL_GROUP', /either `group` or `public: true`/],
    ['public not a boolean', { limiter, public: 'yes' }, 'ERR_BL_PUBLIC', /`public`.*'yes'|"yes"/],
    ['param empty', { limiter, public: true, param: '' }, 'ERR_BL_PARAM', /`param`/],
    ['param not a string', { limiter, public: true, param: 1 }, 'ERR_BL_PARAM', /`param`/],
    ['param and id', { limiter, public: true, param: 'jobId', id: () => '1' }, 'ERR_BL_PARAM', /either `param` or `id`/],
    ['group not a function', { limiter, group: 'x-tenant' }, 'ERR_BL_GROUP', /function/],
  ])('%s → ConfigError at construction', (_label, options, code, message) => {
    let error: unknown;
    try {
      jobStatus(options as never);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect(error).toMatchObject({ code, message: expect.stringMatching(message) });
  });
});
