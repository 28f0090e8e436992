/**
 * The limiter's face of reserve-then-settle: check(group, { cost, settle: true }) answers a decision with a
 * reservation and settle(actual); limiter.settle(reservation, actual) from another limiter object (another process)
 * settles it once; bad input is refused. The store semantics are in test/conformance/settle-suite.ts.
 */
import { InputError } from '../../src/errors';
import { createLimiter } from '../../src/limiter/limiter';
import { MemoryStore } from '../../src/memory/memory-store';

const NOW = 1_700_000_000_000;
let seq = 0;
const twoProcesses = () => {
  const store = new MemoryStore({ clock: () => NOW });
  const name = `settle-${++seq}`;
  const options = { store, name, limit: 100, windowMs: 60_000, tuning: { burst: 20, reserve: 1 } };
  return [createLimiter(options), createLimiter(options)] as const;
};

test('decision.settle(actual), and limiter.settle from another process, settle once', async () => {
  const [a, b] = twoProcesses();
  const d = await a.check('t', { cost: 16, settle: true });
  expect(d).toMatchObject({ allowed: true, reservation: expect.any(String) });
  expect(typeof d.settle).toBe('function');
  expect(await b.settle(d.reservation!, 6)).toEqual({ status: 'settled', refunded: 10, debt: 0 });
  expect(await d.settle!(0)).toEqual({ status: 'settled-before', refunded: 0, debt: 0 });
  // a check without settle carries neither
  const plain = await a.check('t', { cost: 1 });
  expect(plain.reservation).toBeUndefined();
  expect(plain.settle).toBeUndefined();
});

test('bad input: actual not an integer ≥ 0 rejects; a string that names no reservation is unknown; settle with defer rejects', async () => {
  const [a] = twoProcesses();
  const d = await a.check('t', { cost: 2, settle: true });
  await expect(a.settle(d.reservation!, -1)).rejects.toMatchObject({ code: 'ERR_BL_BAD_ACTUAL' });
  await expect(a.settle(d.reservation!, 1.5)).rejects.toBeInstanceOf(InputError);
  expect(await a.settle('x'.repeat(300), 1)).toEqual({ status: 'unknown', refunded: 0, debt: 0 });
  expect(await a.settle(42 as unknown as string, 1)).toEqual({ status: 'unknown', refunded: 0, debt: 0 });
  await expect(a.check('t', { settle: true, defer: { type: 'x' } })).rejects.toMatchObject({ code: 'ERR_BL_BAD_SETTLE' });
  await expect(a.check('t', { settle: 1 as unknown as boolean })).rejects.toMatchObject({ code: 'ERR_BL_BAD_SETTLE' });
});

test('a limiter with classes refuses settle: true (every check is decided in a class, which a reservation cannot settle in yet)', async () => {
  const store = new MemoryStore({ clock: () => NOW });
  const limiter = createLimiter({ store, name: `settle-${++seq}`, limit: 100, windowMs: 60_000, classes: { critical: { share: 0.2 } } });
  expect(await limiter.check('t', { cost: 2 })).toMatchObject({ allowed: true, class: 'default' });
  const before = (await limiter.peek('t')).remaining;
  await expect(limiter.check('t', { cost: 2, settle: true })).rejects.toMatchObject({ code: 'ERR_BL_BAD_SETTLE' });
  await expect(limiter.check('t', { cost: 2, settle: true, class: 'critical' })).rejects.toBeInstanceOf(InputError);
  // the refused checks spent nothing; settle: false is a plain check in its class
  expect((await limiter.peek('t')).remaining).toBe(before);
  expect(await limiter.check('t', { cost: 2, settle: false, class: 'critical' })).toMatchObject({ allowed: true, class: 'critical' });
});
