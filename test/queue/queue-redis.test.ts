import type Redis from 'ioredis';
import { RedisQueue } from '../../src/redis/redis-queue';
import { allKeys } from '../../src/redis/keys';
import type { LimiterSpec } from '../../src/types';
import { startRedis, type RedisServer } from '../helpers/redis-server';
import { describeQueueStore } from './queue-store-suite';
import { SPEC_DEFAULTS } from '../helpers/spec';

let server: RedisServer;
let client: Redis;
let seq = 0;
const spec = (name: string): LimiterSpec => ({
  ...SPEC_DEFAULTS,
  name,
  limit: 1000,
  windowMs: 1000,
  burst: 50,
  reserve: 10,
  idleMs: 60_000,
  epochMs: 250,
  sustained: false,
});
const queues: RedisQueue[] = [];

beforeAll(async () => {
  server = await startRedis();
  client = server.client();
});
afterEach(async () => {
  await Promise.all(queues.splice(0).map((q) => q.close()));
});
afterAll(async () => {
  await server.stop();
});

describeQueueStore('RedisQueue', async ({ clock, spec, maxDead }) => {
  const q = new RedisQueue({ client, spec, clock, ...(maxDead ? { maxDead } : {}) });
  queues.push(q);
  return q;
});

describe('RedisQueue on Redis only', () => {
  test('acknowledgements made in one turn share one script call and claim the next jobs in order', async () => {
    const q = new RedisQueue({ client, spec: spec(`acks-${++seq}`) });
    queues.push(q);
    for (let i = 0; i < 30; i++) {
      expect(
        (
          await q.enqueue({
            group: `g${i % 3}`,
            weight: 1,
            cost: 1,
            type: 't',
            payload: JSON.stringify({ i }),
            maxBacklog: 100,
            delayMs: 0,
            maxDeferMs: 60_000,
          })
        ).status,
      ).toBe('written');
    }
    await q.dispatch({ readyMax: 100, moveMax: 100, promoteMax: 100, scanMax: 100 });
    const first = (await q.claimMany(60_000, 10)).claimed;
    expect(first).toHaveLength(10);
    let scriptCalls = 0;
    const send = client.sendCommand.bind(client);
    client.sendCommand = ((command: { name: string }, ...rest: unknown[]) => {
      if (command.name === 'evalsha' || command.name === 'eval') scriptCalls++;
      return (send as (...args: unknown[]) => unknown)(command, ...rest);
    }) as typeof client.sendCommand;
    try {
      // a stale token among them: that one is refused, the others complete, every one still claims
      const acks = await Promise.all(first.map((c, i) => q.completeAndClaim(c.id, i === 3 ? 'stale' : c.token, undefined, 60_000, 60_000, 1)));
      expect(scriptCalls).toBeLessThanOrEqual(2); // one call (two when the script is loaded first)
      expect(acks.map((a) => a.completed)).toEqual(first.map((_, i) => i !== 3));
      const next = acks.flatMap((a) => a.claimed);
      expect(next).toHaveLength(10);
      const ids = [...first, ...next].map((c) => c.id);
      expect(new Set(ids).size).toBe(20);
      // ten new leases plus the one whose acknowledgement was refused; nine completed
      expect(await q.counts()).toMatchObject({ active: 11, completed: 9 });
    } finally {
      client.sendCommand = send;
    }
  });

  test('the dispatcher lease expires on the Redis clock', async () => {
    const q = new RedisQueue({ client, spec: spec(`lease-${++seq}`) });
    expect(await q.acquireDispatcherLease('a', 50)).toBe(true);
    expect(await q.acquireDispatcherLease('b', 50)).toBe(false);
    await new Promise((r) => setTimeout(r, 120));
    expect(await q.acquireDispatcherLease('b', 50)).toBe(true);
  });

  test('every key a queue touches is one of the limiter keys, in one slot', async () => {
    const name = `slots-${++seq}`;
    const q = new RedisQueue({ client, spec: spec(name) });
    queues.push(q);
    const r = await q.enqueue({
      group: 'g',
      weight: 1,
      cost: 1,
      type: 't',
      payload: '{}',
      idempotencyKey: 'k',
      maxBacklog: 10,
      delayMs: 0,
      maxDeferMs: 1000,
    });
    expect(r.status).toBe('written');
    await q.dispatch({ readyMax: 10, moveMax: 10, promoteMax: 10, scanMax: 10 });
    const c = (await q.claim(1000))!;
    await q.complete(c.id, c.token, '1', 60_000);
    const found = await client.keys(`{bl:${name}}*`);
    const known = new Set(allKeys(q.keys));
    expect(found.length).toBeGreaterThan(0);
    for (const key of found) expect(known.has(key)).toBe(true);
    const slots = new Set(await Promise.all(allKeys(q.keys).map((k) => client.call('CLUSTER', 'KEYSLOT', k).catch(() => 0))));
    expect(slots.size).toBe(1);
  });

  test('the backlog hash is a hashtable while groups wait, and goes with the last one', async () => {
    const q = new RedisQueue({ client, spec: spec(`backlog-${++seq}`) });
    queues.push(q);
    const add = (group: string) => q.enqueue({ group, weight: 1, cost: 1, type: 't', payload: '{}', maxBacklog: 10, delayMs: 0, maxDeferMs: 1000 });
    for (const g of ['a', 'b', 'a']) expect((await add(g)).status).toBe('written');
    expect(await client.object('ENCODING', q.keys.backlog)).toBe('hashtable');
    expect(await client.hget(q.keys.backlog, 'a')).toBe('2');
    expect(await client.hget(q.keys.backlog, 'b')).toBe('1');
    await q.dispatch({ readyMax: 10, moveMax: 10, promoteMax: 10, scanMax: 10 });
    const { claimed } = await q.claimMany(1000, 3);
    expect(claimed).toHaveLength(3);
    expect(await q.complete(claimed[0]!.id, claimed[0]!.token, undefined, 1000)).toBe(true);
    expect(await q.fail(claimed[1]!.id, claimed[1]!.token, { kind: 'error', error: 'x', delayMs: 0, maxAttempts: 1 })).toEqual({ state: 'dead' });
    expect(await client.exists(q.keys.backlog)).toBe(1);
    expect(await q.complete(claimed[2]!.id, claimed[2]!.token, undefined, 1000)).toBe(true);
    expect(await client.exists(q.keys.backlog)).toBe(0);
    expect(await q.retryDead(claimed[1]!.id)).toBe(true);
    expect(await client.hget(q.keys.backlog, claimed[1]!.group)).toBe('1');
  });

  test('a lease taken before the lease-member layout (bare id in active, record active) is still reclaimed', async () => {
    const q = new RedisQueue({ client, spec: spec(`legacy-${++seq}`) });
    queues.push(q);
    const r = await q.enqueue({ group: 'g', weight: 1, cost: 1, type: 't', payload: '{}', maxBacklog: 10, delayMs: 0, maxDeferMs: 1000 });
    if (r.status !== 'written') throw new Error(r.status);
    await q.dispatch({ readyMax: 10, moveMax: 10, promoteMax: 10, scanMax: 10 });
    await client.del(q.keys.ready);
    const rec = JSON.parse((await client.hget(q.keys.jobs, r.id))!) as Record<string, unknown>;
    await client.hset(q.keys.jobs, r.id, JSON.stringify({ ...rec, state: 'active', token: '1:1' }));
    await client.zadd(q.keys.active, 1, r.id);
    expect((await q.getJob(r.id))?.state).toBe('active');
    expect(await q.reclaimExpired(3, 10)).toEqual({ requeued: 1, dead: 0 });
    expect(await q.getJob(r.id)).toMatchObject({ state: 'pending', stalls: 1 });
    await q.dispatch({ readyMax: 10, moveMax: 10, promoteMax: 10, scanMax: 10 });
    const c = (await q.claim(1000))!;
    expect(c.id).toBe(r.id);
    expect(await q.complete(c.id, c.token, '1', 1000)).toBe(true);
    expect((await q.getJob(r.id))?.state).toBe('completed');
  });

  test('a promotion batch larger than Lua unpack allows (9 000 jobs) moves in one call', async () => {
    const q = new RedisQueue({ client, spec: spec(`big-${++seq}`) });
    for (let i = 0; i < 9000; i += 500) {
      await Promise.all(
        Array.from({ length: 500 }, () =>
          q.enqueue({ group: 'g', weight: 1, cost: 1, type: 't', payload: '{}', maxBacklog: 1e6, delayMs: 0, maxDeferMs: 1000 }),
        ),
      );
    }
    const r = await q.dispatch({ readyMax: 10, moveMax: 10, promoteMax: 10_000, scanMax: 10 });
    expect(r).toMatchObject({ promoted: 9000, moved: 10, readyFull: true });
    expect(await q.counts()).toMatchObject({ delayed: 0, pending: 8990, ready: 10 });
  });

  test('a group arriving after the fair-share state expired does not overtake the pending backlog', async () => {
    const q = new RedisQueue({ client, spec: spec(`vt-${++seq}`) });
    queues.push(q);
    const job = (group: string) => ({ group, weight: 1, cost: 1, type: 't', payload: '{}', maxBacklog: 1000, delayMs: 0, maxDeferMs: 60_000 });
    for (let i = 0; i < 20; i++) expect((await q.enqueue(job('a'))).status).toBe('written');
    await q.dispatch({ readyMax: 1, moveMax: 1, promoteMax: 100, scanMax: 10 });
    // The fair-share state (the groups hash) expires when the limiter goes quiet; the pending backlog keeps its tags.
    await client.del(q.keys.groups);
    expect((await q.enqueue(job('b'))).status).toBe('written');
    await q.dispatch({ readyMax: 1, moveMax: 1, promoteMax: 100, scanMax: 10 });
    const pending = await client.zrange(q.keys.pending, 0, -1, 'WITHSCORES');
    const tags = new Map<string, number>();
    for (let i = 0; i < pending.length; i += 2) tags.set(pending[i]!, Number(pending[i + 1]));
    const bTag = [...tags].find(([m]) => m.endsWith(' b'))?.[1];
    const aTags = [...tags].filter(([m]) => !m.endsWith(' b')).map(([, t]) => t);
    expect(aTags).toHaveLength(19);
    expect(bTag).toBeDefined();
    expect(bTag!).toBeGreaterThanOrEqual(Math.min(...aTags));
  });

  test('uses Redis TIME without a clock: runAt is near the wall clock', async () => {
    const q = new RedisQueue({ client, spec: spec(`time-${++seq}`) });
    const before = Date.now();
    const r = await q.enqueue({ group: 'g', weight: 1, cost: 1, type: 't', payload: '{}', maxBacklog: 10, delayMs: 1000, maxDeferMs: 5000 });
    expect(r.status).toBe('written');
    if (r.status === 'written') expect(Math.abs(r.runAt - (before + 1000))).toBeLessThan(5000);
  });

  test('a worker blocked in waitForReady on its duplicate connection does not block the shared client', async () => {
    const q = new RedisQueue({ client, spec: spec(`block-${++seq}`) });
    queues.push(q);
    const waiting = q.waitForReady(3000);
    const t = Date.now();
    expect(await client.ping()).toBe('PONG');
    expect(Date.now() - t).toBeLessThan(1000);
    await q.enqueue({ group: 'g', weight: 1, cost: 1, type: 't', payload: '{}', maxBacklog: 10, delayMs: 0, maxDeferMs: 5000 });
    await q.dispatch({ readyMax: 10, moveMax: 10, promoteMax: 10, scanMax: 10 });
    await waiting;
    expect(Date.now() - t).toBeLessThan(2500);
  });
});
