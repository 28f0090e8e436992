/**
 * Offload on the limiter, on both stores: enqueue (fair order, budget at the start, backlog cap, horizon,
 * idempotency per group), cancel, per-group counts, a permanent error and a job's own maxAttempts.
 */
import type Redis from 'ioredis';
import { EnqueueError } from '../../src/queue/offload';
import { createLimiter, type Limiter } from '../../src/limiter/limiter';
import { Dispatcher } from '../../src/queue/dispatcher';
import { PermanentError } from '../../src/queue/permanent-error';
import { Worker } from '../../src/queue/worker';
import { MemoryStore } from '../../src/memory/memory-store';
import { RedisStore } from '../../src/redis/redis-store';
import type { Store } from '../../src/types';
import { startRedis, type RedisServer } from '../helpers/redis-server';
import { until } from './fixtures/queues';

const silent = { warn: () => undefined, error: () => undefined };
let server: RedisServer;
let client: Redis;
let seq = 0;
beforeAll(async () => {
  server = await startRedis();
  client = server.client();
});
afterAll(async () => server.stop());

describe.each<[string, () => Store]>([
  ['MemoryStore', () => new MemoryStore()],
  ['RedisStore', () => new RedisStore({ client })],
])('offload: %s', (_name, makeStore) => {
  let limiter: Limiter;
  beforeEach(() => {
    limiter = createLimiter({
      store: makeStore(),
      name: `offload-${process.pid}-${++seq}`,
      limit: 1000,
      windowMs: 1000,
      maxBacklog: 3,
      maxDeferMs: 60_000,
    });
  });
  afterEach(async () => {
    await limiter.destroy();
    await limiter.close();
  });

  test('enqueue writes a job (even while the group is allowed), idempotent per group', async () => {
    const a = await limiter.enqueue('tenant a', { type: 'report', payload: { month: 11 }, idempotencyKey: 'nov' });
    expect(a).toEqual({ id: expect.any(String), runAt: expect.any(Number), duplicate: false });
    expect(await limiter.enqueue('tenant a', { type: 'report', idempotencyKey: 'nov' })).toEqual({ ...a, duplicate: true });
    // Another tenant's key of the same text is another job.
    expect((await limiter.enqueue('tenant b', { type: 'report', idempotencyKey: 'nov' })).id).not.toBe(a.id);
    expect(await limiter.getJob(a.id)).toMatchObject({ state: 'delayed', group: 'tenant a', type: 'report', payload: { month: 11 } });
    const later = await limiter.enqueue('tenant a', { type: 'report', delayMs: 30_000 });
    expect(later.runAt - a.runAt).toBeGreaterThanOrEqual(29_000);
  });

  test('a full backlog and a delay beyond maxDeferMs reject with EnqueueError and retryAfterMs; bad options are InputErrors', async () => {
    for (let i = 0; i < 3; i++) await limiter.enqueue('g', { type: 't' });
    const full = await limiter.enqueue('g', { type: 't' }).catch((e: unknown) => e);
    expect(full).toBeInstanceOf(EnqueueError);
    expect(full).toMatchObject({ code: 'ERR_BL_BACKLOG_FULL', retryAfterMs: 1000 });
    await expect(limiter.enqueue('h', { type: 't', delayMs: 61_000 })).rejects.toMatchObject({ code: 'ERR_BL_DEFER_HORIZON', retryAfterMs: 1000 });
    await expect(limiter.enqueue('h', { type: 't', cost: 10_000 })).rejects.toMatchObject({ code: 'ERR_BL_BAD_COST' });
    await expect(limiter.enqueue('h', { type: 't', delay: 5 } as never)).rejects.toMatchObject({ code: 'ERR_BL_UNKNOWN_OPTION' });
    await expect(limiter.enqueue('', { type: 't' })).rejects.toMatchObject({ code: 'ERR_BL_GROUP_EMPTY' });
    expect(await limiter.counts()).toMatchObject({ delayed: 3 });
  });

  test('cancel removes a job that has not started, frees its backlog place; not a running one', async () => {
    const jobs = [];
    for (let i = 0; i < 3; i++) jobs.push(await limiter.enqueue('g', { type: 't', idempotencyKey: `k${i}` }));
    expect(await limiter.cancel(jobs[0]!.id)).toBe(true);
    expect(await limiter.getJob(jobs[0]!.id)).toBeNull();
    expect(await limiter.cancel(jobs[0]!.id)).toBe(false);
    expect(await limiter.cancel('no-such-job')).toBe(false);
    // Its backlog place and its idempotency key are free again.
    expect((await limiter.enqueue('g', { type: 't', idempotencyKey: 'k0' })).duplicate).toBe(false);
    // A job in ready is cancellable; a running one is not.
    await limiter.queue.dispatch({ readyMax: 10, moveMax: 10, promoteMax: 10, scanMax: 10 });
    expect((await limiter.getJob(jobs[1]!.id))?.state).toBe('ready');
    expect(await limiter.cancel(jobs[1]!.id)).toBe(true);
    const running = await limiter.queue.claim(60_000);
    expect(running?.id).toBe(jobs[2]!.id);
    expect(await limiter.cancel(jobs[2]!.id)).toBe(false);
    expect(await limiter.counts({ group: 'g' })).toMatchObject({ waiting: 1, active: 1 });
    expect(await limiter.counts({ group: 'other' })).toEqual({ waiting: 0, active: 0, oldestWaitingMs: 0 });
  });

  test('a PermanentError sends the job to dead at once; a job may carry its own maxAttempts', async () => {
    const permanent = await limiter.enqueue('g', { type: 'bad' });
    const twice = await limiter.enqueue('g', { type: 'flaky', maxAttempts: 2 });
    let flakyRuns = 0;
    const dispatcher = new Dispatcher({ limiter, pollMs: 10, logger: silent });
    const worker = new Worker({
      limiter,
      maxAttempts: 10,
      backoff: () => 0,
      logger: silent,
      idleWaitMs: 50,
      handlers: {
        bad: async () => {
          throw new PermanentError('the payload names no account');
        },
        flaky: async () => {
          flakyRuns += 1;
          throw new Error('upstream down');
        },
      },
    });
    dispatcher.start();
    worker.start();
    try {
      await until('both dead', async () => (await limiter.counts()).dead === 2);
    } finally {
      await dispatcher.stop();
      await worker.close(1000);
    }
    expect(await limiter.getJob(permanent.id)).toMatchObject({ state: 'dead', attempts: 1, error: 'the payload names no account' });
    expect(await limiter.getJob(twice.id)).toMatchObject({ state: 'dead', attempts: 2 });
    expect(flakyRuns).toBe(2);
  });

  test('a job enqueued with settle gets job.settle in its handler: its estimate is reserved at its start, settled once', async () => {
    const estimated = await limiter.enqueue('g', { type: 'tokens', cost: 40, settle: true });
    const plain = await limiter.enqueue('g', { type: 'tokens', cost: 1 });
    await expect(limiter.enqueue('g', { type: 'tokens', settle: 'yes' } as never)).rejects.toMatchObject({ code: 'ERR_BL_BAD_SETTLE' });
    const dispatcher = new Dispatcher({ limiter, pollMs: 10, logger: silent });
    const worker = new Worker({
      limiter,
      logger: silent,
      idleWaitMs: 50,
      handlers: {
        tokens: async (job) => (job.settle ? await job.settle(10) : 'no settle'),
      },
    });
    dispatcher.start();
    worker.start();
    try {
      await until('both completed', async () => (await limiter.counts()).completed === 2);
    } finally {
      await dispatcher.stop();
      await worker.close(1000);
    }
    expect(await limiter.getJob(estimated.id)).toMatchObject({ state: 'completed', result: { status: 'settled', refunded: 30, debt: 0 } });
    expect(await limiter.getJob(plain.id)).toMatchObject({ state: 'completed', result: 'no settle' });
  });
});
