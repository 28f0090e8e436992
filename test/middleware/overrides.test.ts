/**
 * A check under an override through Express and Koa: a blocked tenant gets a 429 naming the `blocked` policy (its
 * Retry-After until the block ends), and a tenant with an override's rules gets RateLimit fields naming those rules,
 * not the limiter's; a denial by one of them names it in `violated-policies`.
 */
import express from 'express';
import Koa from 'koa';
import request from 'supertest';
import { createLimiter } from '../../src/limiter/limiter';
import { MemoryStore } from '../../src/memory/memory-store';
import * as onExpress from '../../src/middleware/express';
import * as onKoa from '../../src/middleware/koa';
import type { Limiter } from '../../src/limiter/limiter';

const apps: Array<[string, (limiter: Limiter) => Parameters<typeof request>[0]]> = [
  [
    'express',
    (limiter) => {
      const app = express();
      app.use(onExpress.bulkLimiter({ limiter, group: (req) => req.get('x-tenant') ?? 'anon' }));
      app.get('/', (_req, res) => res.send('ok'));
      return app;
    },
  ],
  [
    'koa',
    (limiter) => {
      const app = new Koa();
      app.use(onKoa.bulkLimiter({ limiter, group: (ctx) => ctx.get('x-tenant') || 'anon' }));
      app.use((ctx) => {
        ctx.body = 'ok';
      });
      return app.callback();
    },
  ],
];

describe.each(apps)('overrides through %s', (_name, make) => {
  test('a block: 429, the blocked policy, Retry-After until it ends', async () => {
    const limiter = createLimiter({
      store: new MemoryStore(),
      name: 'mw',
      limit: 100,
      windowMs: 1000,
      rules: [{ name: 'r', limit: 5, windowMs: 1000 }],
    });
    await limiter.setOverride('bad', { blocked: true }, { ttlMs: 60_000 });
    const res = await request(make(limiter)).get('/').set('x-tenant', 'bad');
    expect(res.status).toBe(429);
    expect(res.headers['retry-after']).toBe('60');
    expect(res.headers['ratelimit-policy']).toBe('"mw";q=0;w=1');
    expect(JSON.parse(res.text)['violated-policies']).toEqual(['blocked']);
  });

  test("an override's rules: the RateLimit fields and violated-policies name them", async () => {
    const limiter = createLimiter({
      store: new MemoryStore(),
      name: 'mw',
      limit: 100,
      windowMs: 1000,
      rules: [{ name: 'r', limit: 5, windowMs: 1000 }],
    });
    await limiter.setOverride('small', { rules: [{ name: 'tiny', limit: 1, windowMs: 1000, algorithm: 'sliding-window' }] });
    const app = make(limiter);
    const ok = await request(app).get('/').set('x-tenant', 'small');
    expect(ok.status).toBe(200);
    // the global policy's quota: the group's cap, its whole limit while it is alone
    expect(ok.headers['ratelimit-policy']).toBe('"mw";q=100;w=1, "tiny";q=1;w=1');
    const denied = await request(app).get('/').set('x-tenant', 'small');
    expect(denied.status).toBe(429);
    expect(JSON.parse(denied.text)['violated-policies']).toEqual(['tiny']);
    const plain = await request(app).get('/').set('x-tenant', 'other');
    // (the global quota is other's cap: its guarantee, half, in a fresh limiter's first epoch: docs/algorithm.md §2.5)
    expect(plain.headers['ratelimit-policy']).toMatch(/^"mw";q=\d+;w=1, "r";q=5;w=1$/);
  });
});
