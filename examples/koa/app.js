'use strict';
/**
 * The example app of ../express/app.js, in Koa: same routes, same limiter, same deferred imports.
 *   GET  /api/reports/:id   an ordinary request
 *   GET  /api/export        the bulk endpoint a flooding client hammers
 *   POST /api/imports       bulk import: run now when admitted, otherwise deferred → 202 + Location
 *   GET  /jobs/:id          status of a deferred import
 *   GET  /metrics           Prometheus metrics (../operations.js)
 *   GET  /health            the limiter's store: up, degraded or down
 *   GET  /dashboard         the live dashboard (read-only; retry / remove dead jobs with DASHBOARD_TOKEN set)
 */
const Koa = require('koa');
const Router = require('@koa/router');
const bulk = require('bulk-limiter');
const bulkKoa = require('bulk-limiter/koa');
const { createJobHandlers, PLANS } = require('../express/app');
const { createMetrics, healthAnswer, dashboardOptions, NO_METRICS } = require('../operations');

const WORK_MS = 5;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const tenantOf = (ctx) => ctx.get('x-tenant') || 'anonymous';

/** Koa has no built-in body parser; the imports route only needs a small JSON body. */
async function jsonBody(ctx, next) {
  if (ctx.is('application/json')) {
    let text = '';
    for await (const chunk of ctx.req) {
      text += chunk;
      if (text.length > 64 * 1024) ctx.throw(413);
    }
    try {
      ctx.request.body = text ? JSON.parse(text) : {};
    } catch {
      ctx.throw(400, 'invalid JSON');
    }
  }
  await next();
}

function createApp({ store, limiter, limit = 100, windowMs = 1000, plans = PLANS, onWork } = {}) {
  limiter ??= bulk.createLimiter({ store: store ?? new bulk.MemoryStore(), name: 'api', limit, windowMs });
  const shared = { limiter, group: tenantOf, weight: (tenant) => plans[tenant] ?? 1 };
  const limited = bulkKoa.bulkLimiter(shared);
  const importLimited = bulkKoa.bulkLimiter({
    ...shared,
    defer: { type: 'import', payload: (ctx) => ({ tenant: tenantOf(ctx), rows: ctx.request.body?.rows ?? 1 }), statusUrl: (id) => `/jobs/${id}` },
  });

  const work = async (ctx, kind) => {
    onWork?.({ tenant: tenantOf(ctx), kind, at: ctx.state.rateLimit?.at ?? Date.now() });
    await sleep(WORK_MS);
  };

  const router = new Router();
  router.get('/api/reports/:id', limited, async (ctx) => {
    await work(ctx, 'request');
    ctx.body = { id: ctx.params.id, tenant: tenantOf(ctx) };
  });
  router.get('/api/export', limited, async (ctx) => {
    await work(ctx, 'request');
    ctx.body = { rows: [] };
  });
  router.post('/api/imports', jsonBody, importLimited, async (ctx) => {
    await work(ctx, 'request');
    ctx.status = 201;
    ctx.body = { imported: ctx.request.body?.rows ?? 1 };
  });
  // The demo's fixed-window baseline (mounted as `limiter`) keeps no jobs: no status route for it.
  if (typeof limiter.getJob === 'function') router.get('/jobs/:id', bulkKoa.jobStatus({ limiter, group: tenantOf }));
  const metrics = createMetrics(limiter);
  router.get('/metrics', async (ctx) => {
    const { status, type, body } = metrics ? await metrics.scrape() : NO_METRICS;
    ctx.status = status;
    ctx.type = type;
    ctx.body = body;
  });
  router.get('/health', async (ctx) => {
    const { status, body } = await healthAnswer(limiter);
    ctx.status = status;
    ctx.body = body;
  });

  const app = new Koa();
  // null for the demo's fixed-window baseline, which has nothing to show
  const dashboard = dashboardOptions(limiter, plans, (ctx, name) => ctx.get(name));
  if (dashboard) app.use(bulkKoa.dashboard({ ...dashboard, path: '/dashboard' }));
  app.use(router.routes()).use(router.allowedMethods());
  app.context.limiter = limiter;
  app.context.metrics = metrics;
  return app;
}

module.exports = { createApp, createJobHandlers };
