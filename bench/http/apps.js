'use strict';
/**
 * The HTTP variants, each `(client, limits) → http.Server handler`. Every app answers GET / with a tiny
 * body; limiters key on the `x-tenant` header. `limits.global` is the whole budget per window (for
 * bulk-limiter's global cap), `limits.perTenant` the per-key budget peers get (global / tenants).
 */
const { requireAdapter, requireCore } = require('../lib/package');

const WINDOW_MS = 1000;
const tenantOf = (headers) => headers['x-tenant'] || 'anonymous';

function expressApp(use) {
  const express = require('express');
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  if (use) app.use(use);
  app.get('/', (_req, res) => {
    res.send('ok');
  });
  return app;
}

function koaApp(use) {
  const Koa = require('koa');
  const app = new Koa();
  app.silent = true;
  if (use) app.use(use);
  app.use((ctx) => {
    ctx.body = 'ok';
  });
  return app.callback();
}

/** A Fastify app as a request listener (its routing handler, once the app is ready). */
function fastifyApp(plugin) {
  const Fastify = require('fastify');
  let handler;
  const app = Fastify({ serverFactory: (h) => ((handler = h), require('node:http').createServer()) });
  app.register(async (scope) => {
    if (plugin) await scope.register(plugin.plugin, plugin.options);
    scope.get('/', async (_request, reply) => reply.type('text/plain').send('ok'));
  });
  let ready = false;
  const booting = app.ready().then(() => (ready = true));
  return (req, res) => (ready ? handler(req, res) : booting.then(() => handler(req, res)));
}

/**
 * The floor of any limiter on Redis: one `INCR` of the tenant's key per request, deciding nothing, on a client of
 * its own that pipelines each event-loop turn's commands into one write (ioredis `enableAutoPipelining`). What a
 * round trip per request costs the framework on this machine, whatever a limiter then does with the answer.
 */
function floorClient(client) {
  const Redis = require('ioredis');
  return new Redis({ host: client.options.host, port: client.options.port, maxRetriesPerRequest: 1, enableAutoPipelining: true });
}
const floorKey = (headers) => `floor:${tenantOf(headers)}`;

function bulkCoreLimiter(client, limits, extra = {}) {
  const core = requireCore();
  return core.createLimiter({
    // limits.store 'memory': the embedded MemoryStore (the "(memory)" variants, bench/http/profile.js --store=memory)
    store: limits.store === 'memory' ? new core.MemoryStore() : new core.RedisStore({ client, prefix: 'blh' }),
    name: `http-${process.pid}`,
    limit: limits.global,
    windowMs: WINDOW_MS,
    ...extra,
  });
}

const VARIANTS = {
  express: () => expressApp(),
  'express+bulk-limiter': (client, limits) => {
    const { bulkLimiter } = requireAdapter('express');
    return expressApp(bulkLimiter({ limiter: bulkCoreLimiter(client, limits), group: (req) => tenantOf(req.headers) }));
  },
  // The same middleware on the embedded MemoryStore: the adapter and the in-process check, without the Redis round
  // trip and without Redis's and ioredis's CPU on the shared cores (the "(memory)" rows of sections/http.js).
  'express+bulk-limiter(memory)': (client, limits) => VARIANTS['express+bulk-limiter'](client, { ...limits, store: 'memory' }),
  'express+redis-floor': (client) => {
    const redis = floorClient(client);
    return expressApp((req, _res, next) => {
      redis.incr(floorKey(req.headers)).then(() => next(), next);
    });
  },
  'express+express-rate-limit': (client, limits) => {
    const { rateLimit } = require('express-rate-limit');
    const { RedisStore } = require('rate-limit-redis');
    return expressApp(
      rateLimit({
        windowMs: WINDOW_MS,
        limit: limits.perTenant,
        keyGenerator: (req) => tenantOf(req.headers),
        standardHeaders: 'draft-8',
        legacyHeaders: false,
        validate: false,
        store: new RedisStore({ sendCommand: (command, ...args) => client.call(command, ...args), prefix: `erl-${process.pid}:` }),
      }),
    );
  },
  'express+rate-limiter-flexible': (client, limits) => {
    const { RateLimiterRedis, RateLimiterRes } = require('rate-limiter-flexible');
    const rl = new RateLimiterRedis({ storeClient: client, points: limits.perTenant, duration: WINDOW_MS / 1000, keyPrefix: `rlf-${process.pid}` });
    // The middleware its README shows: consume, 429 with Retry-After on rejection.
    return expressApp((req, res, next) => {
      rl.consume(tenantOf(req.headers)).then(
        () => next(),
        (r) => {
          if (!(r instanceof RateLimiterRes)) return next(r);
          res.set('Retry-After', String(Math.ceil(r.msBeforeNext / 1000)));
          res.status(429).send('Too Many Requests');
        },
      );
    });
  },
  // The opt-in local deny cache (README "Speed on Redis"); it only answers denials, so it runs deny-heavy only.
  'express+bulk-limiter(denyCache)': (client, limits) => {
    const { bulkLimiter } = requireAdapter('express');
    return expressApp(
      bulkLimiter({ limiter: bulkCoreLimiter(client, limits, { tuning: { denyCache: true } }), group: (req) => tenantOf(req.headers) }),
    );
  },
  'express+bulk-limiter(denyCache retry)': (client, limits) => {
    const { bulkLimiter } = requireAdapter('express');
    return expressApp(
      bulkLimiter({ limiter: bulkCoreLimiter(client, limits, { tuning: { denyCache: { hold: 'retry' } } }), group: (req) => tenantOf(req.headers) }),
    );
  },
  koa: () => koaApp(),
  'koa+bulk-limiter': (client, limits) => {
    const { bulkLimiter } = requireAdapter('koa');
    return koaApp(bulkLimiter({ limiter: bulkCoreLimiter(client, limits), group: (ctx) => tenantOf(ctx.headers) }));
  },
  'koa+bulk-limiter(memory)': (client, limits) => VARIANTS['koa+bulk-limiter'](client, { ...limits, store: 'memory' }),
  'koa+redis-floor': (client) => {
    const redis = floorClient(client);
    return koaApp(async (ctx, next) => {
      await redis.incr(floorKey(ctx.headers));
      return next();
    });
  },
  'koa+bulk-limiter(denyCache)': (client, limits) => {
    const { bulkLimiter } = requireAdapter('koa');
    return koaApp(bulkLimiter({ limiter: bulkCoreLimiter(client, limits, { tuning: { denyCache: true } }), group: (ctx) => tenantOf(ctx.headers) }));
  },
  // hold: 'retry' answers a denied tenant in-process until the retry time the store gave it (README "Speed on Redis").
  'koa+bulk-limiter(denyCache retry)': (client, limits) => {
    const { bulkLimiter } = requireAdapter('koa');
    return koaApp(
      bulkLimiter({ limiter: bulkCoreLimiter(client, limits, { tuning: { denyCache: { hold: 'retry' } } }), group: (ctx) => tenantOf(ctx.headers) }),
    );
  },
  fastify: () => fastifyApp(),
  'fastify+bulk-limiter': (client, limits) => {
    const { bulkLimiter } = requireAdapter('fastify');
    return fastifyApp({ plugin: bulkLimiter, options: { limiter: bulkCoreLimiter(client, limits), group: (request) => tenantOf(request.headers) } });
  },
  'fastify+bulk-limiter(memory)': (client, limits) => VARIANTS['fastify+bulk-limiter'](client, { ...limits, store: 'memory' }),
  'fastify+redis-floor': (client) => {
    const redis = floorClient(client);
    const floor = async (app) => {
      app.addHook('onRequest', async (request) => {
        await redis.incr(floorKey(request.headers));
      });
    };
    // not encapsulated (what fastify-plugin marks): the hook applies to the app's routes
    floor[Symbol.for('skip-override')] = true;
    return fastifyApp({ plugin: floor, options: {} });
  },
  'fastify+@fastify/rate-limit': (client, limits) => {
    const rateLimit = require('@fastify/rate-limit');
    return fastifyApp({
      plugin: rateLimit,
      options: {
        max: limits.perTenant,
        timeWindow: WINDOW_MS,
        keyGenerator: (request) => tenantOf(request.headers),
        redis: client,
        nameSpace: `frl-${process.pid}-`,
        enableDraftSpec: true,
      },
    });
  },
  'koa+koa-ratelimit': (client, limits) => {
    const ratelimit = require('koa-ratelimit');
    return koaApp(
      ratelimit({
        driver: 'redis',
        db: client,
        duration: WINDOW_MS,
        max: limits.perTenant,
        id: (ctx) => tenantOf(ctx.headers),
        namespace: `koa-${process.pid}`,
      }),
    );
  },
};

module.exports = { VARIANTS, WINDOW_MS };
