/**
 * The numbers the docs explain are the ones the code gives: the first response a newcomer sees (the README's
 * `RateLimit` fields from the example app, its burst and refill), and the guide's figures for the README's first
 * example and for per-route costs.
 */
import request from 'supertest';
import type { RequestListener } from 'node:http';
import { createLimiter } from '../../src/limiter/limiter';
import { resolveLimiterOptions } from '../../src/limiter/options';
import { MemoryStore } from '../../src/memory/memory-store';
import { blocksOf, joined, readDoc } from './readme-blocks';

jest.mock('bulk-limiter', () => jest.requireActual('../../src/index'), { virtual: true });
jest.mock('bulk-limiter/express', () => jest.requireActual('../../src/middleware/express'), { virtual: true });
jest.mock('bulk-limiter/prometheus', () => jest.requireActual('../../src/metrics/prometheus'), { virtual: true });

const readme = joined(readDoc('README.md'));
const guide = joined(readDoc('docs/guide.md'));

describe("the README's first numbers: the example app's first response", () => {
  // The example app's limiter, on a clock that stands still: nothing refills between the requests.
  const NOW = 1_800_000_000_000;
  const { spec } = resolveLimiterOptions({ limit: 100, windowMs: 1000 });
  const responses = async (n: number) => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { createApp } = require('../../examples/express/app') as { createApp(options: { store: MemoryStore }): RequestListener };
    const app = createApp({ store: new MemoryStore({ clock: () => NOW }) });
    const out: request.Response[] = [];
    try {
      for (let i = 0; i < n; i++) out.push(await request(app).get('/api/reports/1').set('x-tenant', 'acme'));
    } finally {
      await (app as unknown as { locals: { limiter: { close(): Promise<void> } } }).locals.limiter.close();
    }
    return out;
  };

  it('are the header fields the README shows', async () => {
    const shown = blocksOf('README.md').find((b) => b.heading === 'The first numbers you see' && b.lang === 'text');
    const [first] = await responses(1);
    expect(shown?.code).toBe(
      ['HTTP/1.1 200 OK', `RateLimit-Policy: ${first!.headers['ratelimit-policy']}`, `RateLimit: ${first!.headers['ratelimit']}`].join('\n'),
    );
  });

  it('r counts down from the burst less one; the request after the burst is a 429 with Retry-After: 1', async () => {
    expect(readme).toContain(`a bucket that holds **${spec.burst}** tokens`);
    expect(readme).toContain(`\`limit − burst + 1\` = **${spec.limit - spec.burst + 1}** tokens per window`);
    expect(readme).toContain(
      `A new tenant that sends ${spec.burst} at once gets all ${spec.burst}; the ${spec.burst + 1}th is answered 429 with \`Retry-After: 1\``,
    );
    const out = await responses(spec.burst + 1);
    expect(out.map((r) => r.status)).toEqual([...Array<number>(spec.burst).fill(200), 429]);
    expect(out.map((r) => /r=(\d+)/.exec(String(r.headers['ratelimit']))?.[1])).toEqual([
      ...Array.from({ length: spec.burst }, (_, i) => String(spec.burst - 1 - i)),
      '0',
    ]);
    expect(out[spec.burst]!.headers['retry-after']).toBe('1');
  });
});

test("the guide's numbers for the README's first example are the defaults for limit 1000 per 1000 ms, and the limiter keeps them", async () => {
  const { spec } = resolveLimiterOptions({ limit: 1000, windowMs: 1000 });
  const rate = spec.limit - spec.burst + 1;
  expect(guide).toContain(`gets **${spec.burst} at once**`);
  expect(guide).toContain(`the sustained rate of **${rate} per second**`);
  // A lone client sending 3 a millisecond: the burst at once, then the sustained rate, and never over 1000 in 1 s.
  let now = 1_000_000;
  const limiter = createLimiter({ store: new MemoryStore({ clock: () => now }), limit: 1000, windowMs: 1000 });
  const allowedAt: number[] = [];
  const send = async (n: number) => {
    for (let i = 0; i < n; i++) if ((await limiter.check('lone')).allowed) allowedAt.push(now);
  };
  await send(100);
  expect(allowedAt.length).toBe(spec.burst);
  for (let ms = 1; ms <= 2000; ms++) {
    now += 1;
    await send(3);
  }
  const inSecond = (from: number) => allowedAt.filter((t) => t >= from && t < from + 1000).length;
  expect(inSecond(1_001_000)).toBeGreaterThanOrEqual(rate - 1);
  expect(inSecond(1_001_000)).toBeLessThanOrEqual(rate + 1);
  expect(Math.max(...allowedAt.map((t) => inSecond(t)))).toBeLessThanOrEqual(1000);
  await limiter.close();
});

test("the guide's per-route maxCost numbers are the defaults", () => {
  const maxCost = (options: { limit: number; burst?: number }) =>
    resolveLimiterOptions({ windowMs: 60_000, limit: options.limit, tuning: { burst: options.burst } }).maxCost;
  expect(guide).toContain('1 for `limit: 5`, 4 for `limit: 50`');
  expect([maxCost({ limit: 5 }), maxCost({ limit: 50 })]).toEqual([1, 4]);
  expect(guide).toContain('the default burst of 2 (maxCost 1)');
  expect(resolveLimiterOptions({ limit: 10 }).spec.burst).toBe(2);
  expect(maxCost({ limit: 10 })).toBe(1);
  expect(guide).toContain('tuning: { burst: 4 } });   // maxCost 3');
  expect(maxCost({ limit: 10, burst: 4 })).toBe(3);
});
