/** HTTP cases for rules (cases.ts runs them through Express and Koa): the policy that said no, one header item per policy. */
import type { RequestListener } from 'node:http';
import request from 'supertest';
import { createLimiter } from '../../src/limiter';
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
];
