/**
 * Group concurrency across processes on a real redis-server: two worker processes (a Dispatcher and a Worker
 * of concurrency 5 each) run a capped group's long jobs next to an uncapped group's. The capped group never
 * has more than its cap running at once, counted in Redis by the handlers themselves, and the other group
 * is not held up behind it.
 */
import { RedisQueue } from '../../src/redis/redis-queue';
import { enqueue, looseSpec, until } from './fixtures/queues';
import { redisWithWorkerProcesses } from './fixtures/worker-processes';

const CAP = 2;

const redis = redisWithWorkerProcesses();

test(`at most ${CAP} jobs of a capped group run at once across two processes; an uncapped group is not held up`, async () => {
  const spec = looseSpec('group-concurrency');
  const queue = new RedisQueue({ client: redis.client, spec });
  const capped: string[] = [];
  const free: string[] = [];
  for (let i = 0; i < 12; i++) capped.push(await enqueue(queue, { type: 'work', group: 'capped', groupConcurrency: CAP }));
  for (let i = 0; i < 20; i++) free.push(await enqueue(queue, { type: 'work', group: 'free' }));
  const runningKey = `running:${spec.name}`;
  const args = { port: redis.server.port, spec, effectsKey: `effects:${spec.name}`, concurrency: 5, leaseMs: 10_000, workMs: 150, runningKey };
  await Promise.all([redis.processes.start(args), redis.processes.start(args)]);
  await until(
    'the uncapped group done',
    async () => (await Promise.all(free.map((id) => queue.getJob(id)))).every((j) => j?.state === 'completed'),
    20_000,
  );
  const cappedDoneWhenFreeWas = (await Promise.all(capped.map((id) => queue.getJob(id)))).filter((j) => j?.state === 'completed').length;
  await until('the capped group done', async () => (await queue.counts()).completed === 32, 30_000);

  const seen = (await redis.client.lrange(`${runningKey}:capped`, 0, -1)).map(Number);
  expect(seen).toHaveLength(12);
  expect(Math.max(...seen)).toBe(CAP);
  // 10 slots, 2 of them for the capped group: the 20 free jobs ran alongside, not after the capped ones.
  expect(Math.max(...(await redis.client.lrange(`${runningKey}:free`, 0, -1)).map(Number))).toBeGreaterThan(CAP);
  expect(cappedDoneWhenFreeWas).toBeLessThan(12);
  await queue.close();
}, 60_000);
