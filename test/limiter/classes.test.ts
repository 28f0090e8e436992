/**
 * The limiter's part of priority classes: `classes` validated at construction (ConfigError naming the option and
 * the value), the class a check names (its own, its plan's, else 'default') given to the store, and a name that is
 * not a class the server's mistake (ConfigError ERR_BL_UNKNOWN_CLASS), never an InputError answered 400.
 */
import { ConfigError } from '../../src/errors';
import { createLimiter, type LimiterOptions } from '../../src/limiter/limiter';
import { FaultStore } from './fault-store';

let seq = 0;
const make = (extra: Partial<LimiterOptions> = {}) => {
  const store = new FaultStore();
  const limiter = createLimiter({
    store,
    name: `classes-${++seq}`,
    limit: 100,
    windowMs: 1000,
    classes: { critical: { share: 0.2 }, bulk: { share: 0.5 } },
    plans: { pro: { weight: 5, class: 'critical' }, free: {} },
    ...extra,
  });
  return { store, limiter };
};

test("the store gets the check's class, else its plan's, else 'default'; the spec holds 'default' with the remainder", async () => {
  const { store, limiter } = make();
  expect([...limiter.spec.classes!]).toEqual([
    ['critical', 0.2],
    ['bulk', 0.5],
    ['default', 0.30000000000000004],
  ]);
  await limiter.check('a', { class: 'bulk' });
  await limiter.check('b', { plan: 'pro' });
  await limiter.check('c', { plan: 'pro', class: 'default' });
  await limiter.check('d');
  await limiter.check('e', { defer: { type: 'report' } });
  expect(store.calls.map((c) => [c.group, c.class])).toEqual([
    ['a', 'bulk'],
    ['b', 'critical'],
    ['c', 'default'],
    ['d', 'default'],
    ['e', 'default'],
  ]);
  await limiter.close();
});

test('a limiter without classes sends no class, and a check naming one is refused', async () => {
  const { store, limiter } = make({ classes: undefined, plans: undefined });
  await limiter.check('a');
  expect(store.calls[0]).not.toHaveProperty('class');
  await expect(limiter.check('a', { class: 'critical' })).rejects.toMatchObject({ code: 'ERR_BL_UNKNOWN_CLASS' });
  await limiter.close();
});

test('an unknown class is the server’s mistake: ConfigError ERR_BL_UNKNOWN_CLASS from check and peek', async () => {
  const { limiter } = make();
  const error = await limiter.check('a', { class: 'gold' }).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(ConfigError);
  expect(error).toMatchObject({ code: 'ERR_BL_UNKNOWN_CLASS' });
  expect((error as Error).message).toMatch(/"critical", "bulk", "default"/);
  await expect(limiter.peek('a', { class: 7 as unknown as string })).rejects.toMatchObject({ code: 'ERR_BL_UNKNOWN_CLASS' });
  await limiter.close();
});

test.each([
  [{ classes: 'x' }, /`classes`/],
  [{ classes: {} }, /at least one class/],
  [{ classes: { 'a b': { share: 0.1 } } }, /"a b"/],
  [{ classes: { a: { share: 0 } } }, /`classes\.a\.share` to be a number in \(0, 1\], got `0`/],
  [{ classes: { a: { share: 1.5 } } }, /got `1\.5`/],
  [{ classes: { a: { share: '0.5' } } }, /`classes\.a\.share`/],
  [{ classes: { a: { share: 0.6 }, b: { share: 0.6 } } }, /sum to at most 1, got 1\.2/],
  [{ classes: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`c${i}`, { share: 0.01 }])) }, /at most 16 classes, got 17/],
  [{ classes: { a: { share: 0.5 } }, plans: { pro: { class: 'b' } } }, /`plans\.pro\.class` to be the name of a class/],
])('%j fails at construction with ERR_BL_CLASSES naming the option and value', (extra, message) => {
  const build = () => make(extra as Partial<LimiterOptions>);
  expect(build).toThrow(ConfigError);
  expect(build).toThrow(message);
  try {
    build();
  } catch (e) {
    expect((e as ConfigError).code).toBe('ERR_BL_CLASSES');
  }
});

test('an unknown setting of a class is refused as every unknown option is (ERR_BL_UNKNOWN_OPTION, naming it)', () => {
  expect(() => make({ classes: { a: { share: 0.5, weight: 2 } as unknown as { share: number } } })).toThrow(/classes\.a\.weight/);
});
