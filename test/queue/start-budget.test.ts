/**
 * The limit holds where the work runs: a job spends the budget when a worker starts it, so job starts plus
 * live admissions never exceed `limit` in any window, also when workers come back after a pause to a full
 * ready list (charging at the move ran the whole ready list at once: 6× the limit). Real Dispatcher and
 * Worker on both stores; times are the store's (a claim's leaseUntil − leaseMs, a decision's `at`).
 */
import type Redis from 'ioredis';
import { createLimiter, type Limiter } from '../../src/limiter/limiter';
import { Dispatcher } from '../../src/queue/dispatcher';
import type { QueueStore } from '../../src/types';
import { Worker } from '../../src/queue/worker';
import { MemoryStore } from '../../src/memory/memory-store';
import { RedisStore } from '../../src/redis/redis-store';
import type { Store } from '../../src/types';
import { startRedis, type RedisServer } from '../helpers/redis-server';
import { maxInWindow } from './drain-harness';
import { delegating, until } from './fixtures/queues';

const LIMIT = 20;
const WINDOW_MS = 500;
const LEASE_MS = 10_000;
const READY_MAX = 100;
const silent = { warn: () => undefined, error: () => undefined };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let server: RedisServer;
let client: Redis;
beforeAll(async () => {
  server = await startRedis();
  client = server.client();
});
afterAll(async () => server.stop());

/** The limiter's queue, recording the store time of every job start (claim) it hands out. */
function recordingStarts(queue: QueueStore, startedAt: number[]): QueueStore {
  const record = (jobs: ReadonlyArray<{ leaseUntil: number }>) => jobs.forEach((j) => startedAt.push(j.leaseUntil - LEASE_MS));
  return delegating(queue, {
    claimMany: async (...a: Parameters<QueueStore['claimMany']>) => {
      const r = await queue.claimMany(...a);
      record(r.claimed);
      return r;
    },
    completeAndClaim: async (...a: Parameters<QueueStore['completeAndClaim']>) => {
      const r = await queue.completeAndClaim(...a);
      record(r.claimed);
      return r;
    },
  });
}

/** Live requests of one group every `everyMs` until stopped; the store time of each admitted one. */
function liveTraffic(limiter: Limiter, everyMs: number): { admittedAt: number[]; stop: () => Promise<void> } {
  const admittedAt: number[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const d = await limiter.check('live');
      if (d.allowed) admittedAt.push(d.at);
      await sleep(everyMs);
    }
  })();
  return {
    admittedAt,
    stop: async () => {
      running = false;
      await loop;
    },
  };
}

describe.each<[string, () => Store]>([
  ['MemoryStore', () => new MemoryStore()],
  ['RedisStore', () => new RedisStore({ client })],
])('job starts spend the budget: %s', (_name, makeStore) => {
  test(`workers back after a pause with ${READY_MAX} jobs ready: starts + live stay ≤ limit in every window`, async () => {
    const limiter = createLimiter({ store: makeStore(), name: `start-budget-${process.pid}-${Date.now()}`, limit: LIMIT, windowMs: WINDOW_MS });
    const jobs: string[] = [];
    for (let i = 0; jobs.length < 120; i++) {
      const d = await limiter.check(`tenant ${i % 4}`, { defer: { type: 'work', payload: { i } } });
      if (d.job) jobs.push(d.job.id);
    }
    const startedAt: number[] = [];
    const queue = recordingStarts(limiter.queue, startedAt);
    const dispatcher = new Dispatcher({ limiter: { queue }, readyMax: READY_MAX, pollMs: 20, logger: silent });
    const live = liveTraffic(limiter, 10);
    const worker = new Worker({
      limiter: { queue },
      concurrency: 10,
      leaseMs: LEASE_MS,
      handlers: { work: async () => 'done' },
      logger: silent,
      idleWaitMs: 200,
    });
    try {
      dispatcher.start();
      // Workers away: the dispatcher fills ready to readyMax, and nothing is charged for it.
      await until('ready full', async () => (await limiter.counts()).ready === READY_MAX);
      await sleep(3 * WINDOW_MS);
      expect((await limiter.counts()).ready).toBe(READY_MAX);
      worker.start();
      await until('every job completed', async () => (await limiter.counts()).completed === jobs.length, 30_000);
    } finally {
      await live.stop();
      await worker.close(1000);
      await dispatcher.stop();
      await limiter.close();
    }
    expect(startedAt.length).toBe(jobs.length);
    expect(live.admittedAt.length).toBeGreaterThan(0);
    // The bound that matters: what reaches the protected service, jobs and live requests together.
    expect(maxInWindow([...startedAt, ...live.admittedAt], WINDOW_MS)).toBeLessThanOrEqual(LIMIT);
    // And the ready list did not run at once: the drain took at least (jobs / limit) windows.
    expect(Math.max(...startedAt) - Math.min(...startedAt)).toBeGreaterThanOrEqual((jobs.length / LIMIT - 1) * WINDOW_MS);
  }, 60_000);
});
