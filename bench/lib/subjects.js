'use strict';
/**
 * The admission subjects compared without HTTP, each `(client, { limit, windowMs }) → check(key)`
 * resolving to true (allowed) or false (denied), on the same ioredis client.
 */
const { RateLimiterRedis, RateLimiterRes } = require('rate-limiter-flexible');
const { loadCore } = require('./package');

let uniq = 0;
const unique = (base) => `${base}-${process.pid}-${Date.now().toString(36)}-${uniq++}`;

/**
 * bulk-limiter on RedisStore: an atomic fair-share admission script; the checks of one event-loop turn share
 * a call (storeOptions `{ maxBatch: 1 }`: one call per check).
 */
function bulkLimiter(client, { limit, windowMs, options = {}, storeOptions = {} }) {
  const { core, error } = loadCore();
  if (!core) throw new Error(error);
  const limiter = core.createLimiter({
    store: new core.RedisStore({ client, prefix: 'blb', ...storeOptions }),
    name: unique('bench'),
    limit,
    windowMs,
    ...options,
  });
  return { check: async (group) => (await limiter.check(group, { cost: 1, weight: 1 })).allowed, limiter };
}

/** bulk-limiter on RedisStore with `registerMetrics` counting every decision (bulk-limiter/prometheus). */
function bulkLimiterCounted(client, o) {
  const subject = bulkLimiter(client, o);
  const { Registry } = require('prom-client');
  const { registerMetrics } = require('bulk-limiter/prometheus');
  registerMetrics({ registry: new Registry(), limiters: [subject.limiter] });
  return subject;
}

/** bulk-limiter on MemoryStore (in-process; no Redis), for scale. */
function bulkLimiterMemory(_client, { limit, windowMs, options = {} }) {
  const { core, error } = loadCore();
  if (!core) throw new Error(error);
  const limiter = core.createLimiter({ store: new core.MemoryStore(), name: unique('bench'), limit, windowMs, ...options });
  return { check: async (group) => (await limiter.check(group, { cost: 1, weight: 1 })).allowed, limiter };
}

/** rate-limiter-flexible RateLimiterRedis.consume(): per-key fixed window, one Lua call. */
function rateLimiterFlexible(client, { limit, windowMs }) {
  const rl = new RateLimiterRedis({
    storeClient: client,
    points: limit,
    duration: Math.max(1, Math.round(windowMs / 1000)),
    keyPrefix: unique('rlf'),
  });
  return {
    check: (key) =>
      rl.consume(key).then(
        () => true,
        (res) => {
          if (res instanceof RateLimiterRes) return false;
          throw res;
        },
      ),
  };
}

/** The floor: a one-line INCR + PEXPIRE fixed window in Lua, per key. */
function incrExpireReference(client, { limit, windowMs }) {
  if (!client.blbIncr) {
    client.defineCommand('blbIncr', {
      numberOfKeys: 1,
      lua: "local c = redis.call('INCR', KEYS[1]) if c == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end return c",
    });
  }
  const prefix = unique('ref');
  return { check: async (key) => (await client.blbIncr(`${prefix}:${key}`, windowMs)) <= limit };
}

module.exports = { bulkLimiter, bulkLimiterCounted, bulkLimiterMemory, rateLimiterFlexible, incrExpireReference };
