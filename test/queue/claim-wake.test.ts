/**
 * A refused claim says when the next job may start (wakeMs), and claimers refused together get slots one emission
 * interval apart. The claim of complete-and-claim passes a finished job's slot on and nobody sleeps on its wake:
 * it must take no slot. When it did, each refused completion pushed the sleeping worker's next slot one interval
 * later, the bucket (burst 2 at limit 20/s) filled and overflowed meanwhile, and a drain after a worker pause
 * started 52 (MemoryStore) and 63 (Redis) jobs in 4 s where the strict rate allows 78. Both stores, on an injected
 * clock.
 */
import type Redis from 'ioredis';
import { MemoryQueue } from '../../src/memory/memory-queue';
import { RedisQueue } from '../../src/redis/redis-queue';
import type { LimiterSpec } from '../../src/types';
import { startRedis, type RedisServer } from '../helpers/redis-server';
import { SPEC_DEFAULTS } from '../helpers/spec';
import { ManualClock } from '../conformance/store-suite';
import { jobInput } from './fixtures/queues';
import type { TestQueue } from './queue-store-suite';

const LEASE_MS = 60_000;
let server: RedisServer;
let client: Redis;
beforeAll(async () => {
  server = await startRedis();
  client = server.client();
});

let seq = 0;
/** limit 20 per second, burst 2: one emission interval is 1000 / 19 ≈ 52.6 ms. */
const spec = (): LimiterSpec => ({
  ...SPEC_DEFAULTS,
  name: `claim-wake-${process.pid}-${++seq}`,
  limit: 20,
  windowMs: 1000,
  burst: 2,
  reserve: 1,
  idleMs: 600_000,
  epochMs: 250,
  sustained: false,
});

const redisQueues: RedisQueue[] = [];
afterAll(async () => {
  await Promise.all(redisQueues.map((q) => q.close()));
  await server.stop();
});

describe.each<[string, (clock: ManualClock) => TestQueue]>([
  ['MemoryQueue', (clock) => new MemoryQueue({ spec: spec(), clock: clock.now })],
  [
    'RedisQueue',
    (clock) => {
      const q = new RedisQueue({ client, spec: spec(), clock: clock.now });
      redisQueues.push(q);
      return q;
    },
  ],
])('claim wake-ups: %s', (_name, make) => {
  test('refused completions take no wake slot: the sleeping claimer wakes when the next unit is there', async () => {
    const clock = new ManualClock();
    const queue = make(clock);
    for (let i = 0; i < 20; i++) await queue.enqueue(jobInput({ group: 'g' }));
    await queue.dispatch({ readyMax: 100, moveMax: 100, promoteMax: 100, scanMax: 100 });
    // the bucket's 2 units start 2 jobs; the claim is refused for the rest and told to wait one interval
    const first = await queue.claimMany(LEASE_MS, 10);
    expect(first.claimed).toHaveLength(2);
    expect(first.wakeMs).toBe(53);
    // the two jobs finish at once; their completions try to pass the slot on and are refused too
    for (const job of first.claimed) {
      const r = await queue.completeAndClaim(job.id, job.token, undefined, 60_000, LEASE_MS, 1);
      expect(r.completed).toBe(true);
      expect(r.claimed).toHaveLength(0);
    }
    // the worker wakes at its slot and finds the unit there
    clock.advance(first.wakeMs);
    const second = await queue.claimMany(LEASE_MS, 10);
    expect(second.claimed).toHaveLength(1);
    // and its next slot is one interval on, not pushed back by the refused completions (they took 2 more: 158 ms)
    expect(second.wakeMs).toBe(53);
  });

  test('claimers refused together still get slots one interval apart', async () => {
    const clock = new ManualClock();
    const queue = make(clock);
    for (let i = 0; i < 10; i++) await queue.enqueue(jobInput({ group: 'g' }));
    await queue.dispatch({ readyMax: 100, moveMax: 100, promoteMax: 100, scanMax: 100 });
    const first = await queue.claimMany(LEASE_MS, 10);
    expect(first.claimed).toHaveLength(2);
    const waits = [first.wakeMs];
    for (let w = 0; w < 3; w++) waits.push((await queue.claimMany(LEASE_MS, 10)).wakeMs);
    expect(waits).toEqual([53, 106, 159, 212]);
  });
});
