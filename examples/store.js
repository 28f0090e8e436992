'use strict';
/** The store every example uses: the embedded MemoryStore, or Redis when REDIS_URL is set. */
const { MemoryStore, RedisStore } = require('bulk-limiter');

function createStore({ redisUrl = process.env.REDIS_URL } = {}) {
  if (!redisUrl) return { kind: 'memory', store: new MemoryStore(), close: async () => {} };
  const Redis = require('ioredis');
  // Fail fast instead of queueing commands while Redis is down (the limiter's outage policy decides).
  const client = new Redis(redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
  return {
    kind: 'redis',
    store: new RedisStore({ client }),
    close: async () => {
      await client.quit().catch(() => client.disconnect());
    },
  };
}

module.exports = { createStore };
