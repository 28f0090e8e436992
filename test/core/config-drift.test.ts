/**
 * Config drift's pure parts (src/core/config-drift.ts, src/core/config-watch.ts): the description and the lines
 * that differ; the watch's calls on a fake store call and a manual clock (when it asks, how often, what it tells).
 */
import { configDiff, configIdentity, describeSpec } from '../../src/core/config-drift';
import { MISMATCH_HOLD_MS, RETRY_MS, createConfigWatch } from '../../src/core/config-watch';
import { resolveLimiterOptions } from '../../src/limiter/options';
import type { ConfigMismatch } from '../../src/types';

const specOf = (options: Record<string, unknown>) => resolveLimiterOptions({ limit: 100, windowMs: 1000, ...options } as never).spec;

test('equal options describe alike (whatever the order they were given in); the fingerprint is 12 characters', () => {
  const a = configIdentity(specOf({ rules: [{ name: 'x', limit: 1, windowMs: 1000 }], plans: { pro: { weight: 2 }, free: {} } }));
  const b = configIdentity(specOf({ plans: { free: {}, pro: { weight: 2 } }, rules: [{ name: 'x', limit: 1, windowMs: 1000 }] }));
  expect(a).toEqual(b);
  expect(a.fingerprint).toMatch(/^[A-Za-z0-9_-]{12}$/);
  expect(configIdentity(specOf({ limit: 101 })).fingerprint).not.toBe(configIdentity(specOf({})).fingerprint);
});

test('the lines that differ name the option, this side and the other; an option only one side has reads none', () => {
  const mine = JSON.stringify(describeSpec(specOf({ tuning: { burst: 5 } })));
  const theirs = JSON.stringify(describeSpec(specOf({ limit: 200, tuning: { burst: 5 }, classes: { critical: { share: 0.2 } } })));
  expect(configDiff(mine, theirs)).toEqual([
    'classes.critical: this process none, another 0.2',
    'classes.default: this process none, another 0.8',
    'limit: this process 100, another 200',
  ]);
  // another version's text: nothing to compare, every option differs
  expect(configDiff(mine, 'not json')).toContain('limit: this process 100, another none');
  const many = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`o${String(i).padStart(2, '0')}`, String(i)]));
  expect(configDiff('{}', JSON.stringify(many))).toHaveLength(21);
  expect(configDiff('{}', JSON.stringify(many)).at(-1)).toBe('and 10 more');
});

/** A watch on a manual clock whose call answers what `answers` holds for the fingerprint asked ('' unknown). */
function watchOf(answers: Map<string, string>) {
  const clock = { ms: 1_000_000 };
  const asked: string[] = [];
  const told: ConfigMismatch[] = [];
  let failing = false;
  const watch = createConfigWatch({
    description: JSON.stringify({ limit: '100' }),
    now: () => clock.ms,
    check: async (other) => {
      asked.push(other);
      if (failing) throw new Error('store down');
      return answers.get(other) ?? '';
    },
  });
  watch.watch((m) => told.push(m));
  return { watch, clock, asked, told, fail: (f: boolean) => (failing = f) };
}

test('agreeing replies cost nothing; another fingerprint is asked about once and told once', async () => {
  const w = watchOf(new Map([['other-fp-123', JSON.stringify({ limit: '200' })]]));
  for (let i = 0; i < 100; i++) w.watch.saw('');
  expect(w.asked).toEqual([]);
  for (let i = 0; i < 100; i++) {
    w.watch.saw('other-fp-123');
    await w.watch.mismatch();
    w.clock.ms += 1000;
  }
  expect(w.asked).toEqual(['other-fp-123']);
  expect(w.told).toEqual([{ options: ['limit: this process 100, another 200'], since: 1_000_000 }]);
  expect(await w.watch.mismatch()).toEqual({ options: ['limit: this process 100, another 200'], since: 1_000_000 });
  // no check has seen it for the hold: over
  w.clock.ms += MISMATCH_HOLD_MS;
  expect(await w.watch.mismatch()).toBeUndefined();
});

test('a fingerprint not described yet is asked again by the next check RETRY_MS later, agreeing or not; a failed call too', async () => {
  const answers = new Map<string, string>();
  const w = watchOf(answers);
  w.watch.saw('other-fp-123');
  await w.watch.mismatch();
  expect(w.asked).toHaveLength(1);
  expect(await w.watch.mismatch()).toEqual({ options: [], since: 1_000_000 });
  w.clock.ms += RETRY_MS - 1;
  w.watch.saw('');
  expect(w.asked).toHaveLength(1);
  w.clock.ms += 1;
  w.fail(true);
  w.watch.saw('');
  await w.watch.mismatch();
  expect(w.asked).toHaveLength(2);
  expect(w.told).toEqual([]);
  w.fail(false);
  answers.set('other-fp-123', JSON.stringify({ limit: '50' }));
  w.clock.ms += RETRY_MS;
  w.watch.saw('');
  await w.watch.mismatch();
  expect(w.asked).toHaveLength(3);
  expect(w.told).toEqual([{ options: ['limit: this process 100, another 50'], since: 1_000_000 }]);
  // named: agreeing replies cost nothing again
  w.clock.ms += RETRY_MS;
  w.watch.saw('');
  expect(w.asked).toHaveLength(3);
});

test('asks stop after a dozen calls found nothing: the mismatch is told without its options', async () => {
  const w = watchOf(new Map());
  for (let i = 0; i < 40; i++) {
    w.watch.saw('other-fp-123');
    await w.watch.mismatch();
    w.clock.ms += RETRY_MS;
  }
  expect(w.asked).toHaveLength(12);
  expect(w.told).toEqual([{ options: [], since: 1_000_000 }]);
});
