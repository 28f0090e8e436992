import type Redis from 'ioredis';
import { RedisStore } from '../../src/redis/redis-store';
import { startRedis, type RedisServer } from '../helpers/redis-server';
import { describeDefer } from './defer-suite';

let server: RedisServer;
let client: Redis;
beforeAll(async () => {
  server = await startRedis();
  client = server.client();
});
afterAll(async () => {
  await server.stop();
});

describeDefer('RedisStore', (clock) => new RedisStore({ client, clock }));
