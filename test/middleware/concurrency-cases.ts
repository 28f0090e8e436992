/**
 * HTTP cases for request concurrency (cases.ts runs them through Express and Koa): handlers that hold the
 * request never see more than the cap in flight; the slot comes back when the response finishes, when the
 * client goes away, and when the handler throws; exactly one release per admitted request.
 */
import { createServer, type RequestListener, type Server } from 'node:http';
import request from 'supertest';
import { createLimiter, type Limiter } from '../../src/limiter/limiter';
import type { Decision } from '../../src/types';
import { tenant, type CaseEnv, type HttpCase } from './cases';

const get = (app: RequestListener | Server) => request(app).get('/?tenant=a');

/** A handler hold the test opens: counts the requests inside, and the most at once. */
function gate() {
  let open: () => void = () => {};
  let opened = new Promise<void>((resolve) => (open = resolve));
  const g = {
    inside: 0,
    most: 0,
    fail: false,
    hold: async (): Promise<void> => {
      g.inside += 1;
      g.most = Math.max(g.most, g.inside);
      try {
        await opened;
        if (g.fail) throw new Error('handler failed');
      } finally {
        g.inside -= 1;
      }
    },
    open: () => open(),
    close: () => (opened = new Promise<void>((resolve) => (open = resolve))),
  };
  return g;
}

async function until(what: string, ok: () => boolean, ms = 3000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** The limiter, its release calls counted. */
function counted(env: CaseEnv, label: string, concurrency: number): { limiter: Limiter; releases: Decision[] } {
  const limiter = createLimiter({ store: env.store(), name: env.name(label), limit: 1000, windowMs: 1000, concurrency });
  const releases: Decision[] = [];
  const release = limiter.release.bind(limiter);
  limiter.release = (d) => (releases.push(d), release(d));
  return { limiter, releases };
}

/** A request that gets 200 once a slot is free (the release lands just after the response). */
async function admittedSoon(app: RequestListener): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if ((await get(app)).status === 200) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error('no slot came back');
}

const capCase = (cap: number): HttpCase => ({
  title: `concurrency ${cap}: never more in flight; the rest 429 with a jittered Retry-After naming "concurrency"; slots back when the responses finish`,
  redis: true,
  async run(env) {
    const g = gate();
    const { limiter, releases } = counted(env, `cc${cap}`, cap);
    const app = env.h.app({ '/': { limiter, group: tenant } }, 'default', { hold: g.hold });
    const held = Array.from({ length: cap }, () => get(app).then((r) => r));
    await until(`${cap} requests inside`, () => g.inside === cap);
    const over = await Promise.all(Array.from({ length: 3 }, () => get(app)));
    expect(g.most).toBe(cap);
    for (const r of over) {
      expect(r.status).toBe(429);
      expect(JSON.parse(r.text)['violated-policies']).toEqual(['concurrency']);
      expect(['1', '2']).toContain(r.headers['retry-after']);
      expect(r.headers['ratelimit-policy']).toMatch(new RegExp(`, "concurrency";q=${cap}$`));
      expect(r.headers['ratelimit']).toMatch(new RegExp(`, "concurrency";r=0;t=${r.headers['retry-after']}$`));
    }
    g.open();
    expect((await Promise.all(held)).map((r) => r.status)).toEqual(Array(cap).fill(200));
    await until('every slot released', () => releases.length === cap);
    // the same number again: every slot came back
    g.close();
    const again = Array.from({ length: cap }, () => get(app).then((r) => r));
    await until(`${cap} requests inside again`, () => g.inside === cap);
    expect((await get(app)).status).toBe(429);
    g.open();
    expect((await Promise.all(again)).map((r) => r.status)).toEqual(Array(cap).fill(200));
    await until('every slot released', () => releases.length === 2 * cap);
    await new Promise((resolve) => setTimeout(resolve, 50));
    // exactly once each ('finish' and 'close' both fire)
    expect(releases).toHaveLength(2 * cap);
    expect(g.most).toBe(cap);
    await limiter.close();
  },
});

export const CONCURRENCY_CASES: readonly HttpCase[] = [
  capCase(1),
  capCase(3),
  capCase(5),
  {
    title: 'concurrency: a client that goes away frees its slot while the handler still runs',
    redis: true,
    async run(env) {
      const g = gate();
      const { limiter, releases } = counted(env, 'abort', 1);
      // a server of our own: supertest closes the one it makes only when a request ends, and this one is aborted
      const app = createServer(env.h.app({ '/': { limiter, group: tenant } }, 'default', { hold: g.hold })).listen(0);
      // the client goes away once its request is inside (however long a busy machine takes to get it there)
      const first = get(app);
      void first.then(
        () => undefined,
        () => undefined,
      );
      await until('the first request inside', () => g.inside === 1);
      first.abort();
      await until('the aborted request released', () => releases.length === 1);
      const next = get(app).then((r) => r);
      // the slot is free although the first handler is still inside
      await until('a second request inside', () => g.inside === 2);
      g.open();
      expect((await next).status).toBe(200);
      await until('both released', () => releases.length === 2);
      await limiter.close();
      await new Promise((resolve) => app.close(resolve));
    },
  },
  {
    title: 'concurrency: on a route that defers, a request over the cap is deferred (202) like one over the rate',
    redis: true,
    async run(env) {
      const g = gate();
      const { limiter } = counted(env, 'defer', 1);
      const defer = { type: 'report', statusUrl: (id: string) => `/jobs/${id}` };
      const app = env.h.app({ '/': { limiter, group: tenant, defer } }, 'default', { hold: g.hold });
      const held = get(app).then((r) => r);
      await until('a request inside', () => g.inside === 1);
      const over = await get(app);
      expect(over.status).toBe(202);
      expect(over.headers['location']).toMatch(/^\/jobs\//);
      expect(over.headers['ratelimit']).toMatch(/, "concurrency";r=0;t=\d+$/);
      g.open();
      expect((await held).status).toBe(200);
      await limiter.close();
    },
  },
  {
    title: 'concurrency: a handler that throws frees its slot (once)',
    redis: true,
    async run(env) {
      const g = gate();
      g.fail = true;
      g.open();
      const { limiter, releases } = counted(env, 'throw', 1);
      const app = env.h.app({ '/': { limiter, group: tenant } }, 'app', { hold: g.hold });
      expect((await get(app)).status).toBe(500);
      g.fail = false;
      await admittedSoon(app);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(releases).toHaveLength(2);
      await limiter.close();
    },
  },
];
