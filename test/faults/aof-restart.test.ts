/**
 * A master with `appendfsync always` killed -9 by pid in the middle of a drain and restarted on its AOF (no
 * failover: its replica waits for it and resyncs), under `durability`. Producers enqueue while it happens, each
 * retrying a failed enqueue with the same idempotency key until it is answered, as a client told 503 would;
 * a Dispatcher and a Worker drain. Counted: confirmed jobs (enqueue answered) that never ran (lost), requests
 * written as more than one job, jobs run more than once, and jobs run again after their completion was
 * acknowledged (the Worker's 'completed'). The runs under way at the kill are the duplicates at-least-once
 * delivery allows; an acknowledgement refused while the server is down is sent again with the same token.
 */
import { createLimiter, type Limiter } from '../../src/limiter/limiter';
import { Dispatcher } from '../../src/queue/dispatcher';
import { Worker } from '../../src/queue/worker';
import { RedisStore } from '../../src/redis/redis-store';
import { startRedis, type RedisServer } from '../helpers/redis-server';
import { jobsByRequest, report, until } from './harness';

let master: RedisServer;
let replica: RedisServer;
const linked = async (): Promise<boolean> => {
  const admin = master.client({ maxRetriesPerRequest: 0 });
  admin.on('error', () => undefined);
  try {
    return /slave0:.*state=online/.test(await admin.info('replication'));
  } catch {
    return false;
  } finally {
    admin.disconnect();
  }
};

beforeAll(async () => {
  master = await startRedis(['--appendonly', 'yes', '--appendfsync', 'always', '--repl-diskless-sync-delay', '0']);
  replica = await startRedis(['--replicaof', '127.0.0.1', String(master.port)]);
  await until('the replica is linked', linked);
});
afterAll(async () => {
  await replica.stop();
  await master.stop();
});

const BEFORE = 400;
const DURING = 200;
const silent = { warn: () => undefined, error: () => undefined };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test('kill -9 and restart mid-drain: no confirmed job lost, none written twice, none run again once acknowledged', async () => {
  const name = `aof-restart-${process.pid}`;
  const client = master.client({ maxRetriesPerRequest: 1 });
  client.on('error', () => undefined);
  const limiter: Limiter = createLimiter({
    store: new RedisStore({ client }),
    name,
    limit: 100_000,
    windowMs: 1000,
    maxBacklog: 100_000,
    onStoreError: 'deny',
    timeoutMs: 1000,
    durability: { replicas: 1, timeoutMs: 1000 },
    logger: silent,
  });
  const runs = new Map<number, number>();
  const acknowledged = new Set<number>();
  let ranAfterAck = 0;
  const dispatcher = new Dispatcher({ limiter, readyMax: 200 });
  const worker = new Worker({
    limiter,
    concurrency: 10,
    leaseMs: 5000,
    logger: silent,
    handlers: {
      fault: async (job) => {
        const { i } = job.payload as { i: number };
        if (acknowledged.has(i)) ranAfterAck += 1;
        runs.set(i, (runs.get(i) ?? 0) + 1);
        await sleep(5);
      },
    },
  });
  worker.on('completed', (job) => void acknowledged.add((job.payload as { i: number }).i));
  worker.on('error', () => undefined);
  dispatcher.on('error', () => undefined);
  /** A client: enqueues job i, and after a failure enqueues it again with the same key until it is answered. */
  const confirmed = new Map<number, string>();
  let failedEnqueues = 0;
  const produce = async (i: number): Promise<void> => {
    for (;;) {
      try {
        const job = await limiter.enqueue('tenant', { type: 'fault', payload: { i }, idempotencyKey: `job-${i}` });
        confirmed.set(i, job.id);
        return;
      } catch {
        failedEnqueues += 1;
        await sleep(100);
      }
    }
  };
  const produceAll = async (from: number, n: number, parallel: number): Promise<void> => {
    let next = from;
    await Promise.all(
      Array.from({ length: parallel }, async () => {
        while (next < from + n) await produce(next++);
      }),
    );
  };
  try {
    await produceAll(0, BEFORE, 50);
    dispatcher.start();
    worker.start();
    await until('a quarter ran', () => runs.size >= BEFORE / 4, 30_000);
    const producing = produceAll(BEFORE, DURING, 5);
    await sleep(50);
    const inFlight = worker.running;
    const killedAt = Date.now();
    await master.kill();
    await sleep(300);
    await master.restart();
    const restartedAt = Date.now();
    await producing;
    const producedAt = Date.now();
    await until('every confirmed job ran', () => [...confirmed.keys()].every((i) => runs.has(i)), 40_000);
    // A claim whose answer the kill lost runs when its lease (5 s) ends: give any other repeat that chance.
    await sleep(5500);
    const lost = [...confirmed.keys()].filter((i) => !runs.has(i)).length;
    const twice = [...runs.values()].filter((n) => n > 1).length;
    const jobs = await jobsByRequest(client, name);
    const writtenTwice = [...jobs.values()].filter((ids) => ids.length > 1).length;
    const notTheConfirmedJob = [...confirmed].filter(([i, id]) => !(jobs.get(i) ?? []).includes(id)).length;
    report(
      'standalone master with appendfsync always killed -9 and restarted mid-drain, durability on',
      { answers: { allowed: 0, deferred: confirmed.size, refused: 0, unknown: 0 }, orphans: 0, lost, twice, mostPerWindow: 0, slowestMs: 0 },
      {
        inFlightAtKill: inFlight,
        ranAfterAck,
        writtenTwice,
        failedEnqueues,
        downMs: restartedAt - killedAt,
        enqueuesDoneMsAfterRestart: producedAt - restartedAt,
      },
    );
    expect(confirmed.size).toBe(BEFORE + DURING);
    expect(lost).toBe(0);
    expect(notTheConfirmedJob).toBe(0);
    expect(writtenTwice).toBe(0);
    expect(ranAfterAck).toBe(0);
    expect(twice).toBeLessThanOrEqual(inFlight);
  } finally {
    await Promise.all([worker.close(2000), dispatcher.stop()]);
    await limiter.close();
  }
}, 90_000);
