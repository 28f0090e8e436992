/**
 * Eviction: Redis given a maxmemory and an evicting policy at runtime (CONFIG SET, after the limiter's
 * connect-time check saw noeviction), then memory pressure. On 27ceff3 the policy was read only at connect:
 * deferrals were answered 202 and their jobs evicted with no error. Now INFO is read every EVICTION_CHECK_MS
 * (on the injected clock here): while Redis may evict, deferrals write no job (a denied check is a 503) and
 * enqueue rejects with ERR_BL_MAY_EVICT, and health() says why; noeviction again lifts it.
 */
import type Redis from 'ioredis';
import { EVICTION_CHECK_MS } from '../../src/limiter/health';
import { createLimiter, type Limiter } from '../../src/limiter/limiter';
import { RedisStore } from '../../src/redis/redis-store';
import { withScheduler } from '../../src/util/scheduler';
import { ManualScheduler } from '../helpers/manual-scheduler';
import { startRedis, type RedisServer } from '../helpers/redis-server';
import { burst, jobsByRequest, report, tally, until, type BurstRequest } from './harness';

let server: RedisServer;
let admin: Redis;
beforeAll(async () => {
  server = await startRedis();
  admin = server.client();
});
afterAll(async () => {
  await server.stop();
});

const WINDOW_MS = 60_000;
const requests = (from: number, n: number): BurstRequest[] => Array.from({ length: n }, (_, k) => ({ i: from + k, group: `g${(from + k) % 4}` }));

/** Writes `mb` MiB of other keys: under allkeys-lru the oldest keys (the limiter's) are evicted first. */
async function pressure(mb: number): Promise<void> {
  const value = 'x'.repeat(1024);
  for (let batch = 0; batch < mb; batch++) {
    const pipeline = admin.pipeline();
    for (let k = 0; k < 1024; k++) pipeline.set(`filler:${batch}:${k}`, value);
    await pipeline.exec();
  }
}

test('allkeys-lru set at runtime: no 202 whose job is evicted; enqueue refused; health says why', async () => {
  const clock = new ManualScheduler(Date.now());
  const lines: string[] = [];
  const name = `eviction-${process.pid}`;
  const client = server.client({ maxRetriesPerRequest: 1 });
  const limiter: Limiter = createLimiter(
    withScheduler(
      {
        store: new RedisStore({ client }),
        name,
        limit: 10,
        windowMs: WINDOW_MS,
        onStoreError: 'deny',
        logger: { warn: (m: string) => void lines.push(m) },
      },
      clock,
    ),
  );
  const warned = (): boolean => lines.some((l) => l.startsWith('WRN_BL_MAXMEMORY_POLICY'));
  try {
    expect((await limiter.check('a')).allowed).toBe(true);
    const used = Number(/used_memory:(\d+)/.exec(await admin.info('memory'))![1]);
    await admin.config('SET', 'maxmemory', String(used + 4 * 1024 * 1024));
    await admin.config('SET', 'maxmemory-policy', 'allkeys-lru');
    await clock.advance(EVICTION_CHECK_MS); // the periodic INFO read
    await until('the periodic check sees the policy', warned, 5000).catch(() => undefined);
    const answers = await burst(limiter, requests(0, 100));
    const enqueued = limiter.enqueue('a', { type: 'fault', payload: { i: -1 } });
    enqueued.catch(() => undefined);
    const health = await limiter.health();
    await pressure(16);
    const evicted = Number(/evicted_keys:(\d+)/.exec(await admin.info('stats'))![1]);
    const t = tally(answers, await jobsByRequest(client, name), WINDOW_MS);
    report('allkeys-lru set at runtime, then 16 MiB of other keys', t, { evictedKeys: evicted });
    expect(evicted).toBeGreaterThan(0); // the fault happened
    expect(warned()).toBe(true);
    expect(t.answers.deferred).toBe(0);
    expect(t.lost).toBe(0);
    expect(t.orphans).toBe(0);
    await expect(enqueued).rejects.toMatchObject({ code: 'ERR_BL_MAY_EVICT' });
    expect(health).toMatchObject({ status: 'degraded', lastError: expect.stringMatching(/may evict.*allkeys-lru/) });

    // noeviction again: the next periodic read lifts the refusal.
    await admin.config('SET', 'maxmemory-policy', 'noeviction');
    await admin.config('SET', 'maxmemory', '0');
    await clock.advance(EVICTION_CHECK_MS);
    await until('deferrals write jobs again', async () => (await limiter.health()).status === 'up', 5000);
    await until('the limit denies', async () => !(await limiter.check('b')).allowed, 5000);
    expect((await limiter.check('b', { defer: { type: 'fault', payload: { i: 1000 } } })).job).toBeDefined();
  } finally {
    await admin.config('SET', 'maxmemory-policy', 'noeviction');
    await admin.config('SET', 'maxmemory', '0');
    await admin.flushall();
    await limiter.close();
  }
}, 60_000);
