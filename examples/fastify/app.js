'use strict';
/**
 * The example app of ../express/app.js, in Fastify: same routes, same limiter, same deferred imports.
 *   GET  /api/reports/:id   an ordinary request
 *   GET  /api/export        the bulk endpoint a flooding client hammers
 *   POST /api/imports       bulk import: run now when admitted, otherwise deferred → 202 + Location
 *   GET  /jobs/:id          status of a deferred import
 *   GET  /metrics           Prometheus metrics (../operations.js)
 *   GET  /health            the limiter's store: up, degraded or down
 *   GET  /dashboard         the live dashboard (read-only; retry / remove dead jobs with DASHBOARD_TOKEN set)
 */
const Fastify = require('fastify');
const bulk = require('bulk-limiter');
const bulkFastify = require('bulk-limiter/fastify');
const { createJobHandlers, PLANS } = require('../express/app');
const { createMetrics, healthAnswer, dashboardOptions, NO_METRICS } = require('../operations');

const WORK_MS = 5;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const tenantOf = (request) => request.headers['x-tenant'] || 'anonymous';

function createApp({ store, limiter, limit = 100, windowMs = 1000, plans = PLANS, onWork } = {}) {
  limiter ??= bulk.createLimiter({ store: store ?? new bulk.MemoryStore(), name: 'api', limit, windowMs });
  const work = async (request, kind) => {
    onWork?.({ tenant: tenantOf(request), kind, at: Date.now() });
    await sleep(WORK_MS);
  };

  const app = Fastify();
  // The limited API in its own scope: the plugin limits every route declared after it there.
  app.register(async (api) => {
    await api.register(bulkFastify.bulkLimiter, { limiter, group: tenantOf, weight: (tenant) => plans[tenant] ?? 1 });
    api.get('/api/reports/:id', async (request) => {
      await work(request, 'request');
      return { id: request.params.id, tenant: tenantOf(request) };
    });
    api.get('/api/export', async (request) => {
      await work(request, 'request');
      return { rows: [] };
    });
    // preHandler: the payload of a deferred import reads the parsed body
    const defer = {
      type: 'import',
      payload: (request) => ({ tenant: tenantOf(request), rows: request.body?.rows ?? 1 }),
      statusUrl: (id) => `/jobs/${id}`,
    };
    api.post('/api/imports', { config: { bulkLimiter: { hook: 'preHandler', defer } } }, async (request, reply) => {
      await work(request, 'request');
      return reply.code(201).send({ imported: request.body?.rows ?? 1 });
    });
  });
  app.get('/jobs/:id', bulkFastify.jobStatus({ limiter, group: tenantOf }));
  const metrics = createMetrics(limiter);
  app.get('/metrics', async (request, reply) => {
    const { status, type, body } = metrics ? await metrics.scrape() : NO_METRICS;
    return reply.code(status).type(type).send(body);
  });
  app.get('/health', async (request, reply) => {
    const { status, body } = await healthAnswer(limiter);
    return reply.code(status).send(body);
  });
  const dashboard = dashboardOptions(limiter, plans, (request, name) => request.headers[name]);
  if (dashboard) app.register(bulkFastify.dashboard, { prefix: '/dashboard', ...dashboard });
  app.decorate('limiter', limiter);
  app.decorate('metrics', metrics);
  return app;
}

module.exports = { createApp, createJobHandlers };
