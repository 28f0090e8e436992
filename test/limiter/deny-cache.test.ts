/**
 * The local deny cache: the unit on an injected clock, then a limiter on a real redis-server whose store
 * calls are counted.
 */
import type Redis from 'ioredis';
import { DenyCache } from '../../src/limiter/deny-cache';
import { ConfigError } from '../../src/errors';
import { createLimiter } from '../../src/limiter/limiter';
import { RedisStore } from '../../src/redis/redis-store';
import type { AdmitInput, Decision, LimiterSpec, LimiterStore, Store } from '../../src/types';
import { withScheduler } from '../../src/util/scheduler';
import { ManualScheduler } from '../helpers/manual-scheduler';
import { startRedis, type RedisServer } from '../helpers/redis-server';

const denial = (over: Partial<Decision> = {}): Decision => ({
  allowed: false,
  group: 'flood',
  limit: 500,
  guaranteed: 10,
  remaining: 0,
  retryAfterMs: 150,
  resetMs: 400,
  activeGroups: 3,
  colour: 'red',
  reason: 'limit',
  hintMs: 100,
  at: 1_800_000_000_000,
  ...over,
});

describe('DenyCache', () => {
  let now = 0;
  let dice = 0.5;
  const cache = (maxGroups = 100, sampleRate = 0.05, hold: 'hint' | 'retry' = 'hint') =>
    new DenyCache(
      { maxGroups, sampleRate, hold },
      1000,
      () => now,
      () => dice,
    );
  beforeEach(() => {
    now = 10_000;
    dice = 0.5;
  });

  test('answers a denied group until the store hint, each answer one guaranteed slot later', () => {
    const c = cache();
    c.record('flood', denial(), now);
    now += 10;
    // slot = window / guaranteed = 100 ms; the store promised +150 ms, so the next caller gets +250 ms
    expect(c.lookup('flood', 1)).toMatchObject({
      allowed: false,
      reason: 'limit',
      retryAfterMs: 240,
      hintMs: 90,
      remaining: 0,
      at: 1_800_000_000_010,
      resetMs: 390,
    });
    expect(c.lookup('flood', 1)?.retryAfterMs).toBe(340);
    expect(c.lookup('flood', 3)?.retryAfterMs).toBe(640); // cost 3 takes three slots
    expect(c.lookup('other', 1)).toBeUndefined();
    now += 90;
    expect(c.lookup('flood', 1)).toBeUndefined(); // the hint has passed: the store decides again
    expect(c.size).toBe(0);
  });

  test('an empty global bucket denies every remembered group until it refills, even past their hints', () => {
    const c = cache();
    c.record('a', denial({ hintMs: 0, retryAfterMs: 40, globalWaitMs: 30 }), now);
    c.record('b', denial({ hintMs: 5, retryAfterMs: 40, globalWaitMs: 0 }), now - 10); // sent earlier
    now += 10;
    expect(c.lookup('a', 1)).toMatchObject({ allowed: false, hintMs: 20, globalWaitMs: 20 });
    expect(c.lookup('b', 1)).toMatchObject({ allowed: false, hintMs: 20 }); // its own hint has passed
    expect(c.lookup('c', 1)).toBeUndefined(); // never denied here: the store decides
    now += 20;
    expect(c.lookup('a', 1)).toBeUndefined();
    expect(c.lookup('b', 1)).toBeUndefined();
  });

  test("hold 'retry' answers until the store's retry time, past the hint", () => {
    const hint = cache();
    const retry = cache(100, 0.05, 'retry');
    for (const c of [hint, retry]) c.record('flood', denial({ hintMs: 2, retryAfterMs: 40, globalWaitMs: 0 }), now);
    now += 10;
    expect(hint.lookup('flood', 1)).toBeUndefined(); // past the hint: the store decides
    expect(retry.lookup('flood', 1)).toMatchObject({ allowed: false, reason: 'limit', hintMs: 30 });
    now += 30;
    expect(retry.lookup('flood', 1)).toBeUndefined(); // the retry time has come: the store decides
  });

  test('durations count from when the call was sent, not when the answer came', () => {
    const c = cache();
    c.record('a', denial({ hintMs: 30 }), now - 25); // a slow round trip
    expect(c.lookup('a', 1)?.hintMs).toBe(5);
    now += 5;
    expect(c.lookup('a', 1)).toBeUndefined();
  });

  test('slots never run more than a window past the first one', () => {
    const c = cache();
    c.record('flood', denial({ guaranteed: 1 }), now); // slot = 1000 ms
    expect(c.lookup('flood', 1)?.retryAfterMs).toBe(1150);
    expect(c.lookup('flood', 1)?.retryAfterMs).toBe(150); // past first + window: from the front again
  });

  test('a sample of the calls still goes to the store', () => {
    const c = cache(100, 0.05);
    c.record('flood', denial(), now);
    dice = 0.04;
    expect(c.lookup('flood', 1)).toBeUndefined();
    dice = 0.05;
    expect(c.lookup('flood', 1)).toBeDefined();
  });

  test.each([
    ['an admission', denial({ allowed: true, reason: undefined })],
    ['a store outage', denial({ reason: 'store-error' })],
    ['a deferral', denial({ job: { id: 'j', runAt: 1, duplicate: false } })],
    ['a full backlog', denial({ reason: 'backlog-full' })],
    ['a denial without a hint', denial({ hintMs: 0 })],
  ])('does not remember %s', (_label, decision) => {
    const c = cache();
    c.record('flood', decision, now);
    expect(c.lookup('flood', 1)).toBeUndefined();
  });

  test('remembers at most maxGroups: a new group takes the oldest place only once that denial ran out', () => {
    const c = cache(2);
    c.record('a', denial({ hintMs: 100 }), now);
    c.record('b', denial({ hintMs: 50 }), now);
    c.record('a', denial({ hintMs: 100 }), now); // recorded again: now the newest
    c.record('c', denial(), now); // full, and b (the oldest) is still denied: c is not remembered
    expect(c.size).toBe(2);
    expect(c.lookup('c', 1)).toBeUndefined();
    expect(c.lookup('b', 1)).toBeDefined();
    now += 60; // b's denial has run out, a's has not
    c.record('c', denial(), now);
    expect(c.size).toBe(2);
    expect(c.lookup('b', 1)).toBeUndefined();
    expect(c.lookup('a', 1)).toBeDefined();
    expect(c.lookup('c', 1)).toBeDefined();
  });

  test.each([
    [{ tuning: { denyCache: 'yes' } }, /tuning\.denyCache.*got/],
    [{ tuning: { denyCache: { sampleRate: 2 } } }, /tuning\.denyCache\.sampleRate.*got `2`/],
    [{ tuning: { denyCache: { maxGroups: 0 } } }, /tuning\.denyCache\.maxGroups.*got `0`/],
    [{ tuning: { denyCache: { size: 1 } } }, /Unknown option `tuning\.denyCache\.size`/],
    [{ tuning: { denyCache: { hold: 'forever' } } }, /tuning\.denyCache\.hold.*got `'forever'`|denyCache\.hold.*forever/],
  ])('bad option %j fails at construction', (extra, message) => {
    expect(() => createLimiter({ limit: 10, ...(extra as object) })).toThrow(ConfigError);
    expect(() => createLimiter({ limit: 10, ...(extra as object) })).toThrow(message);
  });
});

describe('a limiter with denyCache on Redis', () => {
  let server: RedisServer;
  let client: Redis;
  beforeAll(async () => {
    server = await startRedis();
    client = server.client();
  });
  afterAll(() => server.stop());

  /** RedisStore whose admit calls are counted per group. */
  const countingStore = (inner: Store, calls: Map<string, number>): Store => ({
    bind(spec: LimiterSpec): LimiterStore {
      const bound = inner.bind(spec);
      return new Proxy(bound, {
        get: (target, prop, receiver) => {
          if (prop === 'admit') {
            return (input: AdmitInput) => {
              calls.set(input.group, (calls.get(input.group) ?? 0) + 1);
              return target.admit(input);
            };
          }
          const value: unknown = Reflect.get(target, prop, receiver);
          return typeof value === 'function' ? value.bind(target) : value;
        },
      });
    },
  });

  test('a flood is answered mostly in-process; the limit holds and a light group is still admitted', async () => {
    // The scripts and the cache share one manual clock, 5 ms per round of 51 checks: how much the cache
    // answers no longer depends on how fast this machine runs the rounds.
    const clock = new ManualScheduler();
    const calls = new Map<string, number>();
    const store = countingStore(new RedisStore({ client, prefix: 'flood', clock: () => clock.now() }), calls);
    // 20 per second: the flood's share is used up at once and its hint is tens of ms away.
    // probationMs 0: the two groups are registered at once (on probation they would share one group for 250 ms
    // of this 600 ms run; the cache is what is measured here).
    const options = { store, name: 'deny-cache', limit: 20, windowMs: 1000, tuning: { denyCache: true, probationMs: 0 } };
    const limiter = createLimiter(withScheduler(options, clock));
    let admitted = 0;
    let checks = 0;
    let lightAllowed = 0;
    const startedAt = clock.now();
    while (clock.now() - startedAt < 600) {
      const [light, ...batch] = await Promise.all([limiter.check('light'), ...Array.from({ length: 50 }, () => limiter.check('flood'))]);
      if (light!.allowed) lightAllowed += 1;
      checks += batch.length;
      admitted += batch.filter((d) => d.allowed).length;
      for (const d of batch) if (!d.allowed) expect(d.retryAfterMs).toBeGreaterThan(0);
      await clock.advance(5);
    }
    expect(lightAllowed).toBeGreaterThan(0);
    // At most the burst plus 0.6 s of refill (20/s), whatever the flood sent.
    expect(admitted + lightAllowed).toBeLessThanOrEqual(20 + 13);
    expect(admitted).toBeGreaterThan(0);
    // Most of the flood never reached Redis.
    expect(calls.get('flood')!).toBeLessThan(checks / 4);
    console.log(`deny cache: ${checks} checks of the flood, ${calls.get('flood')} store calls, ${admitted} admitted; light ${lightAllowed} admitted`);
  });

  test("hold 'retry' at a per-second limit: the flood barely reaches Redis, the limit holds, the capacity is still used", async () => {
    // The scripts and the cache on one manual clock, 1 ms per round of 20 checks (as in the flood test).
    const clock = new ManualScheduler();
    const calls = new Map<string, number>();
    const store = countingStore(new RedisStore({ client, prefix: 'retry-hold', clock: () => clock.now() }), calls);
    // 500 per second: the bucket refills every ~2 ms, so the hint alone would send nearly every check to Redis.
    const options = { store, name: 'deny-cache-retry', limit: 500, windowMs: 1000, tuning: { denyCache: { hold: 'retry' as const } } };
    const limiter = createLimiter(withScheduler(options, clock));
    const admittedAt: number[] = [];
    let checks = 0;
    const startedAt = clock.now();
    while (clock.now() - startedAt < 1500) {
      const batch = await Promise.all(Array.from({ length: 20 }, (_, i) => limiter.check(`t${i % 4}`)));
      checks += batch.length;
      for (const d of batch) if (d.allowed) admittedAt.push(d.at);
      await clock.advance(1);
    }
    const storeCalls = [...calls.values()].reduce((a, b) => a + b, 0);
    expect(storeCalls).toBeLessThan(checks / 2);
    // never more than the limit in any window of 1 s (store times)
    admittedAt.sort((a, b) => a - b);
    for (let lo = 0, hi = 0; hi < admittedAt.length; hi++) {
      while (admittedAt[lo]! <= admittedAt[hi]! - 1000) lo++;
      expect(hi - lo + 1).toBeLessThanOrEqual(500);
    }
    // the sampled calls still take what frees up: a good part of the capacity of 1.5 s (a generous bound)
    expect(admittedAt.length).toBeGreaterThan(0.3 * 500 * 1.5);
    console.log(`deny cache (hold retry): ${checks} checks, ${storeCalls} store calls, ${admittedAt.length} admitted in 1.5 s at 500/s`);
  });
});
