/**
 * The job API on the limiter facade (getJob, counts, dead letters) with a real Worker, on MemoryStore.
 */
import { createLimiter } from '../../src/limiter/limiter';
import { Dispatcher } from '../../src/queue/dispatcher';
import { Worker } from '../../src/queue/worker';
import { MemoryStore } from '../../src/memory/memory-store';
import { until } from './fixtures/queues';

const silent = { warn: () => undefined, error: () => undefined };

test('a job that always fails is a dead letter; retryDead runs it again, removeDead deletes it', async () => {
  // the store's clock stands still until the second check is denied (however slow the machine), then runs on
  let frozen: number | undefined = Date.now();
  const store = new MemoryStore({ clock: () => frozen ?? Date.now() });
  const limiter = createLimiter({ store, name: 'limiter-jobs', limit: 1, tuning: { burst: 1 }, windowMs: 200 });
  await limiter.check('g');
  const denied = await limiter.check('g', { defer: { type: 'fragile', payload: { n: 1 } } });
  frozen = undefined;
  const id = denied.job!.id;
  let fail = true;
  const dispatcher = new Dispatcher({ limiter, pollMs: 20, logger: silent });
  const worker = new Worker({
    limiter,
    handlers: {
      fragile: async () => {
        if (fail) throw new Error('nope');
        return 'fine';
      },
    },
    maxAttempts: 1,
    logger: silent,
    idleWaitMs: 100,
  });
  dispatcher.start();
  worker.start();
  try {
    await until('dead', async () => (await limiter.getJob(id))?.state === 'dead');
    expect((await limiter.counts()).dead).toBe(1);
    expect((await limiter.listDead()).map((j) => [j.id, j.error])).toEqual([[id, 'nope']]);
    fail = false;
    expect(await limiter.retryDead(id)).toBe(true);
    await until('completed', async () => (await limiter.getJob(id))?.state === 'completed');
    expect((await limiter.getJob(id))?.result).toBe('fine');
    expect(await limiter.removeDead(id)).toBe(false); // not dead any more
    expect(await limiter.getJob('x'.repeat(500))).toBeNull();
  } finally {
    await dispatcher.stop();
    await worker.close(1000);
  }
});

describe('groupConcurrency on the limiter and per check', () => {
  /**
   * A limiter whose store clock stands a minute in the past while jobs are deferred (every check after the
   * first two is denied and deferred), then runs on real time with a budget the jobs cannot exhaust.
   */
  function deferringLimiter(extra: object = {}) {
    let frozen: number | undefined = Date.now() - 60_000;
    const store = new MemoryStore({ clock: () => frozen ?? Date.now() });
    const limiter = createLimiter({ store, name: 'gc', limit: 1000, tuning: { burst: 2, reserve: 1 }, windowMs: 1000, ...extra });
    return { limiter, thaw: () => void (frozen = undefined) };
  }

  /** Runs every waiting job with 6 worker slots; the most jobs of one group that ran at once. */
  async function mostAtOnce(limiter: ReturnType<typeof createLimiter>, jobs: number): Promise<number> {
    let running = 0;
    let most = 0;
    let done = 0;
    const dispatcher = new Dispatcher({ limiter, pollMs: 10, logger: silent });
    const worker = new Worker({
      limiter,
      concurrency: 6,
      logger: silent,
      idleWaitMs: 50,
      handlers: {
        work: async () => {
          most = Math.max(most, ++running);
          await new Promise((r) => setTimeout(r, 100));
          running -= 1;
          done += 1;
        },
      },
    });
    dispatcher.start();
    worker.start();
    try {
      await until('all done', () => done === jobs);
    } finally {
      await dispatcher.stop();
      await worker.close(1000);
    }
    return most;
  }

  const deferAll = async (limiter: ReturnType<typeof createLimiter>, n: number, cap?: number) => {
    let jobs = 0;
    for (let i = 0; jobs < n; i++) {
      const d = await limiter.check('tenant', { defer: { type: 'work' }, ...(cap === undefined ? {} : { groupConcurrency: cap }) });
      if (d.job) jobs += 1;
    }
  };

  test('the limiter option caps every job of a group across the worker slots', async () => {
    const { limiter, thaw } = deferringLimiter({ groupConcurrency: 2 });
    await deferAll(limiter, 12);
    thaw();
    expect(await mostAtOnce(limiter, 12)).toBe(2);
  });

  test('a check sets its own cap, over the limiter default (none here)', async () => {
    const { limiter, thaw } = deferringLimiter();
    await deferAll(limiter, 12, 3);
    thaw();
    expect(await mostAtOnce(limiter, 12)).toBe(3);
  });

  test('without a cap the group takes every slot', async () => {
    const { limiter, thaw } = deferringLimiter();
    await deferAll(limiter, 12);
    thaw();
    expect(await mostAtOnce(limiter, 12)).toBe(6);
  });

  test('a bad cap fails at construction (option) or as an InputError (check)', async () => {
    expect(() => createLimiter({ limit: 10, groupConcurrency: 0 })).toThrow(expect.objectContaining({ code: 'ERR_BL_GROUP_CONCURRENCY' }));
    expect(() => createLimiter({ limit: 10, groupConcurrency: 1.5 })).toThrow(/groupConcurrency/);
    const limiter = createLimiter({ limit: 10 });
    await expect(limiter.check('g', { defer: { type: 't' }, groupConcurrency: 0 })).rejects.toMatchObject({ code: 'ERR_BL_BAD_GROUP_CONCURRENCY' });
  });
});
