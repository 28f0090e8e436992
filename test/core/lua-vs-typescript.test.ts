/**
 * Differential: the Lua core (RedisStore) and its TypeScript port (MemoryStore) fed the same arrivals on
 * the same clock return the very same decisions, field for field.
 */
import fc from 'fast-check';
import { MemoryStore } from '../../src/memory/memory-store';
import { RedisStore } from '../../src/redis/redis-store';
import { startRedis, type RedisServer } from '../helpers/redis-server';
import { ManualClock } from '../conformance/store-suite';
import { arrivalsArb, specArb } from './arbitraries';

let server: RedisServer;
beforeAll(async () => {
  server = await startRedis();
});
afterAll(async () => {
  await server.stop();
});

let seq = 0;
test('same arrivals, same clock: identical decisions', async () => {
  const client = server.client();
  await fc.assert(
    // idleMs ≥ 2 s: Redis expires the keys on real time (TTL idleMs + windowMs + epochMs), and a loaded machine
    // took longer than a short TTL between two refreshes; expiry on the test clock is the oracle's (test/oracle/).
    fc.asyncProperty(
      specArb
        .map((s) => ({ ...s, idleMs: Math.max(s.idleMs, 2000) }))
        .chain((s) => fc.tuple(fc.constant(s), arrivalsArb(s.burst, 200), fc.boolean())),
      async ([s, arrivals, sustained]) => {
        const clock = new ManualClock();
        const spec = { ...s, sustained, name: `diff-${process.pid}-${++seq}` };
        const lua = new RedisStore({ client, clock: clock.now }).bind(spec);
        const ts = new MemoryStore({ clock: clock.now }).bind(spec);
        for (const a of arrivals) {
          // now and then a step back in time, which both must ignore the same way
          // (gaps stay below idleMs: Redis expires keys on real time, the memory store on this clock)
          clock.advance(a.dtMs === 1 ? -7 : Math.min(a.dtMs, s.idleMs));
          const input = { group: `g${a.group}`, weight: a.weight, cost: a.cost };
          expect(await lua.admit(input)).toEqual(await ts.admit(input));
        }
        await lua.destroy();
      },
    ),
    { numRuns: 60 },
  );
}, 120_000);

test('same decisions through trimming pages, reservations of costly requests and their lapse', async () => {
  const client = server.client();
  const clock = new ManualClock();
  const spec = {
    name: `diff-det-${process.pid}`,
    limit: 200,
    windowMs: 1000,
    burst: 20,
    reserve: 4,
    idleMs: 500,
    epochMs: 100,
    sustained: false,
    maxGroups: 400,
    probationMs: 0,
    concurrencyLeaseMs: 60_000,
  };
  const lua = new RedisStore({ client, clock: clock.now }).bind(spec);
  const ts = new MemoryStore({ clock: clock.now }).bind(spec);
  const same = async (group: string, cost = 1, weight = 1) => {
    const input = { group, weight, cost };
    const d = await lua.admit(input);
    expect(d).toEqual(await ts.admit(input));
    return d;
  };
  let reserved = 0;
  for (let round = 0; round < 3; round++) {
    for (let i = 0; i < 250; i++) await same(`r${round}-${i}`); // more than two trim pages go idle together
    clock.advance(700);
    for (let t = 0; t < 300; t++) {
      // a flood of cost 1 next to a costly group, then the costly group leaves
      for (let f = 0; f < 3; f++) await same(`f${f}`);
      if (t < 200 && t % 7 === 0 && !(await same('k', 8)).allowed) reserved += 1;
      clock.advance(t % 50 === 0 ? 40 : 1);
    }
  }
  expect(reserved).toBeGreaterThan(0);
  await lua.destroy();
}, 60_000);
