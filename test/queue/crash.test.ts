/**
 * Crash recovery on a real redis-server: a worker process (dispatcher + worker) is SIGKILLed by pid in
 * the middle of jobs; a restarted process takes the dispatcher lease over, reclaims the expired leases
 * and finishes. Every job completes at least once; the only duplicates are the jobs whose lease died
 * with the killed process.
 */
import { RedisQueue } from '../../src/redis/redis-queue';
import { enqueue, looseSpec, until } from './fixtures/queues';
import { redisWithWorkerProcesses } from './fixtures/worker-processes';

const JOBS = 40;
const CONCURRENCY = 4;

const redis = redisWithWorkerProcesses();

test('SIGKILL mid-job: every job completes at least once, duplicates only from the killed leases', async () => {
  const spec = looseSpec('crash');
  const queue = new RedisQueue({ client: redis.client, spec });
  const ids: string[] = [];
  for (let i = 0; i < JOBS; i++) ids.push(await enqueue(queue, { type: 'work', group: `tenant ${i % 3}` }));
  const args = { port: redis.server.port, spec, effectsKey: `effects:${spec.name}`, concurrency: CONCURRENCY, leaseMs: 1000, workMs: 300 };

  // 1. The first process runs jobs until it is killed in the middle of some of them.
  let started = 0;
  let killNow: () => void = () => undefined;
  const enoughStarted = new Promise<void>((resolve) => (killNow = resolve));
  const first = await redis.processes.start(args, () => ++started >= 12 && killNow());
  await enoughStarted;
  await redis.processes.kill(first);
  const atKill = await queue.counts();
  expect(atKill.active).toBeGreaterThan(0);
  expect(atKill.active).toBeLessThanOrEqual(CONCURRENCY);

  // 2. A restarted process: its dispatcher waits out the dead one's lease, reclaims, and the worker finishes.
  const second = await redis.processes.start(args, () => undefined);
  await until('all jobs completed', async () => (await queue.counts()).completed === JOBS, 30_000);
  await redis.processes.kill(second);

  const effects = await redis.client.lrange(args.effectsKey, 0, -1);
  const runs = new Map<string, number>();
  for (const id of effects) runs.set(id, (runs.get(id) ?? 0) + 1);
  const duplicated = [...runs].filter(([, n]) => n > 1).map(([id]) => id);
  for (const id of ids) {
    expect(runs.get(id) ?? 0).toBeGreaterThanOrEqual(1);
    const info = await queue.getJob(id);
    expect(info?.state).toBe('completed');
    // A job ran twice only if its lease died with the killed process (one stall).
    if (duplicated.includes(id)) expect(info?.stalls).toBe(1);
  }
  expect(duplicated.length).toBeGreaterThanOrEqual(1);
  expect(duplicated.length).toBeLessThanOrEqual(atKill.active);
  expect(effects.length - JOBS).toBe(duplicated.length);
  console.log(`crash test: ${JOBS} jobs, ${atKill.active} leases held by the killed process, ${duplicated.length} duplicate runs`);
  await queue.close();
}, 60_000);
