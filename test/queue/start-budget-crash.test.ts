/**
 * The limit holds where the work runs, through crashes: two worker processes (each a Dispatcher and a Worker)
 * drain a backlog next to live traffic on one Redis, both are SIGKILLed mid-drain, and two new ones finish.
 * Jobs whose lease died with the killed processes run again and are charged again, so job starts plus live
 * admissions stay ≤ limit in every window (store times: a claim's leaseUntil − leaseMs, a decision's `at`).
 */
import { createLimiter } from '../../src/limiter/limiter';
import { resolveLimiterOptions } from '../../src/limiter/options';
import { RedisQueue } from '../../src/redis/redis-queue';
import { RedisStore } from '../../src/redis/redis-store';
import { maxInWindow } from './drain-harness';
import { enqueue, until } from './fixtures/queues';
import { redisWithWorkerProcesses } from './fixtures/worker-processes';

const LIMIT = 20;
const WINDOW_MS = 1000;
const redis = redisWithWorkerProcesses();

test('workers and dispatchers SIGKILLed mid-drain: starts (re-runs charged again) + live ≤ limit in every window', async () => {
  const name = `start-budget-crash-${process.pid}`;
  const { spec } = resolveLimiterOptions({ name, limit: LIMIT, windowMs: WINDOW_MS });
  const queue = new RedisQueue({ client: redis.client, spec });
  const JOBS = 60;
  for (let i = 0; i < JOBS; i++) await enqueue(queue, { type: 'work', group: `tenant ${i % 3}` });
  const starts: number[] = [];
  const live: number[] = [];
  const limiter = createLimiter({ store: new RedisStore({ client: redis.client }), name, limit: LIMIT, windowMs: WINDOW_MS });
  let running = true;
  const traffic = (async () => {
    while (running) {
      const d = await limiter.check('live');
      if (d.allowed) live.push(d.at);
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  const args = { port: redis.server.port, spec, effectsKey: `effects:${name}`, concurrency: 5, leaseMs: 600, workMs: 200 };
  const record = (ms: number) => void starts.push(ms);
  try {
    const first = await Promise.all([redis.processes.start(args, undefined, record), redis.processes.start(args, undefined, record)]);
    await until('a third of the jobs started', () => starts.length >= JOBS / 3, 20_000);
    await Promise.all(first.map((child) => redis.processes.kill(child)));
    await Promise.all([redis.processes.start(args, undefined, record), redis.processes.start(args, undefined, record)]);
    await until('every job completed', async () => (await queue.counts()).completed === JOBS, 60_000);
  } finally {
    running = false;
    await traffic;
  }
  const stalled = starts.length - JOBS; // runs again after the kill, each charged again
  console.log(
    `crash drain: ${JOBS} jobs, ${starts.length} starts (${stalled} again after the kill), ${live.length} live admitted, most in any ${WINDOW_MS} ms: ${maxInWindow([...starts, ...live], WINDOW_MS)}`,
  );
  expect(stalled).toBeGreaterThan(0);
  expect(maxInWindow([...starts, ...live], WINDOW_MS)).toBeLessThanOrEqual(LIMIT);
  await queue.close();
  await limiter.close();
}, 120_000);
