/**
 * The job API on the limiter facade (getJob, counts, dead letters) with a real Worker, on MemoryStore.
 */
import { createLimiter } from '../../src/limiter';
import { Dispatcher } from '../../src/queue/dispatcher';
import { Worker } from '../../src/queue/worker';
import { MemoryStore } from '../../src/store/memory-store';
import { until } from './fixtures/queues';

const silent = { warn: () => undefined, error: () => undefined };

test('a job that always fails is a dead letter; retryDead runs it again, removeDead deletes it', async () => {
  const limiter = createLimiter({ store: new MemoryStore(), name: 'limiter-jobs', limit: 1, burst: 1, windowMs: 200 });
  await limiter.check('g');
  const denied = await limiter.check('g', { defer: { type: 'fragile', payload: { n: 1 } } });
  const id = denied.job!.id;
  let fail = true;
  const dispatcher = new Dispatcher({ limiter, pollMs: 20, logger: silent });
  const worker = new Worker({ limiter, handlers: { fragile: async () => { if (fail) throw new Error('nope'); return 'fine'; } }, maxAttempts: 1, logger: silent, idleWaitMs: 100 });
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
