import { createLimiter } from '../../src/limiter/limiter';
import { ConfigError, InputError } from '../../src/errors';
import { FaultStore } from './fault-store';

let seq = 0;
const make = (extra: Record<string, unknown> = {}) => {
  const store = new FaultStore();
  const limiter = createLimiter({ store, name: `lim-${++seq}`, limit: 10, tuning: { burst: 10 }, windowMs: 1000, ...extra });
  return { store, limiter };
};

describe('createLimiter', () => {
  test('exposes name and spec, and passes group, cost and weight to the store', async () => {
    const { store, limiter } = make({ name: 'facade' });
    expect(limiter.name).toBe('facade');
    expect(limiter.spec).toMatchObject({ name: 'facade', limit: 10, burst: 10, windowMs: 1000 });
    const d = await limiter.check('tenant-a', { cost: 3, weight: 5 });
    expect(d).toMatchObject({ allowed: true, group: 'tenant-a', remaining: 7 });
    expect(store.calls).toEqual([{ group: 'tenant-a', cost: 3, weight: 5 }]);
    await limiter.check('tenant-b');
    expect(store.calls[1]).toEqual({ group: 'tenant-b', cost: 1, weight: 1 });
  });

  test('invalid options throw ConfigError at construction', () => {
    expect(() => make({ limit: 0 })).toThrow(ConfigError);
    expect(() => make({ onStoreError: 'maybe' })).toThrow(ConfigError);
  });

  test.each([
    ['empty', 'ERR_BL_GROUP_EMPTY', ''],
    ['not a string', 'ERR_BL_BAD_GROUP', 42],
    ['an array', 'ERR_BL_BAD_GROUP', ['a']],
    ['129 ASCII bytes', 'ERR_BL_GROUP_TOO_LONG', 'x'.repeat(129)],
    ['43 × 3-byte characters (129 bytes)', 'ERR_BL_GROUP_TOO_LONG', '한'.repeat(43)],
    ['10 KB', 'ERR_BL_GROUP_TOO_LONG', 'y'.repeat(10_240)],
    // UTF-8 turns each lone surrogate into U+FFFD: these ids would share one quota.
    ['a lone high surrogate', 'ERR_BL_GROUP_MALFORMED', '\ud800'],
    ['a lone low surrogate inside', 'ERR_BL_GROUP_MALFORMED', 'a\udc00b'],
    ['a reversed pair', 'ERR_BL_GROUP_MALFORMED', '\ude00\ud83d'],
    ["the overflow group's name", 'ERR_BL_GROUP_RESERVED', '*overflow*'],
    ["the newcomers' group's name", 'ERR_BL_GROUP_RESERVED', '*new*'],
    ["the metrics' label of every other group", 'ERR_BL_GROUP_RESERVED', '*other*'],
  ])('group %s → InputError %s, store not called', async (_label, code, group) => {
    const { store, limiter } = make();
    await expect(limiter.check(group as string)).rejects.toMatchObject({ code, constructor: InputError });
    expect(store.calls).toHaveLength(0);
  });

  test('group limits count UTF-8 bytes: 128 bytes pass, any characters', async () => {
    const { limiter } = make();
    for (const g of [
      'x'.repeat(128),
      '한'.repeat(42),
      '{',
      '}',
      ':',
      '{bl:x}:meta',
      '\u0000',
      '😀'.repeat(32),
      '\ud83d\ude00',
      '*overflow',
      'overflow*',
    ]) {
      await expect(limiter.check(g)).resolves.toMatchObject({ group: g });
    }
  });

  test('maxGroupLength is honoured', async () => {
    const { limiter } = make({ tuning: { maxGroupLength: 4 } });
    await expect(limiter.check('abcd')).resolves.toMatchObject({ allowed: true });
    await expect(limiter.check('abcde')).rejects.toMatchObject({ code: 'ERR_BL_GROUP_TOO_LONG' });
    await expect(limiter.check('éé')).resolves.toMatchObject({ allowed: true });
    await expect(limiter.check('ééé')).rejects.toMatchObject({ code: 'ERR_BL_GROUP_TOO_LONG' });
  });

  test.each([
    ['cost', 0],
    ['cost', 1.5],
    ['cost', 9],
    ['cost', '2'],
    ['cost', Number.NaN],
    ['weight', 0],
    ['weight', -1],
    ['weight', 1001],
    ['weight', 2.5],
    ['weight', null],
  ])('%s %p → InputError', async (name, value) => {
    const { store, limiter } = make();
    // maxCost defaults to burst − reserve = 10 − 2 = 8 here.
    await expect(limiter.check('a', { [name]: value })).rejects.toMatchObject({ code: `ERR_BL_BAD_${name.toUpperCase()}` });
    expect(store.calls).toHaveLength(0);
  });

  test('check never throws synchronously', () => {
    const { limiter } = make();
    expect(() => limiter.check('').catch(() => undefined)).not.toThrow();
  });

  test('destroy removes the limiter state', async () => {
    const { limiter } = make({ limit: 1, tuning: { burst: 1 } });
    expect((await limiter.check('a')).allowed).toBe(true);
    expect((await limiter.check('a')).allowed).toBe(false);
    await limiter.destroy();
    expect((await limiter.check('a')).allowed).toBe(true);
  });
});
