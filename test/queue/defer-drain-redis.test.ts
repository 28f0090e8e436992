/** Deferred backlogs drain at the borrowed rate (defer-drain-suite.ts) on a real redis-server. */
import { RedisStore } from '../../src/redis/redis-store';
import { startRedis } from '../helpers/redis-server';
import { describeDeferDrain } from './defer-drain-suite';

describeDeferDrain('RedisStore', async () => {
  const server = await startRedis();
  const client = server.client();
  return {
    make: (spec, clock) => {
      const limiter = new RedisStore({ client, clock }).bind(spec);
      return {
        limiter,
        close: async () => {
          await limiter.destroy();
          await limiter.close?.();
        },
      };
    },
    close: () => server.stop(),
  };
});
