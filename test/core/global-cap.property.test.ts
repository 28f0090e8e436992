/**
 * Property: with an injected clock, random arrivals, costs, weights and groups never admit more than
 * `limit` units in any window of `windowMs` — on both stores (the same Lua and TypeScript core).
 */
import fc from 'fast-check';
import { MemoryStore } from '../../src/memory/memory-store';
import { RedisStore } from '../../src/redis/redis-store';
import type { Store } from '../../src/types';
import { startRedis, type RedisServer } from '../helpers/redis-server';
import { ManualClock, maxInAnyWindow } from '../conformance/store-suite';
import { arrivalsArb, specArb } from './arbitraries';
import { SPEC_DEFAULTS } from '../helpers/spec';
import { resolveClasses } from '../../src/limiter/class-options';

let server: RedisServer;
beforeAll(async () => {
  server = await startRedis();
});
afterAll(async () => {
  await server.stop();
});

let seq = 0;
/** The spec as generated, or (`probation`) with probation on: returning ids graduate within the graduation budget. */
const specsOf = (probation: boolean) =>
  probation ? fc.tuple(specArb, fc.integer({ min: 1, max: 500 })).map(([s, probationMs]) => ({ ...s, probationMs })) : specArb;

/**
 * Priority classes (docs/algorithm.md §2.11): one to three named classes (shares summing to at most 1, 'default'
 * the remainder, 0 when they sum to 1); each arrival's group is in one of them (a group may change class).
 */
const classesArb = fc.array(fc.double({ min: 0.05, max: 1, noNaN: true }), { minLength: 1, maxLength: 3 }).map((raw) => {
  const sum = raw.reduce((a, b) => a + b, 0);
  const scale = sum > 1 ? 1 / sum : 1;
  return resolveClasses(Object.fromEntries(raw.map((x, i) => [`c${i}`, { share: Math.min(1, x * scale * 0.999999) }])))!;
});
const specsWithClasses = fc.tuple(specArb, classesArb).map(([s, classes]) => ({ ...s, classes }));

async function neverOverLimit(makeStore: (clock: ManualClock) => Store, runs: number, probation = false, classes = false) {
  await fc.assert(
    fc.asyncProperty(
      (classes ? specsWithClasses : specsOf(probation)).chain((s) => fc.tuple(fc.constant(s), arrivalsArb(s.burst))),
      async ([s, arrivals]) => {
        const clock = new ManualClock();
        const limiter = makeStore(clock).bind({ ...s, name: `prop-${process.pid}-${++seq}` });
        const admitted: Array<{ at: number; cost: number }> = [];
        const names = s.classes ? [...s.classes.keys()] : [];
        for (const a of arrivals) {
          clock.advance(a.dtMs);
          const input = { group: `g${a.group}`, weight: a.weight, cost: a.cost };
          const d = await limiter.admit(names.length > 0 ? { ...input, class: names[(a.group + a.cost) % names.length]! } : input);
          if (d.allowed) admitted.push({ at: d.at, cost: a.cost });
        }
        await limiter.destroy();
        expect(maxInAnyWindow(admitted, s.windowMs)).toBeLessThanOrEqual(s.limit);
      },
    ),
    { numRuns: runs },
  );
}

test('MemoryStore never admits more than limit in any window', async () => {
  await neverOverLimit((clock) => new MemoryStore({ clock: clock.now }), 300);
});

test('RedisStore never admits more than limit in any window', async () => {
  const client = server.client();
  await neverOverLimit((clock) => new RedisStore({ client, clock: clock.now }), 150);
}, 120_000);

test('with probation (fresh and returning ids, the graduation budget) and every floor: MemoryStore never admits more than limit in any window', async () => {
  await neverOverLimit((clock) => new MemoryStore({ clock: clock.now }), 200, true);
});

test('with probation: RedisStore never admits more than limit in any window', async () => {
  const client = server.client();
  await neverOverLimit((clock) => new RedisStore({ client, clock: clock.now }), 60, true);
}, 120_000);

test('with priority classes (every lane, lending, class meters): MemoryStore never admits more than limit in any window', async () => {
  await neverOverLimit((clock) => new MemoryStore({ clock: clock.now }), 200, false, true);
});

test('with priority classes: RedisStore never admits more than limit in any window', async () => {
  const client = server.client();
  await neverOverLimit((clock) => new RedisStore({ client, clock: clock.now }), 60, false, true);
}, 120_000);

test('the check can fail: a sustained-mode limiter with a big burst does go over limit', async () => {
  const clock = new ManualClock();
  const limiter = new MemoryStore({ clock: clock.now }).bind({
    ...SPEC_DEFAULTS,
    name: 'x',
    limit: 10,
    windowMs: 1000,
    burst: 10,
    reserve: 0,
    idleMs: 5000,
    epochMs: 250,
    sustained: true,
  });
  const admitted: Array<{ at: number; cost: number }> = [];
  for (let i = 0; i < 200; i++) {
    const d = await limiter.admit({ group: 'a', weight: 1, cost: 1 });
    if (d.allowed) admitted.push({ at: d.at, cost: 1 });
    clock.advance(10);
  }
  expect(maxInAnyWindow(admitted, 1000)).toBeGreaterThan(10);
});
