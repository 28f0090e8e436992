/**
 * The limiter's part of plans: a check's plan (its own, or the limiter's `defaultPlan`) gives the weight the
 * store gets, unless the check passes its own; the store gets the plan's name for its rules; a name that is not
 * a plan is the server's mistake (ConfigError ERR_BL_UNKNOWN_PLAN), never an InputError the middleware answers 400.
 */
import { ConfigError } from '../../src/errors';
import { createLimiter, type LimiterOptions } from '../../src/limiter/limiter';
import type { EnqueueInput } from '../../src/types';
import { MemoryStore } from '../../src/memory/memory-store';
import type { Store } from '../../src/types';
import { FaultStore } from './fault-store';

let seq = 0;
const make = (extra: Partial<LimiterOptions> = {}) => {
  const store = new FaultStore();
  const limiter = createLimiter({
    store,
    name: `plans-${++seq}`,
    limit: 100,
    windowMs: 1000,
    plans: { free: { weight: 1 }, pro: { weight: 5, concurrency: 3 }, bare: {} },
    ...extra,
  });
  return { store, limiter };
};

test("a check's plan gives the store its weight, its concurrency cap and its name; a check's own weight and cap win", async () => {
  const { store, limiter } = make();
  await limiter.check('a', { plan: 'pro' });
  await limiter.check('b', { plan: 'pro', weight: 2 });
  await limiter.check('c', { plan: 'bare' });
  await limiter.check('d');
  await limiter.check('e', { plan: 'pro', concurrency: 7 });
  await limiter.check('f', { plan: 'pro', concurrency: 0 });
  expect(store.calls).toEqual([
    { group: 'a', weight: 5, cost: 1, plan: 'pro', concurrency: 3 },
    { group: 'b', weight: 2, cost: 1, plan: 'pro', concurrency: 3 },
    { group: 'c', weight: 1, cost: 1, plan: 'bare' },
    { group: 'd', weight: 1, cost: 1 },
    { group: 'e', weight: 5, cost: 1, plan: 'pro', concurrency: 7 },
    { group: 'f', weight: 5, cost: 1, plan: 'pro' },
  ]);
  await limiter.close();
});

test('a check without a plan gets the defaultPlan; deferring checks carry the plan too', async () => {
  const { store, limiter } = make({ defaultPlan: 'pro', limit: 1, tuning: { burst: 1, reserve: 0 } });
  await limiter.check('a');
  await limiter.check('a', { plan: 'free' });
  await limiter.check('a', { defer: { type: 'report' } });
  expect(store.calls.map((c) => [c.weight, c.plan])).toEqual([
    [5, 'pro'],
    [1, 'free'],
    // the deferring check goes first without its payload, then (denied) again with it
    [5, 'pro'],
    [5, 'pro'],
  ]);
  expect(store.calls[3]!.defer).toBeDefined();
  await limiter.close();
});

test("work put on the queue directly has no plan: the defaultPlan's weight, unless the options give one", async () => {
  const enqueued: EnqueueInput[] = [];
  const spying: Store = {
    bind(spec) {
      const inner = new MemoryStore().bind(spec);
      const enqueue = inner.queue.enqueue.bind(inner.queue);
      inner.queue.enqueue = (input: EnqueueInput) => (enqueued.push(input), enqueue(input));
      return inner;
    },
  };
  const limiter = createLimiter({ store: spying, name: `plans-${++seq}`, limit: 10, plans: { pro: { weight: 5 } }, defaultPlan: 'pro' });
  await limiter.enqueue('b', { type: 'report' });
  await limiter.enqueue('c', { type: 'report', weight: 2 });
  expect(enqueued.map((e) => e.weight)).toEqual([5, 2]);
  await limiter.close();
});

test.each<[string, Partial<LimiterOptions>, unknown]>([
  ['a name that is not a plan', {}, 'gold'],
  ['a name on a limiter without plans', { plans: undefined }, 'pro'],
  ['a number', {}, 3],
  ['an inherited property name', {}, 'constructor'],
])('%s rejects with ConfigError ERR_BL_UNKNOWN_PLAN and reaches no store', async (_title, extra, plan) => {
  const { store, limiter } = make(extra);
  const error = await limiter.check('a', { plan: plan as string }).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(ConfigError);
  expect(error).toMatchObject({ code: 'ERR_BL_UNKNOWN_PLAN' });
  expect((error as Error).message).toContain(typeof plan === 'string' ? JSON.stringify(plan) : String(plan));
  expect(store.calls).toEqual([]);
  await limiter.close();
});

test("the deny cache answers a group's checks of the plan it was denied under, not of another plan", async () => {
  const sliding = (limit: number) => [{ name: 'second', limit, windowMs: 1000, algorithm: 'sliding-window' as const }];
  const { store, limiter } = make({
    tuning: { denyCache: { sampleRate: 0 } },
    plans: { free: { rules: sliding(1) }, pro: { rules: sliding(10) } },
  });
  expect((await limiter.check('g', { plan: 'free' })).allowed).toBe(true);
  expect(await limiter.check('g', { plan: 'free' })).toMatchObject({ allowed: false, policy: 'second' });
  // cached: answered in this process
  expect((await limiter.check('g', { plan: 'free' })).allowed).toBe(false);
  expect(store.calls).toHaveLength(2);
  // upgraded: the store decides under pro's rules
  expect((await limiter.check('g', { plan: 'pro' })).allowed).toBe(true);
  expect(store.calls).toHaveLength(3);
  await limiter.close();
});
