/**
 * The RedisStore's batching (src/redis/script-batcher.ts, lua/admit-many.lua, lua/admit-defer-many.lua): checks
 * made in one event-loop turn share one script call and get exactly the decisions that many separate calls at
 * that instant would give, deferred jobs included.
 * Commands are counted on the client's way out (sendCommand), against a real Redis.
 */
import fc from 'fast-check';
import type Redis from 'ioredis';
import { resolvePlans } from '../../src/limiter/plan-options';
import { resolveRules } from '../../src/limiter/rule-options';
import { RedisStore } from '../../src/redis/redis-store';
import type { Decision, LimiterSpec, LimiterStore } from '../../src/types';
import { ManualClock } from '../conformance/store-suite';
import { startRedis, type RedisServer } from '../helpers/redis-server';
import { SPEC_DEFAULTS } from '../helpers/spec';

let server: RedisServer;
let client: Redis;
/** Script calls this client sent, by command name (evalsha / eval). */
let scriptCalls = 0;
beforeAll(async () => {
  server = await startRedis();
  client = server.client();
  const send = client.sendCommand.bind(client);
  client.sendCommand = ((command: { name: string }, ...rest: unknown[]) => {
    if (command.name === 'evalsha' || command.name === 'eval') scriptCalls++;
    return (send as (...args: unknown[]) => unknown)(command, ...rest);
  }) as typeof client.sendCommand;
  // Load every script now (a first EVALSHA fails with NOSCRIPT and is sent again as EVAL).
  const warm = bind(new ManualClock(), 64, spec());
  const deferring = { group: 'w', weight: 1, cost: 1, defer: { type: 't', payload: '{}', maxBacklog: 10, maxDeferMs: 60_000 } };
  await Promise.all([warm.admit({ group: 'w', weight: 1, cost: 1 }), warm.admit({ group: 'w', weight: 1, cost: 1 })]);
  await warm.admit({ group: 'w', weight: 1, cost: 1 });
  await Promise.all([warm.admit(deferring), warm.admit(deferring)]);
  await warm.admit(deferring);
  await warm.destroy();
});
afterAll(async () => {
  await server.stop();
});

let seq = 0;
const spec = (over: Partial<LimiterSpec> = {}): LimiterSpec => ({
  ...SPEC_DEFAULTS,
  name: `b-${process.pid}-${++seq}`,
  limit: 100,
  windowMs: 1000,
  burst: 10,
  reserve: 2,
  idleMs: 60_000,
  epochMs: 250,
  sustained: false,
  ...over,
});
type Check = Parameters<LimiterStore['admit']>[0];
const bind = (clock: ManualClock, maxBatch: number, s: LimiterSpec): LimiterStore =>
  new RedisStore({ client, prefix: 'batch', clock: clock.now, maxBatch }).bind(s);

/** The same checks one call at a time, each awaited: the reference the batched decisions must equal. */
async function oneByOne(store: LimiterStore, checks: readonly Check[]): Promise<Decision[]> {
  const out: Decision[] = [];
  for (const c of checks) out.push(await store.admit(c));
  return out;
}

test('checks made in one turn share script calls of at most maxBatch, in arrival order', async () => {
  const clock = new ManualClock();
  const s = spec();
  const batched = bind(clock, 64, s);
  const checks = Array.from({ length: 100 }, (_, i) => ({ group: `g${i % 3}`, weight: 1 + (i % 2), cost: 1 }));
  const before = scriptCalls;
  const decisions = await Promise.all(checks.map((c) => batched.admit(c)));
  expect(scriptCalls - before).toBe(2); // 64 + 36
  const twin = bind(new ManualClock(), 1, { ...s, name: `${s.name}-twin` });
  expect(decisions).toEqual(await oneByOne(twin, checks));
  expect(decisions.filter((d) => d.allowed)).toHaveLength(s.burst); // a frozen clock: the burst and no more
  await batched.destroy();
  await twin.destroy();
});

test("with plans, a turn's checks go in one call per plan rule set, each decided as its own call would be, the lanes in order of their first check", async () => {
  const clock = new ManualClock();
  const rule = (limit: number) => [{ name: 'second', limit, windowMs: 1000, algorithm: 'sliding-window' as const }];
  const limiterRules = resolveRules(rule(3));
  const s = spec({
    limit: 1000,
    burst: 500,
    rules: limiterRules,
    // 'same' has the limiter's rules: it shares the limiter's call
    plans: resolvePlans({ free: { rules: rule(2) }, pro: { rules: rule(5) }, same: { weight: 2 } }, limiterRules, 1000),
  });
  const batched = bind(clock, 64, s);
  const plans = ['free', undefined, 'pro', 'same', 'free', 'pro'];
  const checks: Check[] = Array.from({ length: 30 }, (_, i) => {
    const plan = plans[i % plans.length];
    return { group: `g${i % 4}`, weight: 1, cost: 1, ...(plan === undefined ? {} : { plan }) };
  });
  const before = scriptCalls;
  const decisions = await Promise.all(checks.map((c) => batched.admit(c)));
  expect(scriptCalls - before).toBe(3); // free; the limiter's and same; pro
  const lane = (c: Check): number => (c.plan === 'free' ? 0 : c.plan === 'pro' ? 2 : 1);
  const order = checks.map((c, i) => [lane(c), i] as const).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const twin = bind(new ManualClock(), 1, { ...s, name: `${s.name}-twin` });
  const alone = await oneByOne(
    twin,
    order.map(([, i]) => checks[i]!),
  );
  expect(order.map(([, i]) => decisions[i])).toEqual(alone);
  expect(decisions.map((d) => d.rules![0]!.limit)).toEqual(checks.map((c) => (c.plan === 'free' ? 2 : c.plan === 'pro' ? 5 : 3)));
  await batched.destroy();
  await twin.destroy();
});

test('batched decisions equal one call per check at the same instant (any groups, weights, costs)', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(
        fc.record({ group: fc.constantFrom('a', 'b', 'c', 'd'), weight: fc.integer({ min: 1, max: 3 }), cost: fc.integer({ min: 1, max: 3 }) }),
        { minLength: 1, maxLength: 90 },
      ),
      fc.integer({ min: 2, max: 40 }),
      async (checks, maxBatch) => {
        const s = spec({ burst: 12, reserve: 2 });
        const batched = bind(new ManualClock(), maxBatch, s);
        const single = bind(new ManualClock(), 1, { ...s, name: `${s.name}-one` });
        const decisions = await Promise.all(checks.map((c) => batched.admit(c)));
        expect(decisions).toEqual(await oneByOne(single, checks));
        await batched.destroy();
        await single.destroy();
      },
    ),
    { numRuns: 40 },
  );
});

test('deferring checks batch too: same decisions, jobs, ids and duplicates as one call each', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(
        fc.record({
          group: fc.constantFrom('a', 'b', 'c'),
          weight: fc.integer({ min: 1, max: 2 }),
          cost: fc.integer({ min: 1, max: 2 }),
          key: fc.option(fc.constantFrom('k1', 'k2', 'k3'), { nil: undefined }),
          maxBacklog: fc.integer({ min: 1, max: 6 }),
          maxDeferMs: fc.constantFrom(50, 60_000),
        }),
        { minLength: 1, maxLength: 60 },
      ),
      fc.integer({ min: 2, max: 40 }),
      async (rows, maxBatch) => {
        const checks = rows.map((r, i) => ({
          group: r.group,
          weight: r.weight,
          cost: r.cost,
          defer: {
            type: 't',
            payload: JSON.stringify({ i }),
            maxBacklog: r.maxBacklog,
            maxDeferMs: r.maxDeferMs,
            ...(r.key ? { idempotencyKey: r.key } : {}),
          },
        }));
        const s = spec({ limit: 20, burst: 4, reserve: 1 });
        const batched = bind(new ManualClock(), maxBatch, s);
        const single = bind(new ManualClock(), 1, { ...s, name: `${s.name}-one` });
        const before = scriptCalls;
        const decisions = await Promise.all(checks.map((c) => batched.admit(c)));
        expect(scriptCalls - before).toBe(Math.ceil(checks.length / maxBatch));
        expect(decisions).toEqual(await oneByOne(single, checks));
        expect(await batched.queue.counts()).toEqual(await single.queue.counts());
        await batched.destroy();
        await single.destroy();
      },
    ),
    { numRuns: 30 },
  );
});

test('with more than a trim page of groups idle, a batch trims page by page as that many single calls would', async () => {
  for (const defer of [undefined, { type: 't', payload: '{}', maxBacklog: 10, maxDeferMs: 60_000 }]) {
    const s = spec({ limit: 25, burst: 1, reserve: 0, idleMs: 1000 });
    const clock = new ManualClock();
    const batched = bind(clock, 64, s);
    const single = bind(clock, 1, { ...s, name: `${s.name}-one` });
    for (const store of [batched, single]) {
      for (let i = 0; i < 203; i++) await store.admit({ group: `c${i}`, weight: 1 + (i % 3), cost: 1 }); // two pages and more
    }
    clock.advance(1500); // all idle: each call at this instant trims one page of 100
    const checks = Array.from({ length: 3 }, () => ({ group: 'g', weight: 1, cost: 1, ...(defer ? { defer } : {}) }));
    const decisions = await Promise.all(checks.map((c) => batched.admit(c)));
    expect(decisions.map((d) => d.activeGroups)).toEqual([104, 4, 1]);
    expect(decisions).toEqual(await oneByOne(single, checks));
    await batched.destroy();
    await single.destroy();
  }
});

test('checks at different (injected) times never share a batch', async () => {
  const clock = new ManualClock();
  const s = spec({ limit: 10, burst: 2, reserve: 0 });
  const batched = bind(clock, 64, s);
  const before = scriptCalls;
  const first = [batched.admit({ group: 'a', weight: 1, cost: 1 }), batched.admit({ group: 'a', weight: 1, cost: 1 })];
  clock.advance(250); // a quarter window: the group's bucket holds more again
  const later = batched.admit({ group: 'a', weight: 1, cost: 1 });
  const decisions = await Promise.all([...first, later]);
  expect(scriptCalls - before).toBe(2);
  expect(decisions.map((d) => d.at - decisions[0]!.at)).toEqual([0, 0, 250]);
  expect(decisions.map((d) => d.allowed)).toEqual([true, true, true]);
  await batched.destroy();
});

test('maxBatch 1 sends every check on its own', async () => {
  const batched = bind(new ManualClock(), 1, spec());
  const before = scriptCalls;
  await Promise.all(Array.from({ length: 5 }, () => batched.admit({ group: 'a', weight: 1, cost: 1 })));
  expect(scriptCalls - before).toBe(5);
  await batched.destroy();
});

test('a batch the script refuses rejects each of its checks with a StoreError', async () => {
  const batched = bind(new ManualClock(), 64, spec());
  // '' never reaches a store through createLimiter (ERR_BL_GROUP_EMPTY); here it fails the script call.
  const results = await Promise.allSettled([batched.admit({ group: 'a', weight: 1, cost: 1 }), batched.admit({ group: '', weight: 1, cost: 1 })]);
  for (const r of results) {
    expect(r.status).toBe('rejected');
    expect((r as PromiseRejectedResult).reason).toMatchObject({ name: 'StoreError', code: 'ERR_BL_STORE_FAILED' });
  }
  expect((await batched.admit({ group: 'a', weight: 1, cost: 1 })).allowed).toBe(true); // nothing was spent
  await batched.destroy();
});

test.each([0, 1.5, 1001, '8', -1])('maxBatch %p fails at construction', (maxBatch) => {
  expect(() => new RedisStore({ client, maxBatch: maxBatch as number })).toThrow(expect.objectContaining({ code: 'ERR_BL_MAX_BATCH' }));
});
