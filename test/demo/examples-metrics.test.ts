/**
 * The example apps' /metrics and /health, in-process: after a known sequence of requests the scrape holds
 * exactly the decisions the responses showed. `bulk-limiter…` resolves to src/ here (the built package's
 * `./prometheus` export is the packaging step's), so this runs without a build.
 */
import request from 'supertest';
import { createLimiter } from '../../src/limiter/limiter';
import { MemoryStore } from '../../src/memory/memory-store';
import { EXAMPLE_APPS } from './example-apps';
import { FaultStore } from '../limiter/fault-store';

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

function value(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
}

describe.each(EXAMPLE_APPS)('the %s example app', (_name, path, listener) => {
  test('/metrics after a known sequence of requests holds exactly the decisions the responses showed', async () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const example = require(path) as ExampleApp;
    const limiter = createLimiter({
      store: new MemoryStore({ clock: () => NOW }),
      name: 'api',
      limit: 6,
      tuning: { burst: 6, reserve: 1 },
      windowMs: 60_000,
    });
    const app = listener(example.createApp({ limiter }));
    const seen = new Map<string, number>();
    const tally = (tenant: string, status: number) => {
      const outcome = status === 202 ? 'deferred' : status === 429 ? 'denied' : status < 300 ? 'allowed' : `status ${status}`;
      seen.set(`${tenant}:${outcome}`, (seen.get(`${tenant}:${outcome}`) ?? 0) + 1);
    };
    for (let i = 0; i < 4; i++) tally('acme', (await request(app).get('/api/reports/1').set('x-tenant', 'acme')).status);
    for (let i = 0; i < 6; i++) tally('bulkbot', (await request(app).get('/api/export').set('x-tenant', 'bulkbot')).status);
    for (let i = 0; i < 2; i++) {
      tally(
        'importer',
        (await request(app).post('/api/imports').set('x-tenant', 'importer').set('content-type', 'application/json').send('{"rows":3}')).status,
      );
    }
    // The sequence reached every outcome.
    expect([...seen.keys()].map((k) => k.split(':')[1]).sort()).toEqual(expect.arrayContaining(['allowed', 'denied', 'deferred']));
    expect([...seen.keys()].some((k) => k.includes('status'))).toBe(false);

    const scrape = await request(app).get('/metrics');
    expect(scrape.status).toBe(200);
    expect(scrape.headers['content-type']).toContain('text/plain');
    const text = scrape.text;
    for (const outcome of ['allowed', 'denied', 'deferred']) {
      const expected = [...seen].filter(([k]) => k.endsWith(`:${outcome}`)).reduce((s, [, n]) => s + n, 0);
      expect(value(text, `bulk_limiter_decisions_total{limiter="api",outcome="${outcome}",policy="global"}`)).toBe(expected);
      for (const tenant of ['acme', 'bulkbot', 'importer']) {
        expect(value(text, `bulk_limiter_group_decisions_total{limiter="api",group="${tenant}",outcome="${outcome}"}`)).toBe(
          seen.get(`${tenant}:${outcome}`) ?? 0,
        );
      }
    }
    // 13 store calls for 12 requests: the importer's first deferral went without its payload first, then with it
    // (its second went in one call: the group was denied moments before).
    expect(value(text, 'bulk_limiter_store_seconds_count{limiter="api"}')).toBe(13);
    expect(value(text, 'bulk_limiter_jobs{limiter="api",state="pending"}') + value(text, 'bulk_limiter_jobs{limiter="api",state="delayed"}')).toBe(
      seen.get('importer:deferred'),
    );

    const health = await request(app).get('/health');
    expect(health.status).toBe(200);
    expect(health.body).toMatchObject({ status: 'up', latencyMs: expect.any(Number) });
  });

  test('/health answers 503 while the store is down', async () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const example = require(path) as ExampleApp;
    const store = new FaultStore();
    store.mode = 'throw';
    const limiter = createLimiter({ store, name: 'api', limit: 6, logger: { warn: () => undefined } });
    const health = await request(listener(example.createApp({ limiter }))).get('/health');
    expect(health.status).toBe(503);
    expect(health.body).toMatchObject({ status: 'down', lastError: expect.stringMatching(/ECONNREFUSED/) });
  });
});
