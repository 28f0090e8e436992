/**
 * The example apps' /dashboard, in-process: the JSON shows the tenants of a known sequence of requests with
 * exact counts and their plan; dead-letter actions are refused without DASHBOARD_TOKEN, and with it unless the
 * request carries `Authorization: Bearer <token>`. `bulk-limiter…` resolves to src/ here, as in
 * examples-metrics.test.ts.
 */
import request from 'supertest';
import type { RequestListener } from 'node:http';
import { createLimiter } from '../../src/limiter/limiter';
import { MemoryStore } from '../../src/memory/memory-store';
import { EXAMPLE_APPS } from './example-apps';
import type { DashboardData } from '../../src/dashboard/data';

jest.mock('bulk-limiter', () => jest.requireActual('../../src/index'), { virtual: true });
jest.mock('bulk-limiter/express', () => jest.requireActual('../../src/middleware/express'), { virtual: true });
jest.mock('bulk-limiter/koa', () => jest.requireActual('../../src/middleware/koa'), { virtual: true });
jest.mock('bulk-limiter/fastify', () => jest.requireActual('../../src/middleware/fastify'), { virtual: true });
jest.mock('bulk-limiter/nest', () => jest.requireActual('../../src/nest/index'), { virtual: true });
jest.mock('bulk-limiter/prometheus', () => jest.requireActual('../../src/metrics/prometheus'), { virtual: true });

interface ExampleApp {
  createApp(options: { limiter: unknown }): unknown;
}
const NOW = 1_800_000_000_000;
const sum = (list: readonly number[]) => list.reduce((a, b) => a + b, 0);

describe.each(EXAMPLE_APPS)('the %s example app', (_name, path, listener) => {
  const make = (token?: string) => {
    if (token === undefined) delete process.env.DASHBOARD_TOKEN;
    else process.env.DASHBOARD_TOKEN = token;
    try {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const example = require(path) as ExampleApp;
      const limiter = createLimiter({
        store: new MemoryStore({ clock: () => NOW }),
        name: 'api',
        limit: 6,
        tuning: { burst: 6, reserve: 1 },
        windowMs: 60_000,
      });
      return listener(example.createApp({ limiter }));
    } finally {
      delete process.env.DASHBOARD_TOKEN;
    }
  };

  test('/dashboard shows each tenant of a known sequence of requests with exact counts and its plan', async () => {
    const app = make();
    const seen = new Map<string, [number, number, number]>();
    const tally = (tenant: string, status: number) => {
      const counts = seen.get(tenant) ?? [0, 0, 0];
      counts[status === 202 ? 2 : status === 429 ? 1 : 0] += 1;
      seen.set(tenant, counts);
    };
    for (let i = 0; i < 4; i++) tally('acme', (await request(app).get('/api/reports/1').set('x-tenant', 'acme')).status);
    for (let i = 0; i < 6; i++) tally('bulkbot', (await request(app).get('/api/export').set('x-tenant', 'bulkbot')).status);
    for (let i = 0; i < 2; i++) {
      tally(
        'importer',
        (await request(app).post('/api/imports').set('x-tenant', 'importer').set('content-type', 'application/json').send('{"rows":3}')).status,
      );
    }
    expect((await request(app).get('/dashboard')).text).toContain('<title>bulk-limiter dashboard</title>');
    const data = (await request(app).get('/dashboard/data')).body as DashboardData;
    expect(data.actions).toBe('none');
    const groups = data.limiters[0]!.groups;
    const shown = Object.fromEntries(groups.map((g) => [g.group, [sum(g.traffic.allowed), sum(g.traffic.denied), sum(g.traffic.deferred)]]));
    expect(shown).toEqual(Object.fromEntries(seen));
    expect(groups.find((g) => g.group === 'acme')?.plan).toBe('weight 3');
    expect(groups.find((g) => g.group === 'bulkbot')?.plan).toBeUndefined();
  });

  test('dead-letter actions: 403 without DASHBOARD_TOKEN; with it, only for the bearer of the token', async () => {
    const retry = (app: RequestListener, auth?: string) => {
      const r = request(app).post('/dashboard/dead/retry?limiter=api&id=1795463758426-000001').set('X-Requested-With', 'test');
      return auth === undefined ? r : r.set('Authorization', auth);
    };
    expect((await retry(make(), 'Bearer s3cret')).status).toBe(403);
    const app = make('s3cret');
    expect((await request(app).get('/dashboard/data')).body.actions).toBe('locked');
    expect((await request(app).get('/dashboard/data').set('Authorization', 'Bearer s3cret')).body.actions).toBe('allowed');
    expect((await retry(app)).status).toBe(403);
    expect((await retry(app, 'Bearer s3creT')).status).toBe(403);
    // Authorized: the job is simply not a dead one.
    expect((await retry(app, 'Bearer s3cret')).status).toBe(404);
  });
});
