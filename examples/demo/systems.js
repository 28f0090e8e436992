'use strict';
/**
 * The two systems the demo compares, each the same example Express app on its own port:
 * bulk-limiter (MemoryStore, or Redis when REDIS_URL is set) and the original fixed-window design.
 */
const bulk = require('bulk-limiter');
const { createApp, createJobHandlers, startWorkers } = require('../express/app');
const { createStore } = require('../store');
const { FixedWindowLimiter } = require('./fixed-window');

const WORKER_CONCURRENCY = 4;

function listen(app) {
  return new Promise((resolve, reject) => {
    const server = app.listen(0, '127.0.0.1', () => resolve(server));
    // Longer than any run: an idle keep-alive socket closed by the server just as the driver reuses it
    // would show up as a failed request.
    server.keepAliveTimeout = 120_000;
    server.on('error', reject);
  });
}

async function startSystem({ key, title, limiter, recorder, startWorkers: start }) {
  const onWork = (event) => recorder.work(event);
  const onJobDone = (event) => recorder.jobDone(event);
  const app = createApp({ limiter, onWork });
  const server = await listen(app);
  const workers = start(createJobHandlers({ onWork, onJobDone }));
  return {
    key,
    title,
    limiter,
    recorder,
    port: server.address().port,
    deferring: workers !== null,
    async close() {
      await workers?.close(2000);
      await new Promise((resolve) => server.close(resolve));
      server.closeAllConnections?.();
    },
  };
}

/** Starts both systems; `recorders` = { ours, baseline }. */
async function startSystems({ limit, windowMs, recorders }) {
  const { store, kind, close: closeStore } = createStore();
  // A fresh name per run: on Redis, nothing from an earlier run is counted.
  const ours = bulk.createLimiter({ store, name: `demo-${process.pid}-${Date.now()}`, limit, windowMs });
  const baseline = new FixedWindowLimiter({ limit, windowMs });
  const systems = [
    await startSystem({
      key: 'ours',
      title: 'bulk-limiter',
      limiter: ours,
      recorder: recorders.ours,
      startWorkers: (handlers) => startWorkers({ limiter: ours, handlers, concurrency: WORKER_CONCURRENCY }),
    }),
    await startSystem({
      key: 'baseline',
      title: 'original fixed window',
      limiter: baseline,
      recorder: recorders.baseline,
      startWorkers: (handlers) => baseline.startWorkers({ handlers, concurrency: WORKER_CONCURRENCY }),
    }),
  ];
  return {
    systems,
    storeKind: kind,
    async close() {
      for (const system of systems) await system.close();
      await ours.destroy?.().catch(() => {});
      await closeStore();
    },
  };
}

module.exports = { startSystems };
