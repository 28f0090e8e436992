/**
 * A 202 is a promise: with `durability: { replicas: 1 }` a deferral and an enqueue are confirmed on a real
 * replica (Redis WAIT) before they are answered. The test starts a master and a replica, kills the replica
 * by pid and restarts it: while it is down a deferral is answered 503 (no job promised) and an enqueue
 * rejects; the client's retry with the same idempotency key afterwards finds the same job, confirmed.
 */
import express from 'express';
import type Redis from 'ioredis';
import request from 'supertest';
import { createLimiter, type Limiter } from '../../src/limiter/limiter';
import { bulkLimiter } from '../../src/middleware/express';
import { MemoryStore } from '../../src/memory/memory-store';
import { limiterKeys } from '../../src/redis/keys';
import { RedisStore } from '../../src/redis/redis-store';
import { startRedis, type RedisServer } from '../helpers/redis-server';
import { until } from '../queue/fixtures/queues';
import { SPEC_DEFAULTS } from '../helpers/spec';

let master: RedisServer;
let replica: RedisServer;
let client: Redis;
let replicaClient: Redis;
const linked = async () => /slave0:.*state=online/.test(await client.info('replication'));

beforeAll(async () => {
  // No 5 s wait before the first full sync (Redis 7's diskless default), so the replica is online at once.
  master = await startRedis(['--repl-diskless-sync-delay', '0']);
  replica = await startRedis(['--replicaof', '127.0.0.1', String(master.port)]);
  client = master.client();
  replicaClient = replica.client({ maxRetriesPerRequest: null });
  replicaClient.on('error', () => undefined);
  await until('the replica is linked', linked, 10_000);
});
afterAll(async () => {
  await replica.stop();
  await master.stop();
});

const defer = (idempotencyKey: string) => ({ defer: { type: 'report', payload: { n: 1 }, idempotencyKey } });

test('deferrals and enqueues are confirmed on the replica; unconfirmed ones promise nothing and a retry finds the same job', async () => {
  const name = `durable-${process.pid}`;
  const limiter: Limiter = createLimiter({
    store: new RedisStore({ client }),
    name,
    limit: 1,
    tuning: { burst: 1 },
    windowMs: 60_000,
    // Generous: under a loaded test run the replica's acknowledgement can take longer than a few hundred ms.
    durability: { replicas: 1, timeoutMs: 1500 },
  });
  const jobsKey = limiterKeys('bl', name).jobs;
  try {
    expect((await limiter.check('acme')).allowed).toBe(true);
    const confirmed = await limiter.check('acme', defer('k1'));
    expect(confirmed.job).toBeDefined();
    // Confirmed means written on the replica already.
    expect(await replicaClient.hexists(jobsKey, confirmed.job!.id)).toBe(1);

    await replica.kill();
    const unconfirmed = await limiter.check('acme', defer('k2'));
    expect(unconfirmed).toMatchObject({ allowed: false, reason: 'store-error' });
    expect(unconfirmed.job).toBeUndefined();
    expect(unconfirmed.retryAfterMs).toBeGreaterThanOrEqual(1000);
    await expect(limiter.enqueue('acme', { type: 'report', idempotencyKey: 'k3' })).rejects.toMatchObject({ code: 'ERR_BL_NOT_DURABLE' });
    // Through the middleware: 503 + Retry-After, never a 202.
    const app = express();
    app.get('/r', bulkLimiter({ limiter, group: () => 'acme', defer: { type: 'report', statusUrl: (id) => `/jobs/${id}` } }), (_req, res) => {
      res.send('ran');
    });
    const res = await request(app).get('/r').set('Idempotency-Key', 'k4');
    expect(res.status).toBe(503);
    expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);

    await replica.restart();
    await until('the replica is linked again', linked, 15_000);
    // The client retries with the same key: the job written while unconfirmed is found, and now confirmed.
    const retried = await limiter.check('acme', defer('k2'));
    expect(retried.job).toMatchObject({ duplicate: true });
    await until('the replica has it', async () => (await replicaClient.hexists(jobsKey, retried.job!.id)) === 1, 10_000);
    const enqueued = await limiter.enqueue('acme', { type: 'report', idempotencyKey: 'k3' });
    expect(enqueued.duplicate).toBe(true);
  } finally {
    await limiter.destroy();
    await limiter.close();
  }
}, 60_000);

test('durability needs a store that can confirm writes on replicas', () => {
  expect(() => createLimiter({ store: new MemoryStore(), limit: 10, durability: { replicas: 1 } })).toThrow(
    expect.objectContaining({ code: 'ERR_BL_DURABILITY' }),
  );
  expect(() => createLimiter({ store: new RedisStore({ client }), limit: 10, durability: { replicas: 0 } })).toThrow(
    expect.objectContaining({ code: 'ERR_BL_DURABILITY' }),
  );
});

test('a write is confirmed only on the connection that carried it: after a reconnect, WAIT says nothing about it', async () => {
  const name = `durable-session-${process.pid}`;
  const store = new RedisStore({ client }).bind({
    ...SPEC_DEFAULTS,
    name,
    limit: 1,
    windowMs: 60_000,
    burst: 1,
    reserve: 0,
    idleMs: 60_000,
    epochMs: 15_000,
    sustained: false,
  });
  const writes = store.durableWrites!();
  const deferred = (key: string) =>
    writes.admit({
      group: 'acme',
      weight: 1,
      cost: 1,
      defer: { type: 'report', payload: '{}', idempotencyKey: key, maxBacklog: 100, maxDeferMs: 3_600_000 },
    });
  try {
    expect((await store.admit({ group: 'acme', weight: 1, cost: 1 })).allowed).toBe(true);
    const first = await deferred('s1');
    expect(first.job).toBeDefined();
    expect(await writes.confirm(first, 1, 1500)).toBe(1);

    const second = await deferred('s2');
    expect(second.job).toBeDefined();
    // Drops every normal connection to the master (not the replica's link): the durable one reconnects.
    await client.client('KILL', 'TYPE', 'normal', 'SKIPME', 'yes');
    expect(await writes.confirm(second, 1, 1500)).toBe(0);
    // A write made after the reconnect is confirmed on the new connection.
    const third = await deferred('s3');
    expect(await writes.confirm(third, 1, 1500)).toBe(1);
  } finally {
    await writes.close();
    await store.destroy();
  }
}, 30_000);

test("a failure's acknowledgement is confirmed on the replica; unconfirmed, it is sent again until the replica has it", async () => {
  const name = `durable-fail-${process.pid}`;
  const limiter: Limiter = createLimiter({
    store: new RedisStore({ client }),
    name,
    limit: 100,
    windowMs: 1000,
    durability: { replicas: 1, timeoutMs: 300 },
  });
  const jobsKey = limiterKeys('bl', name).jobs;
  const { queue } = limiter;
  const onReplica = async (id: string) => JSON.parse((await replicaClient.hget(jobsKey, id)) ?? '{}') as { attempts?: number; snoozes?: number };
  const claimOne = async () => {
    await queue.dispatch({ readyMax: 10, moveMax: 10, promoteMax: 10, scanMax: 10 });
    const [run] = (await queue.claimMany(60_000, 1)).claimed;
    expect(run).toBeDefined();
    return run!;
  };
  try {
    const first = await limiter.enqueue('acme', { type: 'report', idempotencyKey: 'f1' });
    const run = await claimOne();
    expect(run.id).toBe(first.id);
    expect(await queue.fail(run.id, run.token, { kind: 'error', error: 'boom', delayMs: 60_000, maxAttempts: 5 })).toEqual({ state: 'retrying' });
    // Confirmed means on the replica already: a failover now would not roll the retry back.
    expect(await onReplica(run.id)).toMatchObject({ attempts: 1 });

    await limiter.enqueue('acme', { type: 'report', idempotencyKey: 'f2' });
    const second = await claimOne();
    process.kill(replica.pid!, 'SIGSTOP');
    let resumed = false;
    const snoozing = queue.fail(second.id, second.token, { kind: 'snooze', delayMs: 60_000, maxSnoozes: 5 }).finally(() => void (resumed = true));
    // Longer than one WAIT (300 ms): the first send was not confirmed, and the acknowledgement is not answered.
    await new Promise((resolve) => setTimeout(resolve, 700));
    expect(resumed).toBe(false);
    process.kill(replica.pid!, 'SIGCONT');
    // Sent again (its repeat refused: the first counted), and confirmed once the replica acknowledges.
    expect(await snoozing).toEqual({ state: 'snoozed' });
    expect(await onReplica(second.id)).toMatchObject({ snoozes: 1 });
  } finally {
    process.kill(replica.pid!, 'SIGCONT');
    await limiter.destroy();
    await limiter.close();
  }
}, 60_000);
