/**
 * A deferring check encodes its payload only when a job is written: an allowed request's payload is never
 * serialised. A group denied moments ago goes in one store call (payload included); any other first tries
 * without the payload. Each check reports one decision to observers. Both stores, on an injected clock.
 */
import type Redis from 'ioredis';
import { createLimiter } from '../../src/limiter/limiter';
import { MemoryStore } from '../../src/memory/memory-store';
import { RedisStore } from '../../src/redis/redis-store';
import type { AdmitInput, Decision, LimiterSpec, LimiterStore, Store } from '../../src/types';
import { startRedis, type RedisServer } from '../helpers/redis-server';

let server: RedisServer;
let client: Redis;
beforeAll(async () => {
  server = await startRedis();
  client = server.client();
});
afterAll(async () => server.stop());

const NOW = 1_800_000_000_000;

/** Counts the store's admit calls, and those that carried a job to write. */
function counting(inner: Store): { store: Store; calls: { plain: number; withJob: number } } {
  const calls = { plain: 0, withJob: 0 };
  const store: Store = {
    bind(spec: LimiterSpec): LimiterStore {
      const bound = inner.bind(spec);
      return new Proxy(bound, {
        get: (target, prop, receiver) => {
          if (prop === 'admit') {
            return (input: AdmitInput) => {
              if (input.defer) calls.withJob += 1;
              else calls.plain += 1;
              return target.admit(input);
            };
          }
          const value: unknown = Reflect.get(target, prop, receiver);
          return typeof value === 'function' ? value.bind(target) : value;
        },
      });
    },
  };
  return { store, calls };
}

/** A payload that counts how often JSON encodes it. */
function payload(): { value: { toJSON(): unknown }; encoded: () => number } {
  let n = 0;
  return {
    value: {
      toJSON: () => {
        n += 1;
        return { rows: 3 };
      },
    },
    encoded: () => n,
  };
}

let seq = 0;
describe.each([
  ['MemoryStore', () => new MemoryStore({ clock: () => NOW })],
  ['RedisStore', () => new RedisStore({ client, clock: () => NOW, prefix: 'deferring-check' })],
])('%s', (_label, makeStore) => {
  test("an allowed request's payload is never encoded; a denied one's once, with its job", async () => {
    const { store, calls } = counting(makeStore());
    const limiter = createLimiter({ store, name: `payload-${++seq}`, limit: 2, tuning: { burst: 2, reserve: 1, probationMs: 0 }, windowMs: 60_000 });
    const p = payload();
    const decisions: Decision[] = [];
    for (let i = 0; i < 2; i++) decisions.push(await limiter.check('a', { defer: { type: 'export', payload: p.value } }));
    expect(decisions.map((d) => d.allowed)).toEqual([true, true]);
    expect(p.encoded()).toBe(0);
    expect(calls).toEqual({ plain: 2, withJob: 0 });

    const denied = await limiter.check('a', { defer: { type: 'export', payload: p.value } });
    expect(denied.job).toBeDefined();
    expect(p.encoded()).toBe(1);
    expect(await limiter.getJob(denied.job!.id)).toMatchObject({ payload: { rows: 3 } });
    // Not yet known as denied: first without the payload, then with it.
    expect(calls).toEqual({ plain: 3, withJob: 1 });

    // Denied moments ago: one call, payload included.
    const again = await limiter.check('a', { defer: { type: 'export', payload: p.value } });
    expect(again.job).toBeDefined();
    expect(p.encoded()).toBe(2);
    expect(calls).toEqual({ plain: 3, withJob: 2 });
    await limiter.close();
  });

  test('each deferring check reports one decision to observers', async () => {
    const { store } = counting(makeStore());
    const limiter = createLimiter({ store, name: `observed-${++seq}`, limit: 1, tuning: { burst: 1, reserve: 0, probationMs: 0 }, windowMs: 60_000 });
    const seen: Array<{ allowed: boolean; job: boolean }> = [];
    limiter.observe({ decision: (d) => seen.push({ allowed: d.allowed, job: d.job !== undefined }) });
    for (let i = 0; i < 3; i++) await limiter.check('a', { defer: { type: 'export', payload: { i } } });
    expect(seen).toEqual([
      { allowed: true, job: false },
      { allowed: false, job: true },
      { allowed: false, job: true },
    ]);
    await limiter.close();
  });

  test('an idempotency key goes in one call: a retried request finds its job and does not run now', async () => {
    const { store, calls } = counting(makeStore());
    const limiter = createLimiter({ store, name: `idem-${++seq}`, limit: 1, tuning: { burst: 1, reserve: 0, probationMs: 0 }, windowMs: 60_000 });
    expect((await limiter.check('b')).allowed).toBe(true);
    const first = await limiter.check('a', { defer: { type: 'export', payload: {}, idempotencyKey: 'k1' } });
    expect(first.job).toBeDefined();
    expect(calls).toEqual({ plain: 1, withJob: 1 });
    const retried = await limiter.check('a', { defer: { type: 'export', payload: {}, idempotencyKey: 'k1' } });
    expect(retried).toMatchObject({ allowed: false, job: { id: first.job!.id, duplicate: true } });
    await limiter.close();
  });
});
