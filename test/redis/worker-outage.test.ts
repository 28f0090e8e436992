/**
 * A Redis outage while a Worker waits for work on its blocking connection: the connection's failures reach
 * the Worker's 'error' event (nothing is reported as unhandled by ioredis), and the worker runs jobs again
 * once Redis is back. The test kills and restarts its own redis-server by pid.
 */
import type Redis from 'ioredis';
import { RedisQueue } from '../../src/redis/redis-queue';
import { Worker } from '../../src/queue/worker';
import { startRedis, type RedisServer } from '../helpers/redis-server';
import { enqueue, looseSpec, until } from '../queue/fixtures/queues';

let server: RedisServer;
let client: Redis;
beforeAll(async () => {
  server = await startRedis();
  client = server.client();
  client.on('error', () => undefined); // the shared client's own outage is the test's, not the worker's
});
afterAll(async () => server.stop());

test('the blocking connection reports its failures through the worker, and the worker resumes', async () => {
  const queue = new RedisQueue({ client, spec: looseSpec('worker-outage') });
  const errors: unknown[] = [];
  const unhandled: string[] = [];
  const consoleError = jest.spyOn(console, 'error').mockImplementation((...args: unknown[]) => void unhandled.push(args.map(String).join(' ')));
  const done: string[] = [];
  const worker = new Worker({ limiter: { queue }, handlers: { echo: async (job) => void done.push(job.id) }, idleWaitMs: 300 });
  worker.on('error', (error) => void errors.push(error));
  worker.start();
  try {
    await until('the worker is in its blocking wait', async () => String(await client.client('LIST')).includes('cmd=blpop'));
    await server.kill();
    // The blocking connection's own reconnect failures (the shared client's show as MaxRetriesPerRequestError).
    await until('the blocking connection reports its refused reconnects', () => errors.some((e) => String(e).includes('ECONNREFUSED')), 15_000);
    await server.restart();
    const id = await enqueue(queue, { type: 'echo' });
    await queue.dispatch({ readyMax: 10, moveMax: 10, promoteMax: 10, scanMax: 10 });
    await until('the job ran after the restart', () => done.includes(id), 15_000);
  } finally {
    await worker.close(1000);
    await queue.close();
    consoleError.mockRestore();
  }
  expect(unhandled.filter((line) => line.includes('Unhandled error event'))).toEqual([]);
}, 40_000);
