'use strict';
/** `npm run example:express` — the example app on the MemoryStore, or on Redis when REDIS_URL is set. */
const { createApp, createJobHandlers, startWorkers } = require('./app');
const { createStore } = require('../store');

const port = Number(process.env.PORT ?? 3000);
const { store, close: closeStore, kind } = createStore();
const app = createApp({ store });
// On Redis the worker may run as its own process (`npm run example:worker`); INLINE_WORKER=0 turns this one off.
const workers =
  process.env.INLINE_WORKER === '0'
    ? null
    : startWorkers({ limiter: app.locals.limiter, handlers: createJobHandlers(), metrics: app.locals.metrics });

const server = app.listen(port, () => {
  console.log(`bulk-limiter Express example on http://localhost:${port} (${kind} store${workers ? ', in-process worker' : ''})`);
  console.log(`try: curl -i -H 'X-Tenant: acme' http://localhost:${port}/api/reports/1`);
  console.log(
    `dashboard: http://localhost:${port}/dashboard${process.env.DASHBOARD_TOKEN ? ' (dead-letter actions unlocked by DASHBOARD_TOKEN)' : ' (read-only; set DASHBOARD_TOKEN for dead-letter actions)'}`,
  );
});

const shutdown = async () => {
  server.close();
  await workers?.close();
  await closeStore();
  process.exit(0);
};
process.once('SIGINT', shutdown);
process.once('SIGTERM', shutdown);
