/**
 * The drain test on MemoryStore: the same 20 000-job backlog, weights 1:1:2:1:1, live traffic through the
 * same limiter (one shared admission state), injected clock.
 */
import { MemoryStore } from '../../src/memory/memory-store';
import type { LimiterSpec } from '../../src/types';
import { checkDrain } from './drain-checks';
import { WEIGHTED_BACKLOG_PLAN, admitLiveWith, runDrain, type DrainTarget } from './drain-harness';
import { SPEC_DEFAULTS } from '../helpers/spec';

test('backlog drains 1:1:2:1:1 with live traffic, ≤ limit per window, ready ≤ readyMax, counts add up', async () => {
  const clock = { now: 1_700_000_000_000 };
  const spec: LimiterSpec = {
    ...SPEC_DEFAULTS,
    name: 'drain',
    limit: 1000,
    windowMs: 1000,
    burst: 50,
    reserve: 10,
    idleMs: 60_000,
    epochMs: 250,
    sustained: false,
  };
  const store = new MemoryStore({ clock: () => clock.now });
  const limiter = store.bind(spec);
  // Jobs are written straight into the queue the limiter dispatches from (the defer path writes the same records).
  const q = limiter.queue;
  const target: DrainTarget = {
    enqueue: async (group, weight) => {
      const r = await q.enqueue({ group, weight, cost: 1, type: 't', payload: '{}', maxBacklog: 100_000, delayMs: 0, maxDeferMs: 1000 });
      if (r.status !== 'written') throw new Error(r.status);
    },
    dispatch: (o) => q.dispatch(o),
    queue: q,
    admitLive: admitLiveWith(limiter),
    counts: () => q.counts(),
  };
  const plan = WEIGHTED_BACKLOG_PLAN;
  const report = await runDrain(target, plan, clock);
  checkDrain(report, plan, 1000);
  expect(await q.counts()).toEqual({ delayed: 0, pending: 0, ready: 0, active: 0, completed: 0, dead: 0, oldestWaitingMs: 0 });
});
