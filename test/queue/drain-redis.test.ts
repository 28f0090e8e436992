/**
 * A 20 000-job backlog from five weighted groups drains at the weight ratios while live traffic goes
 * through the same limiter, never over the limit in any window, with ready bounded (real Redis).
 */
import type Redis from 'ioredis';
import { RedisQueue } from '../../src/redis/redis-queue';
import { RedisStore } from '../../src/redis/redis-store';
import type { LimiterSpec } from '../../src/types';
import { startRedis, type RedisServer } from '../helpers/redis-server';
import { WEIGHTED_BACKLOG_PLAN, admitLiveWith, maxInWindow, runDrain, type DrainTarget } from './drain-harness';
import { checkDrain } from './drain-checks';
import { SPEC_DEFAULTS } from '../helpers/spec';

let server: RedisServer;
let client: Redis;

beforeAll(async () => {
  server = await startRedis();
  client = server.client();
});
afterAll(async () => {
  await server.stop();
});

test('backlog drains 1:1:2:1:1 with live traffic, ≤ limit per window, ready ≤ readyMax, counts add up', async () => {
  const clock = { now: 1_700_000_000_000 };
  const spec: LimiterSpec = {
    ...SPEC_DEFAULTS,
    name: `drain-${process.pid}`,
    limit: 1000,
    windowMs: 1000,
    burst: 50,
    reserve: 10,
    idleMs: 60_000,
    epochMs: 250,
    sustained: false,
  };
  const queue = new RedisQueue({ client, spec, clock: () => clock.now });
  const limiter = new RedisStore({ client, clock: () => clock.now }).bind(spec);
  const target: DrainTarget = {
    enqueue: async (group, weight) => {
      const r = await queue.enqueue({ group, weight, cost: 1, type: 't', payload: '{}', maxBacklog: 100_000, delayMs: 0, maxDeferMs: 1000 });
      if (r.status !== 'written') throw new Error(r.status);
    },
    dispatch: (o) => queue.dispatch(o),
    queue,
    admitLive: admitLiveWith(limiter),
    counts: () => queue.counts(),
  };
  const plan = WEIGHTED_BACKLOG_PLAN;
  const report = await runDrain(target, plan, clock);
  checkDrain(report, plan, 1000);
  expect(await queue.counts()).toEqual({ delayed: 0, pending: 0, ready: 0, active: 0, completed: 0, dead: 0, oldestWaitingMs: 0 });
  expect(maxInWindow(report.admittedAt, 1000)).toBeLessThanOrEqual(1000);
  await queue.close();
}, 120_000);
