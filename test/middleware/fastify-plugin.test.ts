/**
 * What only the Fastify adapter has (the shared HTTP table runs in fastify.test.ts): the plugin's reach
 * (its scope and children, not siblings), route settings in `config.bulkLimiter`, `global: false`, the
 * `hook` option (a deferred job's payload from the parsed body), warnings through Fastify's logger, option
 * errors at boot, and jobStatus and the dashboard as Fastify routes.
 */
import Fastify from 'fastify';
import { Writable } from 'node:stream';
import request from 'supertest';
import { ConfigError } from '../../src/errors';
import { createLimiter, type Limiter } from '../../src/limiter/limiter';
import { MemoryStore } from '../../src/memory/memory-store';
import { bulkLimiter, dashboard, jobStatus } from '../../src/middleware/fastify';
import { deadJob } from '../dashboard/fixtures';
import { FROZEN_NOW } from './cases';
import { fastifyListener } from './fastify-app';

let seq = 0;
const newLimiter = (limit = 2): Limiter =>
  createLimiter({ store: new MemoryStore({ clock: () => FROZEN_NOW }), name: `fastify-${++seq}`, limit, tuning: { burst: limit }, windowMs: 60_000 });
const tenant = (request: { headers: Record<string, unknown> }) => request.headers['x-tenant'] as string | undefined;
const ok = async () => 'ok';

async function statuses(app: ReturnType<typeof fastifyListener>, path: string, n: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push((await request(app).get(path).set('x-tenant', 'a')).status);
  return out;
}

test('the plugin limits the routes of the scope that registers it and of its children, not its siblings', async () => {
  const limiter = newLimiter(1);
  const app = fastifyListener((root) => {
    root.get('/before', ok); // declared before the plugin: not limited
    void root.register(async (scope) => {
      await scope.register(bulkLimiter, { limiter, group: tenant });
      scope.get('/limited', ok);
      await scope.register(async (child) => {
        child.get('/child', ok);
      });
    });
    void root.register(async (sibling) => {
      sibling.get('/sibling', ok);
    });
  });
  expect(await statuses(app, '/before', 3)).toEqual([200, 200, 200]);
  expect(await statuses(app, '/sibling', 3)).toEqual([200, 200, 200]);
  expect(await statuses(app, '/limited', 2)).toEqual([200, 429]);
  expect(await statuses(app, '/child', 1)).toEqual([429]);
});

test('config.bulkLimiter: a route sets its own cost or limiter; false leaves it out; global false limits only routes that ask', async () => {
  const shared = newLimiter(4);
  const own = newLimiter(1);
  const app = fastifyListener((root) => {
    void root.register(async (scope) => {
      await scope.register(bulkLimiter, { limiter: shared, group: tenant });
      scope.get('/heavy', { config: { bulkLimiter: { cost: 2 } } }, ok);
      scope.get('/own', { config: { bulkLimiter: { limiter: own } } }, ok);
      scope.get('/free', { config: { bulkLimiter: false } }, ok);
    });
    void root.register(async (scope) => {
      await scope.register(bulkLimiter, { limiter: newLimiter(1), group: tenant, global: false });
      scope.get('/opt-in', { config: { bulkLimiter: {} } }, ok);
      scope.get('/not-asked', ok);
    });
  });
  const heavy = await request(app).get('/heavy').set('x-tenant', 'a');
  expect(heavy.headers.ratelimit).toBe(`"${shared.name}";r=2;t=120`);
  expect(await statuses(app, '/own', 2)).toEqual([200, 429]);
  expect(await statuses(app, '/free', 3)).toEqual([200, 200, 200]);
  expect(await statuses(app, '/opt-in', 2)).toEqual([200, 429]);
  expect(await statuses(app, '/not-asked', 3)).toEqual([200, 200, 200]);
});

test("hook 'preHandler': a deferred job's payload reads the parsed body; the job status route serves it", async () => {
  const limiter = newLimiter(1);
  const app = fastifyListener((root) => {
    void root.register(async (scope) => {
      await scope.register(bulkLimiter, { limiter, group: tenant });
      scope.post(
        '/imports',
        {
          config: {
            bulkLimiter: {
              hook: 'preHandler',
              defer: { type: 'import', payload: (req) => ({ rows: (req.body as { rows: number }).rows }), statusUrl: (id) => `/jobs/${id}` },
            },
          },
        },
        async (_request, reply) => reply.code(201).send({ imported: true }),
      );
      scope.get('/jobs/:id', { config: { bulkLimiter: false } }, jobStatus({ limiter, group: tenant }));
    });
  });
  const post = () => request(app).post('/imports').set('x-tenant', 'a').send({ rows: 7 });
  expect((await post()).status).toBe(201);
  const deferred = await post();
  expect(deferred.status).toBe(202);
  expect(deferred.body).toMatchObject({ jobId: expect.any(String), state: 'delayed' });
  expect(deferred.headers.location).toBe(`/jobs/${deferred.body.jobId}`);
  const job = await limiter.getJob(deferred.body.jobId);
  expect(job?.type).toBe('import');
  expect((await request(app).get(deferred.headers.location!).set('x-tenant', 'a')).body).toMatchObject({ type: 'import' });
  expect((await request(app).get(deferred.headers.location!).set('x-tenant', 'b')).status).toBe(404);
});

test.each(['onRequest', 'preParsing', 'preValidation', 'preHandler'] as const)(
  "hook '%s': the limiter answers in that hook, a request let through reaches the handler with its body intact",
  async (hook) => {
    const app = fastifyListener((root) => {
      void root.register(async (scope) => {
        await scope.register(bulkLimiter, { limiter: newLimiter(1), group: tenant, hook });
        scope.post('/echo', async (req) => req.body);
      });
    });
    const post = () => request(app).post('/echo').set('x-tenant', 'a').send({ rows: 7 });
    const first = await post();
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ rows: 7 });
    expect(first.headers.ratelimit).toMatch(/;r=0;t=\d+$/);
    const denied = await post();
    expect(denied.status).toBe(429);
    expect(denied.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(denied.headers['retry-after']).toBeDefined();
  },
);

test("a limiter made from inline options warns through Fastify's logger", async () => {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  const app = Fastify({ logger: { level: 'warn', stream } });
  await app.register(bulkLimiter, { store: new MemoryStore(), name: `fastify-log-${++seq}`, limit: 5, group: tenant });
  app.get('/', ok);
  await app.ready();
  expect((await app.inject({ url: '/' })).statusCode).toBe(200); // no group: the shared group, warned once
  expect((await app.inject({ url: '/' })).statusCode).toBe(200);
  const warned = lines.map((l) => JSON.parse(l) as { level: number; msg: string }).filter((l) => l.msg.startsWith('WRN_BL_MISSING_GROUP'));
  expect(warned).toEqual([expect.objectContaining({ level: 40 })]);
  await app.close();
});

test.each([
  ['an unknown plugin option', { limit: 5, maxRequests: 3 }, 'ERR_BL_UNKNOWN_OPTION'],
  ['a bad hook', { limit: 5, hook: 'onSend' }, 'ERR_BL_HOOK'],
  ['limiter and inline options', { limiter: newLimiter(), limit: 5 }, 'ERR_BL_LIMITER'],
])('%s fails at boot with a ConfigError', async (_label, options, code) => {
  const app = Fastify();
  await expect(app.register(bulkLimiter, options as never).ready()).rejects.toMatchObject({ code });
  await expect(
    Fastify()
      .register(bulkLimiter, options as never)
      .ready(),
  ).rejects.toBeInstanceOf(ConfigError);
});

test('a route setting that is not one fails at boot naming the route', async () => {
  const app = Fastify();
  await app.register(bulkLimiter, { limiter: newLimiter() });
  expect(() => app.get('/x', { config: { bulkLimiter: { limit: 5 } as never } }, ok)).toThrow(/config\.bulkLimiter of \/x/);
  expect(() => app.get('/y', { config: { bulkLimiter: 'yes' as never } }, ok)).toThrow(ConfigError);
});

describe('the dashboard under a prefix', () => {
  const mount = (options: Record<string, unknown>) =>
    fastifyListener((root) => {
      void root.register(dashboard, { prefix: '/dashboard', ...options } as never);
      root.get('/other', async () => 'other');
    });

  test('serves the page at the prefix (with and without a trailing slash), its JSON, and leaves other paths to the app', async () => {
    const limiter = newLimiter();
    await limiter.check('acme');
    const app = mount({ limiters: [limiter] });
    for (const path of ['/dashboard', '/dashboard/']) {
      const page = await request(app).get(path);
      expect(page.status).toBe(200);
      expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(page.text).toContain('<title>bulk-limiter dashboard</title>');
    }
    const data = await request(app).get('/dashboard/data');
    expect(data.status).toBe(200);
    expect(data.body.limiters[0]).toMatchObject({ name: limiter.name });
    expect(data.body.actions).toBe('none');
    expect((await request(app).get('/other')).text).toBe('other');
    expect((await request(app).get('/dashboard/nope')).status).toBe(404);
  });

  test('retry answers 403 without authorize; with it, it acts on a real dead job', async () => {
    const limiter = newLimiter();
    const id = await deadJob(limiter, 'acme');
    const locked = mount({ limiters: [limiter] });
    const path = `/dashboard/dead/retry?limiter=${limiter.name}&id=${id}`;
    expect((await request(locked).post(path).set('x-requested-with', 'fetch')).status).toBe(403);
    const open = mount({ limiters: [limiter], authorize: (req: { headers: Record<string, unknown> }) => req.headers.authorization === 'yes' });
    expect((await request(open).post(path).set('x-requested-with', 'fetch')).status).toBe(403);
    expect((await request(open).get(path).set('authorization', 'yes')).status).toBe(405);
    const retried = await request(open).post(path).set('x-requested-with', 'fetch').set('authorization', 'yes');
    expect(retried.status).toBe(200);
    expect((await limiter.getJob(id))?.state).not.toBe('dead');
  });

  test('the override actions are routed: set, then remove, behind authorize', async () => {
    const limiter = newLimiter();
    const open = mount({ limiters: [limiter], authorize: () => true });
    const set = await request(open)
      .post(`/dashboard/overrides/set?limiter=${limiter.name}&group=acme&weight=4&reason=migration`)
      .set('x-requested-with', 'fetch');
    expect(set.status).toBe(200);
    expect(await limiter.getOverride('acme')).toMatchObject({ settings: { weight: 4 }, reason: 'migration' });
    const bad = await request(open).post(`/dashboard/overrides/set?limiter=${limiter.name}&group=acme&weight=0`).set('x-requested-with', 'fetch');
    expect(bad.status).toBe(400);
    expect(bad.headers['content-type']).toMatch(/application\/problem\+json/);
    const removed = await request(open).post(`/dashboard/overrides/remove?limiter=${limiter.name}&group=acme`).set('x-requested-with', 'fetch');
    expect(removed.status).toBe(200);
    expect(await limiter.getOverride('acme')).toBeNull();
  });

  test('options are checked at boot', async () => {
    await expect(
      Fastify()
        .register(dashboard, { prefix: '/d', limiters: [] } as never)
        .ready(),
    ).rejects.toBeInstanceOf(ConfigError);
  });
});
