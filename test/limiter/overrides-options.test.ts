/**
 * setOverride's and listOverrides' arguments are validated before anything reaches the store: each mistake is a
 * coded error naming the setting and showing the value. On the MemoryStore (nothing store-specific here).
 */
import { createLimiter } from '../../src/limiter/limiter';
import { Registry } from 'prom-client';
import { MemoryStore } from '../../src/memory/memory-store';
import { registerMetrics } from '../../src/metrics/prometheus';

const limiter = () =>
  createLimiter({
    store: new MemoryStore(),
    name: 'override-options',
    limit: 100,
    windowMs: 1000,
    plans: { pro: { weight: 5 } },
    tuning: { maxGroupLength: 16 },
  });

test.each<[string, unknown, unknown, string, RegExp]>([
  ['settings not an object', 'blocked', undefined, 'ERR_BL_OVERRIDE', /`settings`.*"blocked" \(string\)/],
  ['no setting at all', {}, undefined, 'ERR_BL_OVERRIDE', /at least one of plan, weight, rules/],
  ['an unknown setting', { wieght: 2 }, undefined, 'ERR_BL_UNKNOWN_OPTION', /`settings\.wieght`.*did you mean `settings\.weight`/],
  ['a weight out of range', { weight: 0 }, undefined, 'ERR_BL_OVERRIDE', /`settings\.weight`.*from 1 to 1000.*`0` \(number\)/],
  [
    'rules that are not rules',
    { rules: [{ name: 'r', limit: -1, windowMs: 1000 }] },
    undefined,
    'ERR_BL_OVERRIDE',
    /`settings\.rules\[0\]\.limit`.*`-1` \(number\)/,
  ],
  ['rules not an array', { rules: { name: 'r' } }, undefined, 'ERR_BL_OVERRIDE', /`settings\.rules`.*an object/],
  [
    'a rule named like the global share',
    { rules: [{ name: 'global', limit: 1, windowMs: 1000 }] },
    undefined,
    'ERR_BL_OVERRIDE',
    /settings\.rules\[0\]\.name/,
  ],
  ['blocked other than true', { blocked: false }, undefined, 'ERR_BL_OVERRIDE', /`settings\.blocked`.*`false` \(boolean\)/],
  ['a concurrency of 0', { concurrency: 0 }, undefined, 'ERR_BL_OVERRIDE', /`settings\.concurrency`.*`0` \(number\)/],
  ['a plan the limiter lacks', { plan: 'gold' }, undefined, 'ERR_BL_UNKNOWN_PLAN', /"gold" \(string\)/],
  ['a ttlMs that is no integer', { weight: 2 }, { ttlMs: 1.5 }, 'ERR_BL_OVERRIDE_OPTIONS', /`ttlMs`.*`1\.5` \(number\)/],
  ['a ttlMs beyond 30 days', { weight: 2 }, { ttlMs: 31 * 86_400_000 }, 'ERR_BL_OVERRIDE_OPTIONS', /`ttlMs`.*2592000000/],
  ['a reason too long', { weight: 2 }, { reason: 'x'.repeat(201) }, 'ERR_BL_OVERRIDE_OPTIONS', /`reason`.*at most 200/],
  ['an unknown option', { weight: 2 }, { ttl: 5 }, 'ERR_BL_UNKNOWN_OPTION', /`ttl` of setOverride\(\).*ttlMs/],
])('%s', async (_name, settings, options, code, message) => {
  const l = limiter();
  const error = await l.setOverride('g', settings as never, options as never).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toMatchObject({ code });
  expect((error as Error).message).toMatch(message);
  expect(await l.listOverrides()).toEqual({ overrides: [] });
});

test('a group id check() refuses is refused the same way', async () => {
  const l = limiter();
  await expect(l.setOverride('x'.repeat(17), { blocked: true })).rejects.toMatchObject({ code: 'ERR_BL_GROUP_TOO_LONG' });
  await expect(l.getOverride('')).rejects.toMatchObject({ code: 'ERR_BL_GROUP_EMPTY' });
  await expect(l.deleteOverride('*new*')).rejects.toMatchObject({ code: 'ERR_BL_GROUP_RESERVED' });
});

test('listOverrides: a bad count or cursor names the option', async () => {
  const l = limiter();
  await expect(l.listOverrides({ count: 0 })).rejects.toMatchObject({
    code: 'ERR_BL_OVERRIDE_OPTIONS',
    message: expect.stringMatching(/`count`.*`0`/),
  });
  await expect(l.listOverrides({ cursor: 5 as never })).rejects.toMatchObject({
    code: 'ERR_BL_OVERRIDE_OPTIONS',
    message: expect.stringMatching(/`cursor`/),
  });
});

test('tuning.maxOverrides is validated at construction', () => {
  expect(() => createLimiter({ store: new MemoryStore(), name: 'x', limit: 1, windowMs: 1000, tuning: { maxOverrides: 0 } })).toThrow(
    expect.objectContaining({ code: 'ERR_BL_MAX_OVERRIDES', message: expect.stringMatching(/`tuning\.maxOverrides`.*`0` \(number\)/) }),
  );
});

test("a plan resolves into its values, as of the override's setting", async () => {
  const l = limiter();
  const o = await l.setOverride('g', { plan: 'pro' });
  expect(o.settings).toEqual({ plan: 'pro' });
  expect((await l.check('g')).guaranteed).toBe(100);
});

test('the metrics count the overrides in force, at scrape time, and the denials of a block or an override rule', async () => {
  let now = 1_000_000;
  const registry = new Registry();
  const l = createLimiter({ store: new MemoryStore({ clock: () => now }), name: 'm-overrides', limit: 100, windowMs: 1000 });
  const metrics = registerMetrics({ registry, limiters: [l] });
  expect(await registry.metrics()).toContain('bulk_limiter_overrides{limiter="m-overrides"} 0');
  await l.setOverride('a', { blocked: true }, { ttlMs: 1000 });
  await l.setOverride('b', { weight: 3 });
  expect(await registry.metrics()).toContain('bulk_limiter_overrides{limiter="m-overrides"} 2');
  await l.check('a');
  await l.setOverride('c', { rules: [{ name: 'tiny', limit: 1, windowMs: 1000 }] });
  await l.check('c');
  await l.check('c');
  const text = await registry.metrics();
  expect(text).toContain('bulk_limiter_decisions_total{limiter="m-overrides",outcome="denied",policy="blocked"} 1');
  expect(text).toContain('bulk_limiter_decisions_total{limiter="m-overrides",outcome="denied",policy="override"} 1');
  now += 1000;
  expect(await registry.metrics()).toContain('bulk_limiter_overrides{limiter="m-overrides"} 2');
  metrics.close();
});
