import { createLimiter } from '../../src/limiter';
import { StoreError } from '../../src/errors';
import { isDegraded, withTimeout } from '../../src/outage';
import type { StoreErrorPolicy } from '../../src/options';
import { FaultStore } from './fault-store';

let seq = 0;
function make(policy: StoreErrorPolicy, extra: Record<string, unknown> = {}) {
  const store = new FaultStore();
  const lines: string[] = [];
  const limiter = createLimiter({
    store, name: `outage-${++seq}`, limit: 10, burst: 10, windowMs: 1000, onStoreError: policy, timeoutMs: 40,
    logger: { warn: (m: string) => { lines.push(m); } }, ...extra,
  });
  return { store, limiter, lines };
}

describe('withTimeout', () => {
  test('rejects with StoreError ERR_BL_STORE_TIMEOUT when the promise never settles', async () => {
    await expect(withTimeout(new Promise(() => {}), 20)).rejects.toMatchObject({ code: 'ERR_BL_STORE_TIMEOUT', constructor: StoreError });
  });
  test('passes values and errors through', async () => {
    await expect(withTimeout(Promise.resolve(7), 1000)).resolves.toBe(7);
    const boom = new Error('boom');
    await expect(withTimeout(Promise.reject(boom), 1000)).rejects.toBe(boom);
  });
});

describe("onStoreError 'allow'", () => {
  test('a throwing store lets requests through, logs once, recovers when the store answers', async () => {
    const { store, limiter, lines } = make('allow');
    store.mode = 'throw';
    for (let i = 0; i < 5; i++) {
      const d = await limiter.check('a');
      expect(d.allowed).toBe(true);
      expect(isDegraded(d)).toBe(true);
    }
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^WRN_BL_STORE_FAIL_OPEN.*ECONNREFUSED/);
    store.mode = 'ok';
    const d = await limiter.check('a');
    expect(isDegraded(d)).toBe(false);
    expect(d.remaining).toBe(9);
    expect(lines[1]).toMatch(/^WRN_BL_STORE_RECOVERED/);
    // A second outage is logged again, once.
    store.mode = 'throw';
    await limiter.check('a');
    await limiter.check('a');
    expect(lines.filter((l) => l.startsWith('WRN_BL_STORE_FAIL_OPEN'))).toHaveLength(2);
  });
});

describe("onStoreError 'deny'", () => {
  test('a hanging store times out after timeoutMs into a store-error denial', async () => {
    const { store, limiter, lines } = make('deny');
    store.mode = 'hang';
    const started = Date.now();
    const d = await limiter.check('a');
    expect(Date.now() - started).toBeGreaterThanOrEqual(35);
    expect(d).toMatchObject({ allowed: false, reason: 'store-error', colour: 'red' });
    expect(d.retryAfterMs).toBeGreaterThan(0);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^WRN_BL_STORE_FAIL_CLOSED.*did not answer within 40 ms/);
  });

  test('while failing, only one call at a time probes the store; the rest answer at once', async () => {
    const { store, limiter } = make('deny');
    store.mode = 'hang';
    await limiter.check('a');
    const before = store.calls.length;
    const started = Date.now();
    const decisions = await Promise.all(Array.from({ length: 20 }, () => limiter.check('a')));
    expect(decisions.every((d) => d.reason === 'store-error')).toBe(true);
    expect(store.calls.length - before).toBe(1);
    // Generous bound: twenty requests do not each wait timeoutMs (that would be 800 ms in sequence).
    expect(Date.now() - started).toBeLessThan(400);
  });
});

describe("onStoreError 'local'", () => {
  test('an in-process limiter admits limit / instances per window, then denies with a retry time', async () => {
    const { store, limiter, lines } = make('local', { instances: 2 });
    store.mode = 'throw';
    const decisions = [];
    for (let i = 0; i < 7; i++) decisions.push(await limiter.check(`g${i % 3}`));
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, true, true, false, false]);
    expect(decisions[4]).toMatchObject({ limit: 5, remaining: 0 });
    expect(decisions[5]).toMatchObject({ reason: 'limit' });
    expect(decisions[5]!.retryAfterMs).toBeGreaterThan(0);
    expect(decisions[5]!.retryAfterMs).toBeLessThanOrEqual(1000);
    expect(isDegraded(decisions[0]!)).toBe(false);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^WRN_BL_STORE_FAIL_LOCAL/);
  });

  test('cost counts against the local budget', async () => {
    const { store, limiter } = make('local');
    store.mode = 'throw';
    expect((await limiter.check('a', { cost: 8 })).allowed).toBe(true);
    expect((await limiter.check('a', { cost: 3 })).allowed).toBe(false);
    expect((await limiter.check('a', { cost: 2 })).allowed).toBe(true);
  });

  test('a store that answers again takes over from the local limiter', async () => {
    const { store, limiter } = make('local');
    store.mode = 'throw';
    for (let i = 0; i < 12; i++) await limiter.check('a');
    store.mode = 'ok';
    const d = await limiter.check('a');
    expect(d).toMatchObject({ allowed: true, remaining: 9 });
  });
});
