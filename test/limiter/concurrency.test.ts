/**
 * The limiter's side of request concurrency: options and per-check caps validated, the jittered wait of a
 * request the cap turned away, release as a no-op for decisions without a slot, and the `'local'` fallback
 * taking no slot.
 */
import { createLimiter } from '../../src/limiter/limiter';
import { ConfigError, InputError } from '../../src/errors';
import { MemoryStore } from '../../src/memory/memory-store';
import { CONCURRENCY_SNOOZE_MS } from '../../src/limiter/concurrency-check';
import { withScheduler } from '../../src/util/scheduler';
import { ManualScheduler } from '../helpers/manual-scheduler';
import { FaultStore } from './fault-store';

let seq = 0;
const make = (extra: Record<string, unknown> = {}) =>
  createLimiter({ store: new MemoryStore(), name: `cc-${++seq}`, limit: 1000, windowMs: 1000, ...extra });

test.each([
  ['concurrency', 0, 'ERR_BL_CONCURRENCY'],
  ['concurrency', 1.5, 'ERR_BL_CONCURRENCY'],
  ['concurrency', '3', 'ERR_BL_CONCURRENCY'],
  ['concurrencyLeaseMs', 0, 'ERR_BL_CONCURRENCY_LEASE_MS'],
  ['concurrencyLeaseMs', Infinity, 'ERR_BL_CONCURRENCY_LEASE_MS'],
])('`%s: %p` is a ConfigError %s', (option, value, code) => {
  // concurrencyLeaseMs is a tuning knob
  const options = option === 'concurrency' ? { [option]: value } : { tuning: { [option]: value } };
  expect(() => make(options)).toThrow(expect.objectContaining({ code, constructor: ConfigError }));
});

test('a rule cannot be named "concurrency"', () => {
  expect(() => make({ rules: [{ name: 'concurrency', limit: 5, windowMs: 1000 }] })).toThrow(expect.objectContaining({ code: 'ERR_BL_RULES' }));
});

test.each([-1, 1.5, '2', 1_000_001])('a check with `concurrency: %p` rejects with ERR_BL_BAD_CONCURRENCY', async (value) => {
  await expect(make().check('g', { concurrency: value as number })).rejects.toThrow(
    expect.objectContaining({ code: 'ERR_BL_BAD_CONCURRENCY', constructor: InputError }),
  );
});

test("a check's cap overrides the limiter's, and 0 means none", async () => {
  const limiter = make({ concurrency: 1 });
  expect((await limiter.check('g')).concurrency).toMatchObject({ limit: 1, inFlight: 1 });
  expect((await limiter.check('g')).policy).toBe('concurrency');
  expect((await limiter.check('g', { concurrency: 2 })).allowed).toBe(true);
  const free = await limiter.check('g', { concurrency: 0 });
  expect(free.allowed).toBe(true);
  expect(free.concurrency).toBeUndefined();
  expect(await limiter.release(free)).toBe(false);
});

test('a request the cap turns away waits a jittered snooze (about a second, ±50 %), never the same for all', async () => {
  const limiter = make({ concurrency: 1 });
  await limiter.check('g');
  const waits = [];
  for (let i = 0; i < 40; i++) {
    const d = await limiter.check('g');
    expect(d).toMatchObject({ allowed: false, reason: 'concurrency', policy: 'concurrency' });
    waits.push(d.retryAfterMs);
  }
  for (const w of waits) {
    expect(w).toBeGreaterThanOrEqual(CONCURRENCY_SNOOZE_MS / 2);
    expect(w).toBeLessThanOrEqual(CONCURRENCY_SNOOZE_MS * 1.5);
  }
  expect(new Set(waits).size).toBeGreaterThan(10);
});

test('release frees the slot once; a second release, and a decision without a slot, are no-ops', async () => {
  const limiter = make({ concurrency: 1 });
  const held = await limiter.check('g');
  expect(held.concurrency?.lease).toEqual(expect.any(String));
  const denied = await limiter.check('g');
  expect(await limiter.release(denied)).toBe(false);
  expect(await limiter.release(held)).toBe(true);
  expect(await limiter.release(held)).toBe(false);
  expect((await limiter.check('g')).allowed).toBe(true);
  expect((await limiter.check('g')).allowed).toBe(false);
});

test("the 'local' fallback takes no slot (release would go to the store)", async () => {
  const store = new FaultStore();
  const clock = new ManualScheduler();
  const limiter = createLimiter(
    withScheduler({ store, name: `cc-${++seq}`, limit: 1000, windowMs: 1000, timeoutMs: 40, concurrency: 1, onStoreError: 'local' }, clock),
  );
  store.mode = 'throw';
  await limiter.check('g'); // opens the breaker; the fallback admits from timeoutMs + windowMs on
  await clock.advance(1040);
  const decisions = [await limiter.check('g'), await limiter.check('g')];
  expect(decisions.map((d) => d.allowed)).toEqual([true, true]);
  expect(decisions.map((d) => d.concurrency)).toEqual([undefined, undefined]);
  await limiter.close();
});
