/**
 * dashboard({ limiters, authorize }) through Express, Koa and Koa + @koa/router: the page and its JSON after
 * a known sequence of requests, dead-letter actions only when authorize allows (checked by the POST itself),
 * option errors at construction, and a bounded count of groups however many ids arrive.
 */
import Koa from 'koa';
import request from 'supertest';
import { ConfigError } from '../../src/errors';
import { createLimiter, type Limiter } from '../../src/limiter/limiter';
import { LimiterTraffic } from '../../src/dashboard/traffic';
import type { DashboardData, GroupView } from '../../src/dashboard/data';
import * as onExpress from '../../src/middleware/express';
import * as onKoa from '../../src/middleware/koa';
import { MemoryStore } from '../../src/memory/memory-store';
import type { LimiterObserver } from '../../src/limiter/limiter';
import { RedisStore } from '../../src/redis/redis-store';
import { startRedis, type RedisServer } from '../helpers/redis-server';
import { deadJob, mounts } from './fixtures';

let redis: RedisServer | undefined;
const limiters: Limiter[] = [];
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  for (const limiter of limiters) await limiter.close();
  await redis?.stop();
});

let seq = 0;
const newLimiter = (over: object = {}): Limiter =>
  createLimiter({
    store: new MemoryStore(),
    name: `dash-${++seq}`,
    limit: 6,
    tuning: { burst: 6, reserve: 1, probationMs: 0 },
    windowMs: 60_000,
    ...over,
  });
const sum = (list: readonly number[]) => list.reduce((a, b) => a + b, 0);
const totals = (g: Pick<GroupView, 'traffic'>) => ({
  allowed: sum(g.traffic.allowed),
  denied: sum(g.traffic.denied),
  deferred: sum(g.traffic.deferred),
});
const TOKEN = 'Bearer let-me-in';

describe.each(mounts)('dashboard through %s', (_name, mount) => {
  test('serves the self-contained page at the mount (with and without a trailing slash) and leaves other paths to the app', async () => {
    const app = mount({ limiters: [newLimiter()] });
    for (const path of ['/dashboard', '/dashboard/']) {
      const page = await request(app).get(path);
      expect(page.status).toBe(200);
      expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(page.headers['content-security-policy']).toMatch(/script-src 'sha256-[A-Za-z0-9+/=]+'; style-src 'sha256-/);
      expect(page.text).toContain('<title>bulk-limiter dashboard</title>');
      // Nothing is loaded from elsewhere: no src, no URL but the SVG namespace.
      expect(page.text.replaceAll("'http://www.w3.org/2000/svg'", '')).not.toMatch(/\ssrc=|https?:\/\//);
    }
    expect((await request(app).get('/other')).text).toBe('other');
    expect((await request(app).get('/dashboard/nope')).status).toBe(404);
  });

  test('the JSON: per tenant the decisions of a known sequence, their fair share, plan and jobs; the queue by state', async () => {
    const limiter = newLimiter();
    const app = mount({ limiters: [limiter], plan: (g: string) => (g === 'acme' ? 'gold' : undefined) });
    const seen = { acme: [0, 0, 0], bulkbot: [0, 0, 0], importer: [0, 0, 0] };
    const count = (tenant: keyof typeof seen, d: { allowed: boolean; job?: unknown }) => {
      seen[tenant][d.allowed ? 0 : d.job ? 2 : 1]! += 1;
    };
    for (let i = 0; i < 2; i++) count('acme', await limiter.check('acme', { weight: 3 }));
    for (let i = 0; i < 6; i++) count('bulkbot', await limiter.check('bulkbot'));
    for (let i = 0; i < 3; i++) count('importer', await limiter.check('importer', { defer: { type: 'import', payload: { i } } }));
    // The fair share shown is the one of the group's latest decision: acme's, now that three groups are active.
    count('acme', await limiter.check('acme', { weight: 3 }));
    // The sequence reached every outcome.
    expect(seen).toEqual({
      acme: [expect.any(Number), expect.any(Number), 0],
      bulkbot: [expect.any(Number), expect.any(Number), 0],
      importer: [expect.any(Number), expect.any(Number), expect.any(Number)],
    });
    expect(seen.bulkbot[1]! + seen.importer[1]!).toBeGreaterThan(0);
    expect(seen.importer[2]).toBeGreaterThan(0);

    const listDead = jest.spyOn(limiter, 'listDead');
    const res = await request(app).get('/dashboard/data');
    expect(res.status).toBe(200);
    expect(listDead).toHaveBeenCalledWith(0, 20); // the 20 newest dead letters
    expect(res.headers['cache-control']).toBe('no-store');
    const data = res.body as DashboardData;
    expect(data.actions).toBe('none');
    const [view] = data.limiters;
    // Strict: (limit − burst + 1) per window.
    expect(view).toMatchObject({
      name: limiter.name,
      limit: 6,
      windowMs: 60_000,
      burst: 6,
      sustained: false,
      capacityPerSecond: 1 / 60,
      degraded: false,
    });
    const byGroup = Object.fromEntries(view!.groups.map((g) => [g.group, g]));
    expect(Object.keys(byGroup).sort()).toEqual(['acme', 'bulkbot', 'importer']);
    for (const tenant of ['acme', 'bulkbot', 'importer'] as const) {
      const [allowed, denied, deferred] = seen[tenant];
      expect({ tenant, ...totals(byGroup[tenant]!) }).toEqual({ tenant, allowed, denied, deferred });
      expect(byGroup[tenant]!.traffic.allowed).toHaveLength(60);
    }
    const all = (i: number) => seen.acme[i]! + seen.bulkbot[i]! + seen.importer[i]!;
    expect(totals({ traffic: view!.traffic })).toEqual({ allowed: all(0), denied: all(1), deferred: all(2) });
    expect(sum(view!.other.allowed) + sum(view!.other.denied) + sum(view!.other.deferred)).toBe(0);
    expect(byGroup.acme!.plan).toBe('gold');
    expect(byGroup.bulkbot!.plan).toBeUndefined();
    // The store's guaranteed share (weight 3 of Σw 5 → ⌊3 · 6 / 5⌋ = 3 units per window).
    expect(byGroup.acme!.guaranteed).toBe(3);
    expect(byGroup.importer!.jobs).toMatchObject({ waiting: seen.importer[2], active: 0 });
    const { oldestWaitingMs: _age, ...counts } = await limiter.counts(); // the age moves with the real clock
    expect(view!.jobs).toMatchObject(counts);
    expect(view!.jobs!.oldestWaitingMs).toBeGreaterThanOrEqual(0);
    expect(view!.dead).toEqual([]);
  });

  test('the JSON: the oldest waiting job of the limiter and of each tenant, aged on the store clock; a job not due yet does not count', async () => {
    let now = 1_800_000_000_000;
    const limiter = newLimiter({ store: new MemoryStore({ clock: () => now }), maxDeferMs: 600_000 });
    const app = mount({ limiters: [limiter] });
    await limiter.check('importer', { defer: { type: 'import', payload: {} } }); // admitted: no job
    for (let i = 0; i < 6; i++) await limiter.check('importer', { defer: { type: 'import', payload: { i } } });
    now += 4000;
    await limiter.check('late', { defer: { type: 'import', payload: {} } });
    await limiter.check('scheduled'); // a decision, so the tenant is listed
    await limiter.enqueue('scheduled', { type: 'import', payload: {}, delayMs: 60_000 });
    now += 1500;
    const view = ((await request(app).get('/dashboard/data')).body as DashboardData).limiters[0]!;
    const byGroup = Object.fromEntries(view.groups.map((g) => [g.group, g.jobs]));
    expect(view.jobs!.oldestWaitingMs).toBe(5500);
    expect(byGroup.importer!.oldestWaitingMs).toBe(5500);
    expect(byGroup.late).toMatchObject({ waiting: 1, oldestWaitingMs: 1500 });
    expect(byGroup.scheduled).toMatchObject({ waiting: 1, oldestWaitingMs: 0 }); // due in a minute: not waiting
  });

  test('retry and remove answer 403 without authorize, and when it says no; with it they act on a real dead job', async () => {
    const limiter = newLimiter({ limit: 100, tuning: { burst: 100, reserve: 1, probationMs: 0 }, windowMs: 1000 });
    const first = await deadJob(limiter, 'acme', 'bad account');
    const second = await deadJob(limiter, '<b>evil</b>');

    const readOnly = mount({ limiters: [limiter] });
    const post = (app: ReturnType<typeof mount>, action: string, id: string, token?: string) => {
      const r = request(app)
        .post(`/dashboard/dead/${action}?limiter=${encodeURIComponent(limiter.name)}&id=${encodeURIComponent(id)}`)
        .set('X-Requested-With', 'test');
      return token === undefined ? r : r.set('Authorization', token);
    };
    expect((await post(readOnly, 'retry', first, TOKEN)).status).toBe(403);
    expect((await post(readOnly, 'remove', first, TOKEN)).status).toBe(403);

    const calls: string[] = [];
    const authorize = (ctx: { get(name: string): string }) => {
      calls.push('authorize');
      return ctx.get('authorization') === TOKEN;
    };
    const app = mount({ limiters: [limiter], authorize });
    const locked = await request(app).get('/dashboard/data');
    expect(locked.body.actions).toBe('locked');
    const dead = (locked.body as DashboardData).limiters[0]!.dead!;
    expect(dead.map((j) => [j.id, j.group, j.error])).toEqual([
      [second, '<b>evil</b>', 'the payload names no account'],
      [first, 'acme', 'bad account'],
    ]);
    expect((await request(app).get('/dashboard/data').set('Authorization', TOKEN)).body.actions).toBe('allowed');

    expect((await post(app, 'retry', first)).status).toBe(403);
    expect((await post(app, 'retry', first, 'Bearer wrong')).status).toBe(403);
    // Authorized, but not from a page's script: a cross-site form cannot add X-Requested-With.
    expect((await request(app).post(`/dashboard/dead/retry?limiter=${limiter.name}&id=${first}`).set('Authorization', TOKEN)).status).toBe(403);
    expect((await request(app).get(`/dashboard/dead/retry?limiter=${limiter.name}&id=${first}`).set('Authorization', TOKEN)).status).toBe(405);
    expect((await limiter.getJob(first))?.state).toBe('dead');

    const retried = await post(app, 'retry', first, TOKEN);
    expect([retried.status, retried.body]).toEqual([200, { ok: true }]);
    expect((await limiter.getJob(first))?.state).not.toBe('dead');
    expect((await post(app, 'retry', first, TOKEN)).status).toBe(404); // no longer dead
    const removed = await post(app, 'remove', second, TOKEN);
    expect([removed.status, removed.body]).toEqual([200, { ok: true }]);
    expect(await limiter.getJob(second)).toBeNull();
    expect(
      (await request(app).post('/dashboard/dead/remove?limiter=nope&id=1').set('X-Requested-With', 't').set('Authorization', TOKEN)).status,
    ).toBe(404);
    expect(
      (await request(app).post(`/dashboard/dead/remove?limiter=${limiter.name}`).set('X-Requested-With', 't').set('Authorization', TOKEN)).status,
    ).toBe(400);
    expect(calls.length).toBeGreaterThan(0);
    expect((await limiter.counts()).dead).toBe(0);
  });
});

describe('dashboard options', () => {
  const limiter = newLimiter();
  test.each([
    ['options that are not an object', null, 'ERR_BL_OPTIONS'],
    ['an unknown option', { limiters: [limiter], authorise: () => true }, 'ERR_BL_UNKNOWN_OPTION'],
    ['no limiters', { limiters: [] }, 'ERR_BL_LIMITERS'],
    ['a limiter twice', { limiters: [limiter, limiter] }, 'ERR_BL_LIMITERS'],
    ['authorize not a function', { limiters: [limiter], authorize: true }, 'ERR_BL_AUTHORIZE'],
    ['plan not a function', { limiters: [limiter], plan: { acme: 'gold' } }, 'ERR_BL_PLAN'],
    ['topGroups 0', { limiters: [limiter], topGroups: 0 }, 'ERR_BL_TOP_GROUPS'],
  ])('%s is refused at construction, in both adapters', (_what, options, code) => {
    for (const make of [onExpress.dashboard, onKoa.dashboard]) {
      expect(() => make(options as never)).toThrow(ConfigError);
      expect(() => make(options as never)).toThrow(expect.objectContaining({ code }));
    }
  });
  test("Koa's path defaults to /dashboard", async () => {
    const app = new Koa();
    app.use(onKoa.dashboard({ limiters: [limiter] }));
    expect((await request(app.callback()).get('/dashboard')).status).toBe(200);
    expect((await request(app.callback()).get('/')).status).toBe(404);
  });
  test("Koa's path must start with '/'; Express refuses a path (its mount is the path)", () => {
    expect(() => onKoa.dashboard({ limiters: [limiter], path: 'dashboard' })).toThrow(expect.objectContaining({ code: 'ERR_BL_PATH' }));
    expect(() => onExpress.dashboard({ limiters: [limiter], path: '/dashboard' } as never)).toThrow(
      expect.objectContaining({ code: 'ERR_BL_UNKNOWN_OPTION' }),
    );
  });
});

describe('bounded by the busiest groups', () => {
  test('100,000 distinct group ids keep at most topGroups groups and 4 × topGroups summary entries', () => {
    let observer: LimiterObserver | undefined;
    const stub = {
      observe: (o: LimiterObserver) => {
        observer = o;
        return () => undefined;
      },
      on: () => stub,
    } as unknown as Limiter;
    const traffic = new LimiterTraffic(stub, 10, () => 1_800_000_000_000);
    const decide = (group: string, allowed: boolean) => observer!.decision!({ allowed, group, guaranteed: 1 } as never, undefined);
    for (let i = 0; i < 100_000; i++) {
      decide(`tenant-${i}`, i % 2 === 0);
      // One heavy tenant among them.
      decide('heavy', true);
    }
    expect(traffic.size.labelled).toBe(10);
    expect(traffic.size.candidates).toBeLessThanOrEqual(40);
    const view = traffic.read();
    expect(view.groups).toHaveLength(10);
    expect(view.groups.map((g) => g.group)).toContain('heavy');
    expect(sum(view.all.allowed) + sum(view.all.denied)).toBe(200_000);
    // Everyone not labelled is counted together, so nothing is lost.
    const labelled = view.groups.reduce((n, g) => n + sum(g.series.allowed) + sum(g.series.denied), 0);
    expect(labelled + sum(view.other.allowed) + sum(view.other.denied)).toBe(200_000);
  });

  test('the JSON lists at most topGroups tenants after 2,000 distinct ones', async () => {
    const limiter = newLimiter({ limit: 100_000, tuning: { burst: 100_000, reserve: 1, probationMs: 0 }, windowMs: 1000 });
    const app = mounts[0]![1]({ limiters: [limiter], topGroups: 3 });
    for (let i = 0; i < 2000; i++) await limiter.check(`t${i}`);
    const view = ((await request(app).get('/dashboard/data')).body as DashboardData).limiters[0]!;
    expect(view.groups.length).toBeLessThanOrEqual(3);
    expect(sum(view.traffic.allowed)).toBe(2000);
  });
});

describe.each(mounts)('dashboard overrides through %s', (_name, mount) => {
  test('the JSON lists the overrides; set and remove answer 403 unless authorize allows, 400 for bad settings', async () => {
    const limiter = newLimiter({ limit: 100, tuning: { burst: 100, reserve: 1, probationMs: 0 }, windowMs: 1000 });
    await limiter.setOverride('acme', { weight: 3 }, { reason: 'upgrade' });
    const authorize = (ctx: { get(name: string): string }) => ctx.get('authorization') === TOKEN;
    const app = mount({ limiters: [limiter], authorize });
    /** null: no Authorization header. */
    const post = (action: string, query: string, token: string | null = TOKEN) => {
      const r = request(app)
        .post(`/dashboard/overrides/${action}?limiter=${encodeURIComponent(limiter.name)}&${query}`)
        .set('X-Requested-With', 'test');
      return token === null ? r : r.set('Authorization', token);
    };
    const listed = (await request(app).get('/dashboard/data')).body as DashboardData;
    expect(listed.limiters[0]!.overrides).toEqual([expect.objectContaining({ group: 'acme', settings: { weight: 3 }, reason: 'upgrade' })]);

    const block = `group=${encodeURIComponent('<b>evil</b>')}&settings=${encodeURIComponent('{"blocked":true}')}&ttlMs=60000&reason=abuse`;
    expect((await post('set', block, null)).status).toBe(403);
    expect((await post('set', block, 'Bearer wrong')).status).toBe(403);
    expect((await request(app).post(`/dashboard/overrides/set?limiter=${limiter.name}&${block}`).set('Authorization', TOKEN)).status).toBe(403);
    expect(await limiter.getOverride('<b>evil</b>')).toBeNull();
    const set = await post('set', block);
    expect([set.status, set.body.override]).toEqual([
      200,
      expect.objectContaining({ group: '<b>evil</b>', settings: { blocked: true }, reason: 'abuse' }),
    ]);
    expect((await limiter.check('<b>evil</b>')).policy).toBe('blocked');

    const bad = await post('set', `group=x&settings=${encodeURIComponent('{"weight":0}')}`);
    expect([bad.status, bad.body.code]).toEqual([400, 'ERR_BL_OVERRIDE']);
    expect((await post('set', 'group=x&settings=not-json')).status).toBe(400);
    expect((await post('set', `settings=${encodeURIComponent('{"weight":2}')}`)).status).toBe(400);

    expect((await post('remove', 'group=acme', null)).status).toBe(403);
    expect((await post('remove', 'group=acme')).body).toEqual({ ok: true });
    expect((await post('remove', 'group=acme')).status).toBe(404);
    const after = (await request(app).get('/dashboard/data')).body as DashboardData;
    expect(after.limiters[0]!.overrides!.map((o) => o.group)).toEqual(['<b>evil</b>']);
  });
});

describe.each([
  ['MemoryStore', () => new MemoryStore()],
  ['RedisStore', () => new RedisStore({ client: redis!.client(), prefix: `dash-${process.pid}` })],
])("the override form's route on %s", (_store, makeStore) => {
  const PLANS = { gold: { weight: 4, concurrency: 3 }, bronze: { weight: 1 } };
  const setUp = (tuning: object = {}) => {
    const limiter = createLimiter({
      store: makeStore(),
      name: `dash-form-${++seq}`,
      limit: 100,
      windowMs: 1000,
      plans: PLANS,
      tuning: { burst: 100, reserve: 1, probationMs: 0, ...tuning },
    });
    limiters.push(limiter);
    const app = mounts[0]![1]({ limiters: [limiter], authorize: (req: { get(name: string): string }) => req.get('authorization') === TOKEN });
    const set = (fields: Record<string, string>) =>
      request(app)
        .post(`/dashboard/overrides/set?${new URLSearchParams({ limiter: limiter.name, ...fields })}`)
        .set('X-Requested-With', 'bulk-limiter-dashboard')
        .set('Authorization', TOKEN);
    return { limiter, app, set };
  };

  test("the form's fields set an override, and setting it again changes it; the list shows each", async () => {
    const { limiter, app, set } = setUp();
    const first = await set({
      group: 'acme',
      plan: 'gold',
      weight: '6',
      concurrency: '2',
      groupConcurrency: '5',
      ttlMs: '3600000',
      reason: 'upgrade',
    });
    expect(first.status).toBe(200);
    const settings = { plan: 'gold', weight: 6, concurrency: 2, groupConcurrency: 5 };
    expect(first.body.override).toMatchObject({ group: 'acme', settings, reason: 'upgrade' });
    expect(first.body.override.expiresAt - first.body.override.setAt).toBe(3_600_000);
    expect(await limiter.getOverride('acme')).toEqual(first.body.override);

    // rules as JSON, next to the other fields; what the new one lacks is gone (it replaces the override)
    const rules = [{ name: 'tenant', limit: 2, windowMs: 60_000, algorithm: 'sliding-window' }];
    const second = await set({ group: 'acme', rules: JSON.stringify(rules), weight: '2' });
    expect(second.status).toBe(200);
    expect(second.body.override).toEqual({ group: 'acme', settings: { weight: 2, rules }, setAt: expect.any(Number) });
    const decisions = [await limiter.check('acme'), await limiter.check('acme'), await limiter.check('acme')];
    expect(decisions.map((d) => [d.allowed, d.policy])).toEqual([
      [true, undefined],
      [true, undefined],
      [false, 'tenant'],
    ]);

    expect((await set({ group: 'acme', blocked: 'true', reason: 'abuse' })).status).toBe(200);
    expect(await limiter.check('acme')).toMatchObject({ allowed: false, policy: 'blocked' });
    const listed = ((await request(app).get('/dashboard/data')).body as DashboardData).limiters[0]!;
    expect(listed.overrides).toEqual([expect.objectContaining({ group: 'acme', settings: { blocked: true }, reason: 'abuse' })]);
    expect(listed.plans).toEqual(['gold', 'bronze']);
  });

  test.each([
    ['weight 0', { weight: '0' }, 'ERR_BL_OVERRIDE', ['`settings.weight`', '`0` (number)']],
    ['a weight that is not a number', { weight: 'lots' }, 'ERR_BL_OVERRIDE', ['`settings.weight`', '"lots" (string)']],
    ['a fractional concurrency', { concurrency: '1.5' }, 'ERR_BL_OVERRIDE', ['`settings.concurrency`', '`1.5` (number)']],
    ['an unknown plan', { plan: 'platinum' }, 'ERR_BL_UNKNOWN_PLAN', ['`plan`', '"gold", "bronze"', '"platinum" (string)']],
    ['blocked other than true', { blocked: 'yes' }, 'ERR_BL_OVERRIDE', ['`settings.blocked`', '"yes" (string)']],
    ['rules that are not JSON', { rules: '[{name: tenant}]' }, 'ERR_BL_OVERRIDE', ['`settings.rules`', '"[{name: tenant}]" (string)']],
    ['a rule without a limit', { rules: '[{"name":"t","windowMs":1000}]' }, 'ERR_BL_OVERRIDE', ['settings.rules[0].limit']],
    ['no setting at all', { reason: 'why not' }, 'ERR_BL_OVERRIDE', ['at least one of plan, weight']],
    ['a negative ttl', { weight: '2', ttlMs: '-5' }, 'ERR_BL_OVERRIDE_OPTIONS', ['`ttlMs`', '`-5` (number)']],
    ['a ttl of 31 days', { weight: '2', ttlMs: String(31 * 86_400_000) }, 'ERR_BL_OVERRIDE_OPTIONS', ['`ttlMs`', '2678400000']],
    ['a reason of 201 characters', { weight: '2', reason: 'x'.repeat(201) }, 'ERR_BL_OVERRIDE_OPTIONS', ['`reason`']],
    ['settings JSON that is not an object', { settings: '[1]' }, 'ERR_BL_OVERRIDE', ['`settings`', 'an array']],
  ])('%s: a 400 problem naming the field and the value; nothing written', async (_what, fields, code, named) => {
    const { limiter, set } = setUp();
    const res = await set({ group: 'acme', ...fields });
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(res.body).toMatchObject({ type: 'about:blank', title: 'Bad Request', status: 400, code });
    for (const part of named) expect(res.body.detail).toContain(part);
    expect(await limiter.getOverride('acme')).toBeNull();
  });

  test('a group id the limiter refuses is a 400 problem too', async () => {
    const { set } = setUp();
    const res = await set({ group: '*overflow*', weight: '2' });
    expect([res.status, res.body.code]).toEqual([400, 'ERR_BL_GROUP_RESERVED']);
    expect((await set({ weight: '2' })).body).toMatchObject({ status: 400, detail: 'Missing the group (?group=)' });
  });

  test('the cap on overrides is a 409 problem naming tuning.maxOverrides; replacing one is not one more', async () => {
    const { limiter, set } = setUp({ maxOverrides: 2 });
    expect((await set({ group: 'a', weight: '2' })).status).toBe(200);
    expect((await set({ group: 'b', weight: '2' })).status).toBe(200);
    const full = await set({ group: 'c', blocked: 'true' });
    expect(full.status).toBe(409);
    expect(full.body).toMatchObject({ title: 'Conflict', status: 409, code: 'ERR_BL_TOO_MANY_OVERRIDES' });
    expect(full.body.detail).toContain('`tuning.maxOverrides` (2)');
    expect(await limiter.getOverride('c')).toBeNull();
    expect((await set({ group: 'b', weight: '3' })).status).toBe(200);
  });
});

describe('the override routes when the store fails', () => {
  test('Redis killed: set and remove answer a 503 problem (Retry-After), not a 500 and not a 400', async () => {
    const own = await startRedis();
    let limiter: Limiter | undefined;
    try {
      limiter = createLimiter({
        store: new RedisStore({ client: own.client({ maxRetriesPerRequest: 1, retryStrategy: () => 50 }) }),
        name: `dash-down-${process.pid}`,
        limit: 100,
        windowMs: 1000,
        timeoutMs: 200,
        logger: { warn: () => undefined },
      });
      await limiter.setOverride('acme', { weight: 2 });
      const app = mounts[0]![1]({ limiters: [limiter], authorize: () => true });
      const post = (action: string, query: string) =>
        request(app).post(`/dashboard/overrides/${action}?limiter=${limiter!.name}&${query}`).set('X-Requested-With', 't');
      await own.kill();
      for (const [action, query] of [
        ['set', 'group=acme&blocked=true'],
        ['remove', 'group=acme'],
      ] as const) {
        const res = await post(action, query);
        expect(res.status).toBe(503);
        expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
        expect(res.headers['retry-after']).toBe('1');
        expect(res.body).toMatchObject({ title: 'Service Unavailable', status: 503, code: expect.stringMatching(/^ERR_BL_STORE_/) });
      }
      // a mistake in the input is still the client's, store or no store
      expect((await post('set', 'group=acme&weight=0')).status).toBe(400);
      // back: the same form works again
      const recovered = new Promise((resolve) => limiter!.on('recovered', resolve));
      await own.restart();
      await recovered;
      expect((await post('set', 'group=acme&blocked=true')).status).toBe(200);
    } finally {
      await limiter?.close();
      await own.stop();
    }
  });
});
