'use strict';
/**
 * `REDIS_URL=redis://… npm run example:worker` — the dispatcher and a worker as their own process, next to
 * `INLINE_WORKER=0 npm run example:express` (or koa). Several may run: one dispatcher holds the lease, every
 * worker claims jobs. Needs Redis: a MemoryStore lives inside one process.
 */
const { createLimiter } = require('bulk-limiter');
const { createJobHandlers, startWorkers } = require('./express/app');
const { createStore } = require('./store');

if (!process.env.REDIS_URL) {
  console.error('examples/worker.js needs REDIS_URL (the in-memory store cannot be shared between processes).');
  process.exit(1);
}
const { store, close: closeStore } = createStore();
// Same name and limit as the app: the worker's jobs go through the same admission budget as live requests.
const limiter = createLimiter({ store, name: 'api', limit: 100, windowMs: 1000 });
const workers = startWorkers({ limiter, handlers: createJobHandlers(), concurrency: Number(process.env.CONCURRENCY ?? 4) });
console.log(`worker running against ${process.env.REDIS_URL} (Ctrl-C to stop)`);

const shutdown = async () => {
  await workers.close(10_000);
  await closeStore();
  process.exit(0);
};
process.once('SIGINT', shutdown);
process.once('SIGTERM', shutdown);
