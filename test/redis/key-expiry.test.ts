/**
 * Nothing left behind: once a limiter is abandoned, every one of its keys expires. After a whole life of
 * the queue (deferred and enqueued jobs, a capped group held back, completions kept, a dead letter, a
 * cancelled job, idempotency keys, the dispatcher lease), every key under the limiter's hash tag has a TTL,
 * none beyond the latest time something in it is needed plus the grace (1 h).
 */
import type Redis from 'ioredis';
import { createLimiter } from '../../src/limiter/limiter';
import { Dispatcher } from '../../src/queue/dispatcher';
import { Worker } from '../../src/queue/worker';
import { RedisStore } from '../../src/redis/redis-store';
import { startRedis, type RedisServer } from '../helpers/redis-server';
import { until } from '../queue/fixtures/queues';

const HOUR = 3_600_000;
const silent = { warn: () => undefined, error: () => undefined };
let server: RedisServer;
let client: Redis;
beforeAll(async () => {
  server = await startRedis();
  client = server.client();
});
afterAll(async () => server.stop());

test('every key of a limiter has a TTL once its dispatcher and workers stopped', async () => {
  const name = `expiry-${process.pid}`;
  const limiter = createLimiter({ store: new RedisStore({ client }), name, limit: 50, windowMs: 1000, groupConcurrency: 1, maxDeferMs: 3 * HOUR });
  // Deferred requests (the budget spent by a flood first), with idempotency keys.
  let deferred = 0;
  for (let i = 0; deferred < 5; i++) {
    const d = await limiter.check('flood', { defer: { type: 'ok', idempotencyKey: `k${i}` } });
    if (d.job) deferred += 1;
  }
  const late = await limiter.enqueue('later', { type: 'ok', delayMs: 2 * HOUR });
  const doomed = await limiter.enqueue('bad', { type: 'fail' });
  const gone = await limiter.enqueue('cancelled', { type: 'ok', delayMs: 60_000 });
  expect(await limiter.cancel(gone.id)).toBe(true);
  const dispatcher = new Dispatcher({ limiter, pollMs: 20, logger: silent }).start();
  const worker = new Worker({
    limiter,
    concurrency: 3,
    maxAttempts: 1,
    keepCompletedMs: 10 * 60_000,
    logger: silent,
    idleWaitMs: 100,
    handlers: {
      ok: async () => 'done',
      fail: async () => {
        throw new Error('no');
      },
    },
  }).start();
  await until(
    'all due jobs ran',
    async () => {
      const c = await limiter.counts();
      return c.completed === 5 && c.dead === 1;
    },
    20_000,
  );
  await worker.close(1000);
  await dispatcher.stop();
  await limiter.close();
  expect((await limiter.getJob(doomed.id))?.state).toBe('dead');
  expect((await limiter.getJob(late.id))?.state).toBe('delayed');

  const keys = await client.keys(`{bl:${name}}*`);
  const names = keys.map((k) => k.slice(`{bl:${name}}:`.length)).sort();
  // The keys the run touched, all of them checked (a new key type makes this list grow on purpose).
  expect(names).toEqual(
    expect.arrayContaining(['backlog', 'completed', 'counters', 'dead', 'delayed', 'dispatcher', 'groups', 'idempotency', 'jobs', 'seen']),
  );
  const now = Date.now();
  for (const key of keys) {
    const ttl = await client.pttl(key);
    expect([key, ttl > 0]).toEqual([key, true]);
    // The delayed job is due in 2 h: its keys live that long plus the grace (and a quarter-grace step), no longer.
    expect(now + ttl).toBeLessThanOrEqual(now + 2 * HOUR + HOUR + HOUR / 4 + 60_000);
  }
  // The job due in 2 h is still there, its keys did not expire under it.
  expect(await client.pttl(`{bl:${name}}:delayed`)).toBeGreaterThan(2 * HOUR);
  await limiter.destroy();
}, 40_000);

test("a limiter's admission keys outlive its longest plan rule, whatever plan the check that set their TTL had", async () => {
  const name = `expiry-plans-${process.pid}`;
  const limiter = createLimiter({
    store: new RedisStore({ client }),
    name,
    limit: 100,
    windowMs: 1000,
    tuning: { idleMs: 2000 },
    plans: { free: {}, pro: { rules: [{ name: 'hour', limit: 3, windowMs: HOUR, algorithm: 'sliding-window' }] } },
  });
  expect((await limiter.check('p', { plan: 'pro' })).allowed).toBe(true);
  // a new group under a plan without rules: the call that sets the keys' TTL again
  expect((await limiter.check('newcomer', { plan: 'free' })).allowed).toBe(true);
  for (const key of [`{bl:${name}}:groups`, `{bl:${name}}:seen`]) expect(await client.pttl(key)).toBeGreaterThan(HOUR);
  await limiter.destroy();
  await limiter.close();
});
