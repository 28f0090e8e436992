'use strict';
/** `npm run example:fastify` — the Fastify example app on the MemoryStore, or on Redis when REDIS_URL is set. */
const { createApp, createJobHandlers } = require('./app');
const { startWorkers } = require('../express/app');
const { createStore } = require('../store');

const port = Number(process.env.PORT ?? 3000);
const { store, close: closeStore, kind } = createStore();
const app = createApp({ store });
// On Redis the worker may run as its own process (`npm run example:worker`); INLINE_WORKER=0 turns this one off.
const workers =
  process.env.INLINE_WORKER === '0' ? null : startWorkers({ limiter: app.limiter, handlers: createJobHandlers(), metrics: app.metrics });

app.listen({ port, host: '0.0.0.0' }).then(() => {
  console.log(`bulk-limiter Fastify example on http://localhost:${port} (${kind} store${workers ? ', in-process worker' : ''})`);
  console.log(`try: curl -i -H 'X-Tenant: acme' http://localhost:${port}/api/reports/1`);
  console.log(
    `dashboard: http://localhost:${port}/dashboard${process.env.DASHBOARD_TOKEN ? ' (dead-letter actions unlocked by DASHBOARD_TOKEN)' : ' (read-only; set DASHBOARD_TOKEN for dead-letter actions)'}`,
  );
});

const shutdown = async () => {
  await app.close();
  await workers?.close();
  await closeStore();
  process.exit(0);
};
process.once('SIGINT', shutdown);
process.once('SIGTERM', shutdown);
