/**
 * A replica stalled (SIGSTOP by pid, then SIGCONT) under `durability`: every WAIT waits its whole timeout. On
 * 27ceff3 the durable writes shared one connection, so a deferral's write queued behind the WAITs of the
 * deferrals before it, timed out, and opened the breaker for live checks too (a convoy: answers of many
 * seconds). Now writes go over lanes with no WAIT in flight, a lane's confirmations share one WAIT, and an
 * unconfirmed deferral is a 503 with its key: the retry, once the replica is back, finds the same job.
 */
import type Redis from 'ioredis';
import { createLimiter, type Limiter } from '../../src/limiter/limiter';
import { RedisStore } from '../../src/redis/redis-store';
import { startRedis, type RedisServer } from '../helpers/redis-server';
import { burst, jobsByRequest, report, retryUnknown, tally, until, type BurstRequest } from './harness';

let master: RedisServer;
let replica: RedisServer;
let client: Redis;
const linked = async (): Promise<boolean> => {
  const info = await client.info('replication');
  const offset = Number(/master_repl_offset:(\d+)/.exec(info)?.[1] ?? -1);
  const acked = Number(/slave0:.*offset=(\d+)/.exec(info)?.[1] ?? -2);
  return /slave0:.*state=online/.test(info) && acked === offset;
};

beforeAll(async () => {
  master = await startRedis(['--repl-diskless-sync-delay', '0']);
  replica = await startRedis(['--replicaof', '127.0.0.1', String(master.port)]);
  client = master.client({ maxRetriesPerRequest: 1 });
  await until('the replica is linked', linked);
});
afterAll(async () => {
  if (replica.pid !== undefined) process.kill(replica.pid, 'SIGCONT');
  await replica.stop();
  await master.stop();
});

const WINDOW_MS = 1000;
const groupOf = (i: number): string => `g${i % 4}`;
const requests = (from: number, n: number): BurstRequest[] => Array.from({ length: n }, (_, k) => ({ i: from + k, group: groupOf(from + k) }));

test('0 orphans, 0 lost, 0 run twice; the breaker never opens and live checks are answered by the store', async () => {
  const name = `stalled-replica-${process.pid}`;
  const limiter: Limiter = createLimiter({
    store: new RedisStore({ client }),
    name,
    limit: 10,
    windowMs: WINDOW_MS,
    // Far above a write's time even on a loaded machine, far below the WAITs a write queued behind on 27ceff3.
    timeoutMs: 2000,
    onStoreError: 'local',
    durability: { replicas: 1, timeoutMs: 500 },
    logger: { warn: () => undefined },
  });
  let openings = 0;
  limiter.on('degraded', () => void (openings += 1));
  let byFallback = 0;
  limiter.observe({ decision: (_d, fallback) => void (fallback !== undefined && (byFallback += 1)) });
  try {
    const calm = await burst(limiter, requests(0, 20));
    process.kill(replica.pid!, 'SIGSTOP');
    const first = burst(limiter, requests(20, 20));
    await new Promise((resolve) => setTimeout(resolve, 50));
    // Sent while the first burst's WAITs block their connection.
    const second = burst(limiter, requests(40, 20));
    const live = await Promise.all(Array.from({ length: 20 }, (_, k) => limiter.check(`live${k % 4}`)));
    const stalled = [...(await first), ...(await second)];
    process.kill(replica.pid!, 'SIGCONT');
    await until('the replica caught up', linked);
    expect(stalled.filter((a) => a.decision.reason === 'store-error').length).toBeGreaterThan(0); // the fault happened: WAITs timed out
    const final = await retryUnknown(limiter, [...calm, ...stalled], groupOf);
    const t = tally(final, await jobsByRequest(client, name), WINDOW_MS);
    report('stalled replica under durability', t, {
      unknownBeforeRetry: stalled.filter((a) => a.kind === 'unknown').length,
      slowestStalledMs: Math.round(Math.max(...stalled.map((a) => a.ms))),
      breakerOpenings: openings,
      liveByFallback: byFallback,
    });
    expect(t.orphans).toBe(0);
    expect(t.lost).toBe(0);
    expect(t.twice).toBe(0);
    expect(t.answers.unknown).toBe(0);
    expect(openings).toBe(0);
    expect(live.every((d) => d.reason !== 'store-error')).toBe(true);
    expect(byFallback).toBe(0);
  } finally {
    if (replica.pid !== undefined) process.kill(replica.pid, 'SIGCONT');
    await limiter.destroy();
    await limiter.close();
  }
}, 60_000);
