/**
 * limiter.peek and limiter.reset: group ids and options validated as check() validates them, and a store
 * failure rejected with a StoreError whatever the onStoreError policy (they are not admissions). The
 * semantics on each store are in test/conformance/peek-reset-suite.ts.
 */
import { createLimiter } from '../../src/limiter/limiter';
import { ConfigError, InputError, StoreError } from '../../src/errors';
import type { StoreErrorPolicy } from '../../src/limiter/options';
import { MemoryStore } from '../../src/memory/memory-store';
import { FaultStore } from './fault-store';

let seq = 0;
const memoryLimiter = () =>
  createLimiter({ store: new MemoryStore(), name: `peek-${++seq}`, limit: 10, tuning: { burst: 10, probationMs: 0 }, windowMs: 1000 });

describe('peek and reset check their input as check() does', () => {
  const limiter = memoryLimiter();
  test.each([
    ['', 'ERR_BL_GROUP_EMPTY'],
    ['\ud800', 'ERR_BL_GROUP_MALFORMED'],
    ['*overflow*', 'ERR_BL_GROUP_RESERVED'],
    ['*new*', 'ERR_BL_GROUP_RESERVED'],
    ['x'.repeat(1000), 'ERR_BL_GROUP_TOO_LONG'],
    [42, 'ERR_BL_BAD_GROUP'],
  ])('group %j: %s', async (group, code) => {
    await expect(limiter.peek(group as string)).rejects.toMatchObject({ code, constructor: InputError });
    await expect(limiter.reset(group as string)).rejects.toMatchObject({ code, constructor: InputError });
    await expect(limiter.check(group as string)).rejects.toMatchObject({ code });
  });

  test('options: weight within 1 … maxWeight, no unknown option', async () => {
    await expect(limiter.peek('a', { weight: 0 })).rejects.toMatchObject({ code: 'ERR_BL_BAD_WEIGHT', constructor: InputError });
    await expect(limiter.peek('a', { cost: 2 } as never)).rejects.toMatchObject({ code: 'ERR_BL_UNKNOWN_OPTION', constructor: ConfigError });
  });

  test("peek answers the group's state; reset forgets it", async () => {
    await limiter.check('a', { weight: 2 });
    expect(await limiter.peek('a', { weight: 2 })).toMatchObject({ group: 'a', allowed: true, remaining: 9, activeGroups: 1 });
    expect(await limiter.reset('a')).toBe(true);
    expect(await limiter.reset('a')).toBe(false);
    // the group's own quota is whole again; the unit it spent stays spent in the global limit
    expect(await limiter.peek('a')).toMatchObject({ remaining: 9, activeGroups: 1, guaranteed: 10 });
  });
});

test("reset forgets the group's denial in this process's deny cache too", async () => {
  const limiter = createLimiter({
    store: new MemoryStore(),
    name: `peek-deny-${++seq}`,
    limit: 100,
    tuning: { burst: 100, reserve: 10, probationMs: 0, denyCache: { hold: 'retry', sampleRate: 0 } },
    windowMs: 60_000,
  });
  await limiter.check('b');
  let denied = 0;
  for (let i = 0; i < 200 && denied < 3; i++) if (!(await limiter.check('a')).allowed) denied += 1;
  expect(denied).toBe(3); // the later denials came from the cache
  expect(await limiter.reset('a')).toBe(true);
  expect(await limiter.check('a')).toMatchObject({ allowed: true });
  await limiter.close();
});

describe('a failing store: peek and reset reject with StoreError, whatever onStoreError says', () => {
  const make = (policy: StoreErrorPolicy) => {
    const store = new FaultStore();
    const limiter = createLimiter({
      store,
      name: `peek-fault-${++seq}`,
      limit: 10,
      windowMs: 1000,
      onStoreError: policy,
      timeoutMs: 40,
      logger: { warn: () => {} },
    });
    return { store, limiter };
  };

  test.each(['allow', 'deny', 'local'] as const)("onStoreError '%s': a throwing or hanging store", async (policy) => {
    const { store, limiter } = make(policy);
    store.mode = 'throw';
    await expect(limiter.peek('a')).rejects.toMatchObject({ code: 'ERR_BL_STORE_FAILED', constructor: StoreError });
    // the breaker is open: rejected at once, without calling the store
    const calls = store.calls.length;
    await expect(limiter.reset('a')).rejects.toBeInstanceOf(StoreError);
    expect(store.calls.length).toBe(calls);
    // the policy still answers checks
    expect((await limiter.check('a')).reason === 'store-error' || policy !== 'deny').toBe(true);
    await limiter.close();
  });

  test('a hanging store: rejected with ERR_BL_STORE_TIMEOUT after timeoutMs', async () => {
    const { store, limiter } = make('allow');
    store.mode = 'hang';
    await expect(limiter.reset('a')).rejects.toMatchObject({ code: 'ERR_BL_STORE_TIMEOUT', constructor: StoreError });
    await limiter.close();
  });

  test('once the store answers again (a probe closed the breaker), peek and reset reach it', async () => {
    const { store, limiter } = make('allow');
    store.mode = 'throw';
    await expect(limiter.peek('a')).rejects.toBeInstanceOf(StoreError);
    store.mode = 'ok';
    await new Promise<void>((resolve) => limiter.on('recovered', () => resolve()));
    await expect(limiter.peek('a')).resolves.toMatchObject({ group: 'a', allowed: true });
    await expect(limiter.reset('a')).resolves.toBe(false);
    await limiter.close();
  });
});
