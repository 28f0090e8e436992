/**
 * A Worker and a Dispatcher started before their client connects (every boot, with the docs' client options,
 * `enableOfflineQueue: false`) wait for the connection: no "Stream isn't writeable" error is reported, and
 * they run jobs once it is up.
 */
import Redis from 'ioredis';
import { createLimiter } from '../../src/limiter/limiter';
import { Dispatcher } from '../../src/queue/dispatcher';
import { Worker } from '../../src/queue/worker';
import { RedisStore } from '../../src/redis/redis-store';
import { until } from '../queue/fixtures/queues';
import { startRedis, type RedisServer } from '../helpers/redis-server';

let server: RedisServer;
beforeAll(async () => {
  server = await startRedis();
});
afterAll(() => server.stop());

test('started before the client connects: no error reported, jobs run once it is up', async () => {
  const client = new Redis({ port: server.port, host: '127.0.0.1', enableOfflineQueue: false });
  expect(client.status).toBe('connecting');
  const limiter = createLimiter({ store: new RedisStore({ client }), name: `boot-${process.pid}`, limit: 100, windowMs: 1000 });
  const errors: unknown[] = [];
  const done: string[] = [];
  const worker = new Worker({ limiter, handlers: { echo: async (job) => void done.push(job.id) } });
  const dispatcher = new Dispatcher({ limiter });
  worker.on('error', (error) => void errors.push(error));
  dispatcher.on('error', (error) => void errors.push(error));
  worker.start();
  dispatcher.start();
  try {
    await until('the client is ready', () => client.status === 'ready');
    const job = await limiter.enqueue('a', { type: 'echo' });
    await until('the job ran', () => done.includes(job.id), 15_000);
    expect(errors.map(String)).toEqual([]);
  } finally {
    await worker.close(1000);
    await dispatcher.stop(1000);
    await limiter.destroy();
    await limiter.close();
    client.disconnect();
  }
});
