'use strict';
/** `npm run example:nest` — the NestJS example app on the MemoryStore, or on Redis when REDIS_URL is set. */
const { createApp } = require('./app');
const { createStore } = require('../store');

const port = Number(process.env.PORT ?? 3000);
const platform = process.env.NEST_PLATFORM === 'fastify' ? 'fastify' : 'express';
const { store, close: closeStore, kind } = createStore();

async function main() {
  // On Redis the worker may run as its own process (`npm run example:worker`); INLINE_WORKER=0 turns this one off.
  const worker = process.env.INLINE_WORKER !== '0';
  const app = await createApp({ store, platform, worker });
  await app.listen(port, '0.0.0.0');
  console.log(`bulk-limiter NestJS example (platform-${platform}) on http://localhost:${port} (${kind} store${worker ? ', in-process worker' : ''})`);
  console.log(`try: curl -i -H 'X-Tenant: acme' http://localhost:${port}/api/reports/1`);
  console.log(
    `dashboard: http://localhost:${port}/dashboard${process.env.DASHBOARD_TOKEN ? ' (dead-letter actions unlocked by DASHBOARD_TOKEN)' : ' (read-only; set DASHBOARD_TOKEN for dead-letter actions)'}`,
  );
  // app.close() (on SIGINT / SIGTERM, through enableShutdownHooks) stops the worker and dispatcher first
  app.getHttpServer().once('close', () => void closeStore());
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
