'use strict';
/**
 * `npm run example:offload` — work put on the queue directly, no HTTP: each tenant enqueues report jobs, a
 * Dispatcher and a Worker run them. Shows the limit held where the work runs (jobs spend the budget when
 * they start), groupConcurrency (one tenant's long jobs cannot take every worker slot), cancel, a permanent
 * error and per-group counts. MemoryStore by default, Redis with REDIS_URL.
 */
const { createLimiter, Dispatcher, Worker, PermanentError, EnqueueError } = require('bulk-limiter');
const { createStore } = require('./store');

async function main() {
  const { store, close: closeStore } = createStore();
  // 20 report runs per second for everyone together; at most 2 reports of one tenant at once.
  const limiter = createLimiter({ store, name: 'reports', limit: 20, windowMs: 1000, groupConcurrency: 2, maxBacklog: 50 });

  const jobs = [];
  for (const tenant of ['acme', 'globex', 'initech']) {
    for (let month = 1; month <= 6; month++) {
      // Same idempotency key, same job: enqueueing twice (a retry) does not run the report twice.
      jobs.push(await limiter.enqueue(tenant, { type: 'report', payload: { tenant, month }, idempotencyKey: `${tenant}-2026-${month}` }));
    }
  }
  const bad = await limiter.enqueue('acme', { type: 'report', payload: { tenant: 'acme', month: 13 } });
  const cancelled = await limiter.enqueue('globex', { type: 'report', payload: { tenant: 'globex', month: 7 }, delayMs: 60_000 });
  console.log(`enqueued ${jobs.length + 2} jobs; cancel a delayed one: ${await limiter.cancel(cancelled.id)}`);
  try {
    await limiter.enqueue('acme', { type: 'report', delayMs: 10 * 3_600_000 });
  } catch (error) {
    if (!(error instanceof EnqueueError)) throw error;
    console.log(`refused: ${error.code} (retry in ${error.retryAfterMs} ms)`);
  }

  const running = new Map(); // tenant → reports running now
  let most = 0; // most reports of one tenant running at once
  const dispatcher = new Dispatcher({ limiter, pollMs: 50 }).start();
  const worker = new Worker({
    limiter,
    concurrency: 6,
    handlers: {
      async report(job) {
        if (job.payload.month > 12) throw new PermanentError(`no month ${job.payload.month}`); // dead at once, no retries
        const now = (running.get(job.group) ?? 0) + 1;
        running.set(job.group, now);
        most = Math.max(most, now);
        await new Promise((resolve) => setTimeout(resolve, 200)); // the slow part: building the report
        running.set(job.group, running.get(job.group) - 1);
        return { rows: job.payload.month * 10 };
      },
    },
  }).start();

  const done = jobs.length + 1; // the reports and the dead one
  for (let i = 0; i < 400; i++) {
    const counts = await limiter.counts();
    if (counts.completed + counts.dead >= done) break;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  await worker.close(5000);
  await dispatcher.stop();

  console.log(`acme: ${JSON.stringify(await limiter.counts({ group: 'acme' }))}`);
  console.log(`the bad job: ${(await limiter.getJob(bad.id)).state}; a report: ${JSON.stringify((await limiter.getJob(jobs[0].id)).result)}`);
  console.log(
    `totals: ${JSON.stringify(await limiter.counts())}; most reports of one tenant running at once: ${most} (groupConcurrency 2, 6 worker slots)`,
  );
  await limiter.close();
  await closeStore();
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
