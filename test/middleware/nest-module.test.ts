/**
 * What only the Nest module has (the shared HTTP table runs in nest.test.ts), on platform-express and
 * platform-fastify: the guard per route or global, route settings by decorator (method over controller),
 * forRootAsync, the injected limiter, `@JobHandler` providers found at boot and run by the module's worker until
 * the app closes, a wrong route setting failing the boot, and the job status and dashboard controllers.
 */
import { Controller, Injectable, Module, Post, UseGuards } from '@nestjs/common';
import request from 'supertest';
import { ConfigError } from '../../src/errors';
import { createLimiter, type Limiter } from '../../src/limiter/limiter';
import { MemoryStore } from '../../src/memory/memory-store';
import {
  BULK_LIMITER,
  BulkLimit,
  BulkLimiterGuard,
  BulkLimiterModule,
  JobHandler,
  SkipBulkLimit,
  dashboardController,
  jobStatusController,
  type NestRequest,
  type WorkerJob,
} from '../../src/nest';
import { FROZEN_NOW } from './cases';
import { handler, nestListener, okController, type NestListener, type Platform } from './nest-app';

let seq = 0;
const newLimiter = (limit = 2): Limiter =>
  createLimiter({ store: new MemoryStore({ clock: () => FROZEN_NOW }), name: `nest-${++seq}`, limit, tuning: { burst: limit }, windowMs: 60_000 });
const tenant = (req: NestRequest) => req.headers['x-tenant'] as string | undefined;

async function statuses(app: NestListener, path: string, n: number, method: 'get' | 'post' = 'get'): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push((await request(app)[method](path).set('x-tenant', 'a')).status);
  return out;
}

const opened: NestListener[] = [];
function open(platform: Platform, spec: Parameters<typeof nestListener>[1]): NestListener {
  const app = nestListener(platform, spec);
  opened.push(app);
  return app;
}
afterEach(async () => {
  await Promise.all(opened.splice(0).map((l) => l.app.then((a) => a.close()).catch(() => undefined)));
});

describe.each(['express', 'fastify'] as const)('on platform-%s', (platform) => {
  test('@UseGuards(BulkLimiterGuard) limits only its routes; settings by decorator, the method over its controller', async () => {
    const limiter = newLimiter(4);
    const own = newLimiter(3); // the controller's cost 2 applies: one request leaves too little
    const guarded = okController({
      '/heavy': [BulkLimit({ cost: 3 })],
      '/own': [BulkLimit({ limiter: own })],
      '/light': [],
      '/free': [SkipBulkLimit()],
    });
    UseGuards(BulkLimiterGuard)(guarded);
    BulkLimit({ cost: 2 })(guarded);
    Controller('g')(guarded);
    const open_ = okController({ '/open': [] });
    const app = open(platform, { imports: [BulkLimiterModule.forRoot({ limiter, group: tenant })], controllers: [guarded, open_] });
    const heavy = await request(app).get('/g/heavy').set('x-tenant', 'a');
    expect([heavy.status, heavy.headers.ratelimit]).toEqual([200, `"${limiter.name}";r=1;t=180`]);
    expect(await statuses(app, '/g/light', 1)).toEqual([429]); // cost 2 from the controller, 1 unit left
    expect(await statuses(app, '/g/own', 2)).toEqual([200, 429]);
    expect(await statuses(app, '/g/free', 3)).toEqual([200, 200, 200]);
    expect(await statuses(app, '/open', 3)).toEqual([200, 200, 200]);
  });

  test('forRootAsync: options from an injected provider; the limiter is injectable as BULK_LIMITER', async () => {
    const limiter = newLimiter(1);
    class Settings {
      readonly limiter = limiter;
    }
    Injectable()(Settings);
    // eslint-disable-next-line @typescript-eslint/no-extraneous-class -- a Nest module is a decorated class
    class SettingsModule {}
    Module({ providers: [Settings], exports: [Settings] })(SettingsModule);
    const app = open(platform, {
      imports: [
        BulkLimiterModule.forRootAsync({
          imports: [SettingsModule],
          inject: [Settings],
          useFactory: async (s: Settings) => ({ limiter: s.limiter, group: tenant }),
          globalGuard: true,
        }),
      ],
      controllers: [okController({ '/': [] })],
    });
    expect(await statuses(app, '/', 2)).toEqual([200, 429]);
    expect((await app.app).get(BULK_LIMITER)).toBe(limiter);
  });

  test('a @JobHandler provider runs the deferred jobs; the job status controller shows them', async () => {
    // a 200 ms window: the deferred job is due within it. The store's clock stands still until both requests are
    // answered (the second is denied however slowly a busy machine sends it), then runs on so the job comes due.
    let frozen: number | undefined = Date.now();
    const clock = () => frozen ?? Date.now();
    const limiter = createLimiter({ store: new MemoryStore({ clock }), name: `nest-jobs-${++seq}`, limit: 1, tuning: { burst: 1 }, windowMs: 200 });
    const done: unknown[] = [];
    class ImportJob {
      async handle(job: WorkerJob<{ rows: number }>) {
        done.push(job.payload);
        return { imported: job.payload.rows };
      }
    }
    JobHandler('import')(ImportJob);
    Injectable()(ImportJob);
    const defer = {
      type: 'import',
      payload: (req: NestRequest) => ({ rows: (req.body as { rows: number }).rows }),
      statusUrl: (id: string) => `/jobs/${id}`,
    };
    const imports = okController({ '/imports': [] });
    handler(imports.prototype, 'route0', [Post('/imports'), BulkLimit({ defer })]);
    const app = open(platform, {
      imports: [BulkLimiterModule.forRoot({ limiter, group: tenant, globalGuard: true, dispatcher: { pollMs: 20 }, worker: { idleWaitMs: 20 } })],
      controllers: [imports, jobStatusController({ group: tenant })],
      providers: [ImportJob],
    });
    const post = () => request(app).post('/imports').set('x-tenant', 'a').send({ rows: 7 });
    expect((await post()).status).toBe(200);
    const deferred = await post();
    frozen = undefined;
    expect(deferred.status).toBe(202);
    expect(deferred.headers.location).toBe(`/jobs/${deferred.body.jobId}`);
    expect(deferred.headers['content-type']).toMatch(/^application\/json/);
    expect((await request(app).get(deferred.headers.location!).set('x-tenant', 'b')).status).toBe(404);
    let state = '';
    for (let i = 0; i < 200 && state !== 'completed'; i++) {
      const res = await request(app).get(deferred.headers.location!).set('x-tenant', 'a');
      state = (res.body as { state: string }).state;
      if (state !== 'completed') await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(state).toBe('completed');
    expect(done).toEqual([{ rows: 7 }]);
  });

  test('a wrong @BulkLimit fails the boot with a ConfigError', async () => {
    const bad = okController({ '/': [BulkLimit({ cost: 0 } as never)] });
    const app = nestListener(platform, { imports: [BulkLimiterModule.forRoot({ limiter: newLimiter(), group: tenant })], controllers: [bad] });
    await expect(app.app).rejects.toBeInstanceOf(ConfigError);
  });

  test('a setting @BulkLimit does not know fails the boot naming it', async () => {
    const bad = okController({ '/': [BulkLimit({ costs: 2 } as never)] });
    const app = nestListener(platform, { imports: [BulkLimiterModule.forRoot({ limiter: newLimiter(), group: tenant })], controllers: [bad] });
    await expect(app.app).rejects.toMatchObject({ code: 'ERR_BL_UNKNOWN_OPTION', message: expect.stringMatching(/`costs` of @BulkLimit\(\)/) });
  });

  test('the dashboard controller serves the page and its JSON; actions need authorize', async () => {
    const limiter = newLimiter();
    const app = open(platform, {
      imports: [BulkLimiterModule.forRoot({ limiter, group: tenant, globalGuard: true })],
      controllers: [dashboardController()],
    });
    const page = await request(app).get('/dashboard');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.text).toContain('<title>bulk-limiter dashboard</title>');
    const data = await request(app).get('/dashboard/data');
    expect(data.body.limiters[0]).toMatchObject({ name: limiter.name });
    expect((await request(app).post(`/dashboard/dead/retry?limiter=${limiter.name}&id=1`).set('x-requested-with', 'x')).status).toBe(403);
    expect((await request(app).get(`/dashboard/dead/retry?limiter=${limiter.name}&id=1`)).status).toBe(405);
  });

  test("the dashboard controller's override actions: set from the form's fields, a mistake a 400 problem, remove", async () => {
    const limiter = newLimiter();
    const app = open(platform, {
      imports: [BulkLimiterModule.forRoot({ limiter, group: tenant, globalGuard: true })],
      controllers: [dashboardController({ authorize: (req: NestRequest) => req.headers.authorization === 'Bearer ok' })],
    });
    const post = (action: string, query: string) =>
      request(app)
        .post(`/dashboard/overrides/${action}?limiter=${limiter.name}&${query}`)
        .set('x-requested-with', 'x')
        .set('authorization', 'Bearer ok');
    const set = await post('set', 'group=acme&weight=3&reason=upgrade');
    expect([set.status, set.body.override?.settings]).toEqual([200, { weight: 3 }]);
    const bad = await post('set', 'group=acme&weight=0');
    expect([bad.status, bad.headers['content-type'], bad.body.code]).toEqual([400, 'application/problem+json; charset=utf-8', 'ERR_BL_OVERRIDE']);
    expect((await post('remove', 'group=acme')).status).toBe(200);
    expect(await limiter.getOverride('acme')).toBeNull();
    expect((await request(app).post(`/dashboard/overrides/remove?limiter=${limiter.name}&group=acme`).set('x-requested-with', 'x')).status).toBe(403);
  });
});

test('forRoot checks options where they are written', () => {
  expect(() => BulkLimiterModule.forRoot({ limit: 5, maxRequests: 3 } as never)).toThrow(ConfigError);
  expect(() => BulkLimiterModule.forRoot({ limiter: newLimiter(), onLimit: 'throw' } as never)).toThrow(/onLimit/);
  expect(() => jobStatusController({} as never)).toThrow(/`group`.*or `public: true`/);
});
