/** HTTP cases for rules (cases.ts runs them through Express and Koa): the policy that said no, one header item per policy. */
import type { RequestListener } from 'node:http';
import request from 'supertest';
import { createLimiter } from '../../src/limiter/limiter';
import { tenant, type HttpCase } from './cases';

const get = (app: RequestListener, path: string) => request(app).get(path);

export const RULE_CASES: readonly HttpCase[] = [
  {
    title: 'rules: one RateLimit item per policy; the 429 names the rule that said no; downstream code sees the decision',
    redis: true,
    async run(env) {
      const limiter = createLimiter({
        store: env.store(),
        name: env.name('rules'),
        limit: 100,
        windowMs: 60_000,
        rules: [
          { name: 'per-second', limit: 2, windowMs: 1000, algorithm: 'sliding-window' },
          { name: 'per-hour', limit: 5, windowMs: 3_600_000, algorithm: 'fixed-window' },
        ],
      });
      const app = env.h.app({ '/': { limiter, group: tenant } });
      const policy = `"${limiter.name}";q=100;w=60, "per-second";q=2;w=1, "per-hour";q=5;w=3600`;
      const first = await get(app, '/?tenant=a');
      expect(first.status).toBe(200);
      expect(first.headers['ratelimit-policy']).toBe(policy);
      expect(first.headers['ratelimit']).toMatch(new RegExp(`^"${limiter.name}";r=\\d+;t=\\d+, "per-second";r=1;t=[12], "per-hour";r=4;t=3600$`));
      const seen = JSON.parse(first.headers['x-seen-decision'] as string) as { rules: Array<{ name: string; remaining: number }> };
      expect(seen.rules.map((r) => [r.name, r.remaining])).toEqual([
        ['per-second', 1],
        ['per-hour', 4],
      ]);
      expect((await get(app, '/?tenant=a')).status).toBe(200);
      const denied = await get(app, '/?tenant=a');
      expect(denied.status).toBe(429);
      expect(JSON.parse(denied.text)['violated-policies']).toEqual(['per-second']);
      const retry = Number(denied.headers['retry-after']);
      expect([1, 2]).toContain(retry); // the window, up to one sub-window more, in whole seconds
      expect(denied.headers['ratelimit-policy']).toBe(policy);
      expect(denied.headers['ratelimit']).toMatch(new RegExp(`, "per-second";r=0;t=${retry}, "per-hour";r=3;t=\\d+$`));
      // another tenant is not held back by a's rule
      expect((await get(app, '/?tenant=b')).status).toBe(200);
    },
  },
  {
    title: "plans: the plan function picks a plan's rules (merged with the limiter's by name) and weight; headers and the 429 follow the plan",
    redis: true,
    async run(env) {
      const limiter = createLimiter({
        store: env.store(),
        name: env.name('plans'),
        limit: 100,
        windowMs: 60_000,
        rules: [{ name: 'per-second', limit: 2, windowMs: 1000, algorithm: 'sliding-window' }],
        plans: {
          pro: {
            weight: 3,
            rules: [
              { name: 'per-second', limit: 4, windowMs: 1000, algorithm: 'sliding-window' },
              { name: 'per-hour', limit: 6, windowMs: 3_600_000, algorithm: 'fixed-window' },
            ],
          },
        },
      });
      const plan = (group: string): string | undefined => (group.startsWith('pro-') ? 'pro' : undefined);
      const app = env.h.app({ '/': { limiter, group: tenant, plan } });
      const pro = await get(app, '/?tenant=pro-a');
      expect(pro.status).toBe(200);
      expect(pro.headers['ratelimit-policy']).toMatch(new RegExp(`^"${limiter.name}";q=\\d+;w=60, "per-second";q=4;w=1, "per-hour";q=6;w=3600$`));
      const seen = JSON.parse(pro.headers['x-seen-decision'] as string) as { rules: Array<{ name: string; remaining: number }> };
      expect(seen.rules.map((r) => [r.name, r.remaining])).toEqual([
        ['per-second', 3],
        ['per-hour', 5],
      ]);
      for (let i = 0; i < 3; i++) expect((await get(app, '/?tenant=pro-a')).status).toBe(200);
      const proDenied = await get(app, '/?tenant=pro-a');
      expect(proDenied.status).toBe(429);
      expect(JSON.parse(proDenied.text)['violated-policies']).toEqual(['per-second']);
      // a tenant without a plan: the limiter's own rule
      const basic = await get(app, '/?tenant=b');
      // (the global policy's quota is b's cap: its guarantee in a fresh limiter's first epoch, docs/algorithm.md §2.5)
      expect(basic.headers['ratelimit-policy']).toMatch(new RegExp(`^"${limiter.name}";q=\\d+;w=60, "per-second";q=2;w=1$`));
      expect((await get(app, '/?tenant=b')).status).toBe(200);
      const basicDenied = await get(app, '/?tenant=b');
      expect(basicDenied.status).toBe(429);
      expect(JSON.parse(basicDenied.text)['violated-policies']).toEqual(['per-second']);
    },
  },
  {
    title: "plans: without a plan function every request gets the defaultPlan's rules in its headers and 429",
    async run(env) {
      const limiter = createLimiter({
        store: env.store(),
        name: env.name('default-plan'),
        limit: 100,
        windowMs: 60_000,
        rules: [{ name: 'per-second', limit: 5, windowMs: 1000, algorithm: 'sliding-window' }],
        plans: { trial: { rules: [{ name: 'per-day', limit: 1, windowMs: 86_400_000, algorithm: 'fixed-window' }] } },
        defaultPlan: 'trial',
      });
      const app = env.h.app({ '/': { limiter, group: tenant } });
      const first = await get(app, '/?tenant=a');
      expect(first.status).toBe(200);
      expect(first.headers['ratelimit-policy']).toBe(`"${limiter.name}";q=100;w=60, "per-second";q=5;w=1, "per-day";q=1;w=86400`);
      const denied = await get(app, '/?tenant=a');
      expect(denied.status).toBe(429);
      expect(JSON.parse(denied.text)['violated-policies']).toEqual(['per-day']);
    },
  },
];
