'use strict';
/**
 * What both example apps mount for operations: Prometheus metrics (`bulk-limiter/prometheus` on a prom-client
 * Registry; prom-client is an optional peer dependency, so without it /metrics answers 501), a health
 * answer from `limiter.health()` (503 when the store is down) and the options of the live dashboard.
 */
const { timingSafeEqual } = require('node:crypto');
function loadPrometheus() {
  try {
    return { Registry: require('prom-client').Registry, registerMetrics: require('bulk-limiter/prometheus').registerMetrics };
  } catch (error) {
    if (error.code === 'MODULE_NOT_FOUND' || error.code === 'ERR_PACKAGE_PATH_NOT_EXPORTED') return null;
    throw error;
  }
}

/**
 * Counts the limiter's decisions; `metrics.add({ workers, dispatchers })` counts workers started later.
 * Returns null without prom-client, or for a limiter that is not bulk-limiter's (the demo's baseline).
 */
function createMetrics(limiter) {
  const prometheus = loadPrometheus();
  if (!prometheus || typeof limiter.observe !== 'function') return null;
  const registry = new prometheus.Registry();
  const metrics = prometheus.registerMetrics({ registry, limiters: [limiter] });
  return {
    add: (more) => metrics.add(more),
    /** { status, type, body } for GET /metrics. */
    scrape: async () => ({ status: 200, type: registry.contentType, body: await registry.metrics() }),
  };
}

/** { status, body } for GET /health. */
async function healthAnswer(limiter) {
  if (typeof limiter.health !== 'function') return { status: 200, body: { status: 'up' } };
  const health = await limiter.health();
  return { status: health.status === 'down' ? 503 : 200, body: health };
}

/**
 * The dashboard's options: tenants shown with their plan; dead-letter retry / remove only for a request that
 * carries `Authorization: Bearer $DASHBOARD_TOKEN` (the page asks for the token); read-only when the variable is
 * unset. `header(ctx, name)` reads a request header (Express `req.get`, Koa `ctx.get`). Null for a limiter that
 * is not bulk-limiter's (the demo's baseline).
 */
function dashboardOptions(limiter, plans, header, token = process.env.DASHBOARD_TOKEN) {
  if (typeof limiter.observe !== 'function') return null;
  const plan = (tenant) => (plans[tenant] === undefined ? undefined : `weight ${plans[tenant]}`);
  if (!token) return { limiters: [limiter], plan };
  const expected = Buffer.from(`Bearer ${token}`);
  const authorize = (ctx) => {
    const given = Buffer.from(header(ctx, 'authorization') || '');
    return given.length === expected.length && timingSafeEqual(given, expected);
  };
  return { limiters: [limiter], plan, authorize };
}

const NO_METRICS = { status: 501, type: 'text/plain', body: 'metrics need prom-client: npm install prom-client\n' };

module.exports = { createMetrics, healthAnswer, dashboardOptions, NO_METRICS };
