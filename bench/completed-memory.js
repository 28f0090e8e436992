'use strict';
/**
 * Redis memory per completed job record: N jobs (the queue benchmark's payload, `{ at, g }`, and a small
 * result) enqueued, run by a Worker and kept for `keepCompletedMs`; used_memory before and after, and
 * MEMORY USAGE of the jobs hash and the completed set, per record. Usage: node bench/completed-memory.js [N]
 * [--defer] (--defer: written by denied checks, as the queue benchmark does, each with the idempotency key
 * the limiter generates; else by enqueue, without one). Builds nothing: run `npm run build` first.
 */
const { requireCore } = require('./lib/package');
const { startRedis } = require('./lib/redis');

async function main() {
  const n = Number(process.argv.find((a) => /^\d+$/.test(a)) ?? 20_000);
  const viaCheck = process.argv.includes('--defer');
  const core = requireCore();
  const redis = await startRedis();
  const client = redis.client();
  try {
    const name = 'completed-memory';
    const limiter = core.createLimiter({ store: new core.RedisStore({ client }), name, limit: 10_000_000, windowMs: 1000, maxBacklog: n });
    const usedMemory = async () => Number(/used_memory:(\d+)/.exec(await client.info('memory'))[1]);
    // As the queue benchmark: a store clock frozen a minute ago and 2 tokens, so every check is denied and
    // deferred, due at once.
    const frozenMs = Date.now() - 60_000;
    const deferring = core.createLimiter({
      store: new core.RedisStore({ client, clock: () => frozenMs }),
      name,
      limit: 1_000_000,
      windowMs: 1000,
      tuning: { burst: 2, reserve: 1, maxGroups: 10_000 },
      maxBacklog: n,
    });
    for (let i = 0; i < 4; i++) await deferring.check('warm-up');
    const before = await usedMemory();
    const write = async (i) => {
      const payload = { at: Date.now(), g: i % 100 };
      if (!viaCheck) return limiter.enqueue(`g${i % 100}`, { type: 'bench', payload });
      const d = await deferring.check(`g${i % 100}`, { defer: { type: 'bench', payload } });
      if (!d.job) throw new Error('not deferred');
    };
    for (let i = 0; i < n; i += 500) await Promise.all(Array.from({ length: Math.min(500, n - i) }, (_, k) => write(i + k)));
    const waiting = await usedMemory();
    let done = 0;
    const dispatcher = new core.Dispatcher({ limiter, readyMax: 1000 });
    const worker = new core.Worker({ limiter, concurrency: 50, handlers: { bench: () => ((done += 1), { ok: true }) } });
    dispatcher.start();
    worker.start();
    while (done < n) await new Promise((resolve) => setTimeout(resolve, 50));
    await Promise.all([worker.close(5000), dispatcher.stop()]);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const completed = await usedMemory();
    const keys = limiter.queue.keys;
    const jobsBytes = Number(await client.call('MEMORY', 'USAGE', keys.jobs, 'SAMPLES', '0'));
    const completedBytes = Number(await client.call('MEMORY', 'USAGE', keys.completed, 'SAMPLES', '0'));
    const sample = await client.hget(keys.jobs, (await client.zrange(keys.completed, 0, 0))[0]);
    const perRecord = (bytes) => Math.round(bytes / n);
    console.log(
      JSON.stringify({
        jobs: n,
        writtenBy: viaCheck ? 'check (deferred, generated key)' : 'enqueue (no key)',
        usedMemoryPerWaitingJob: perRecord(waiting - before),
        usedMemoryPerCompletedRecord: perRecord(completed - before),
        jobsHashPerRecord: perRecord(jobsBytes),
        completedSetPerRecord: perRecord(completedBytes),
        recordJsonBytes: Buffer.byteLength(sample, 'utf8'),
        sampleRecord: JSON.parse(sample),
      }),
    );
    await Promise.all([limiter.close(), deferring.close()]);
  } finally {
    client.disconnect();
    await redis.stop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
