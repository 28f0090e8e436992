/** Deferred backlogs drain at the borrowed rate (defer-drain-suite.ts) on a real redis-server. */
import { RedisQueue } from '../../src/queue/redis-queue';
import { RedisStore } from '../../src/store/redis-store';
import { startRedis } from '../helpers/redis-server';
import { describeDeferDrain } from './defer-drain-suite';

describeDeferDrain('RedisStore', async () => {
  const server = await startRedis();
  const client = server.client();
  return {
    make: (spec, clock) => {
      const limiter = new RedisStore({ client, clock }).bind(spec);
      const queue = new RedisQueue({ client, spec, clock });
      return {
        limiter,
        takeReady: async () => {
          const [[, items]] = (await client.multi().lrange(queue.keys.ready, 0, -1).del(queue.keys.ready).exec()) as [[null, string[]], unknown];
          return items;
        },
        close: async () => { await limiter.destroy(); await queue.close(); },
      };
    },
    close: () => server.stop(),
  };
});
