'use strict';
/**
 * A small multi-tenant API protected by bulk-limiter (Express). The tenant is the `X-Tenant` header; paying
 * tenants get a larger weight. One limiter guards the backend that every route below uses:
 *   GET  /api/reports/:id   an ordinary request
 *   GET  /api/export        the bulk endpoint a flooding client hammers
 *   POST /api/imports       bulk import: run now when admitted, otherwise deferred → 202 + Location
 *   GET  /jobs/:id          status of a deferred import
 *   GET  /metrics           Prometheus metrics (../operations.js)
 *   GET  /health            the limiter's store: up, degraded or down
 *   GET  /dashboard         the live dashboard (read-only; retry / remove dead jobs with DASHBOARD_TOKEN set)
 * The same app, in Koa: ../koa/app.js.
 */
const express = require('express');
const bulk = require('bulk-limiter');
const bulkExpress = require('bulk-limiter/express');
const { createMetrics, healthAnswer, dashboardOptions, NO_METRICS } = require('../operations');

/** Weight per tenant: a paying tenant gets three times the share of everyone else. */
const PLANS = { acme: 3 };
/** Simulated backend time per request or job. */
const WORK_MS = 5;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const tenantOf = (req) => req.get('x-tenant') || 'anonymous';

/**
 * The deferred-job handlers, shared by the in-process worker and examples/worker.js. The demo measures with
 * the hooks: `onWork` when backend work starts (with the time it spent the budget: a decision's `at`, a job's
 * `startedAt`), `onJobDone` when a job finished.
 */
function createJobHandlers({ onWork, onJobDone } = {}) {
  return {
    async import(job) {
      // at: when the job spent the budget (its claim, on the store's clock), as a live request's decision.at
      onWork?.({ tenant: job.payload.tenant, kind: 'job', at: job.startedAt });
      await sleep(WORK_MS);
      onJobDone?.({ tenant: job.payload.tenant, at: Date.now() });
      return { imported: job.payload.rows };
    },
  };
}

/**
 * @param {object} [options]
 * @param {object} [options.store]     a bulk-limiter store (MemoryStore by default)
 * @param {object} [options.limiter]   a ready limiter instead (the demo mounts the fixed-window baseline here)
 * @param {number} [options.limit]     requests per window for the whole backend
 * @param {(event) => void} [options.onWork]  called when backend work starts (the demo measures with it)
 */
function createApp({ store, limiter, limit = 100, windowMs = 1000, plans = PLANS, onWork } = {}) {
  limiter ??= bulk.createLimiter({ store: store ?? new bulk.MemoryStore(), name: 'api', limit, windowMs });
  const shared = { limiter, group: tenantOf, weight: (tenant) => plans[tenant] ?? 1 };
  const limited = bulkExpress.bulkLimiter(shared);
  const importLimited = bulkExpress.bulkLimiter({
    ...shared,
    defer: { type: 'import', payload: (req) => ({ tenant: tenantOf(req), rows: req.body?.rows ?? 1 }), statusUrl: (id) => `/jobs/${id}` },
  });

  const work = async (req, kind) => {
    onWork?.({ tenant: tenantOf(req), kind, at: req.rateLimit?.at ?? Date.now() });
    await sleep(WORK_MS);
  };

  const app = express();
  app.use(express.json());
  app.get('/api/reports/:id', limited, async (req, res) => {
    await work(req, 'request');
    res.json({ id: req.params.id, tenant: tenantOf(req) });
  });
  app.get('/api/export', limited, async (req, res) => {
    await work(req, 'request');
    res.json({ rows: [] });
  });
  app.post('/api/imports', importLimited, async (req, res) => {
    await work(req, 'request');
    res.status(201).json({ imported: req.body?.rows ?? 1 });
  });
  // The demo's fixed-window baseline (mounted as `limiter`) keeps no jobs: no status route for it.
  if (typeof limiter.getJob === 'function') app.get('/jobs/:id', bulkExpress.jobStatus({ limiter, group: tenantOf }));
  const metrics = createMetrics(limiter);
  app.get('/metrics', async (req, res) => {
    const { status, type, body } = metrics ? await metrics.scrape() : NO_METRICS;
    res.status(status).type(type).send(body);
  });
  app.get('/health', async (req, res) => {
    const { status, body } = await healthAnswer(limiter);
    res.status(status).json(body);
  });
  // null for the demo's fixed-window baseline, which has nothing to show
  const dashboard = dashboardOptions(limiter, plans, (req, name) => req.get(name));
  if (dashboard) app.use('/dashboard', bulkExpress.dashboard(dashboard));
  app.locals.limiter = limiter;
  app.locals.metrics = metrics;
  return app;
}

/** Starts the dispatcher and a worker in this process (counted by `metrics`, the app's, when given). */
function startWorkers({ limiter, handlers, concurrency = 4, metrics }) {
  const dispatcher = new bulk.Dispatcher({ limiter });
  const worker = new bulk.Worker({ limiter, handlers, concurrency });
  metrics?.add({ workers: [{ limiter, worker }], dispatchers: [{ limiter, dispatcher }] });
  dispatcher.start();
  worker.start();
  return {
    close: async (timeoutMs = 5000) => {
      await worker.close(timeoutMs);
      await dispatcher.stop();
    },
  };
}

module.exports = { createApp, createJobHandlers, startWorkers, PLANS };
