import { ConfigError } from '../../src/errors';
import { LIMITER_OPTION_NAMES, resolveLimiterOptions, type LimiterOptions } from '../../src/limiter/options';
import { MemoryStore } from '../../src/memory/memory-store';

const codeOf = (options: unknown): string | undefined => {
  try {
    resolveLimiterOptions(options as LimiterOptions);
    return undefined;
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as ConfigError).code;
  }
};

test('default burst is 5 % of the limit and the reserve a fifth of it (docs/algorithm.md §2.10); the resolved options are frozen', () => {
  const r = resolveLimiterOptions({ limit: 1000 });
  expect(r.spec).toEqual({
    name: 'default',
    limit: 1000,
    windowMs: 60_000,
    burst: 50,
    reserve: 10,
    idleMs: 60_000,
    epochMs: 15_000,
    sustained: false,
    maxGroups: 10_000,
    probationMs: 1000,
    concurrencyLeaseMs: 60_000,
  });
  expect(r).toMatchObject({
    maxGroups: 10_000,
    maxGroupLength: 128,
    maxCost: 40,
    maxWeight: 1000,
    onStoreError: 'local',
    timeoutMs: 500,
    instances: 1,
  });
  expect(r.store).toBeInstanceOf(MemoryStore);
  expect(r.logger).toBe(console);
  expect(Object.isFrozen(r)).toBe(true);
  expect(Object.isFrozen(r.spec)).toBe(true);
});

test('small limits still get a valid burst and reserve', () => {
  expect(resolveLimiterOptions({ limit: 1 }).spec).toMatchObject({ burst: 1, reserve: 0 });
  expect(resolveLimiterOptions({ limit: 2 }).spec).toMatchObject({ burst: 2, reserve: 1 });
  expect(resolveLimiterOptions({ limit: 10, tuning: { burst: 1 } }).spec).toMatchObject({ burst: 1, reserve: 0 });
  expect(resolveLimiterOptions({ limit: 100, tuning: { reserve: 0 } }).spec).toMatchObject({ burst: 8, reserve: 0 });
  // small limits: burst ≥ min(8, ceil(L/10)) so borrowers have a yellow band to share (see defaultBurstBase)
  expect(resolveLimiterOptions({ limit: 100 }).spec).toMatchObject({ burst: 8, reserve: 2 });
  expect(resolveLimiterOptions({ limit: 50 }).spec).toMatchObject({ burst: 5, reserve: 1 });
  expect(resolveLimiterOptions({ limit: 200 }).spec).toMatchObject({ burst: 10, reserve: 2 });
  expect(resolveLimiterOptions({ limit: 100, windowMs: 200 }).spec.epochMs).toBe(100);
});

test.each([
  [{}, 'ERR_BL_LIMIT'],
  [{ limit: 0 }, 'ERR_BL_LIMIT'],
  [{ limit: 1.5 }, 'ERR_BL_LIMIT'],
  [{ limit: '10' }, 'ERR_BL_LIMIT'],
  [{ limit: 10, windowMs: -1 }, 'ERR_BL_WINDOW_MS'],
  [{ limit: 10, tuning: { burst: 11 } }, 'ERR_BL_BURST'],
  [{ limit: 10, tuning: { burst: 4, reserve: 4 } }, 'ERR_BL_RESERVE'],
  [{ limit: 10, tuning: { reserve: 10 } }, 'ERR_BL_RESERVE'],
  [{ limit: 100, tuning: { burst: 10, reserve: 2, maxCost: 11 } }, 'ERR_BL_MAX_COST'],
  [{ limit: 10, name: '{evil}' }, 'ERR_BL_NAME'],
  [{ limit: 10, tuning: { sustained: 'yes' } }, 'ERR_BL_SUSTAINED'],
  [{ limit: 10, onStoreError: 'retry' }, 'ERR_BL_ON_STORE_ERROR'],
  [{ limit: 10, instances: 0 }, 'ERR_BL_INSTANCES'],
  [{ limit: 10, timeoutMs: 0 }, 'ERR_BL_TIMEOUT_MS'],
  [{ limit: 10, tuning: { maxGroups: 0 } }, 'ERR_BL_MAX_GROUPS'],
  [{ limit: 10, logger: {} }, 'ERR_BL_LOGGER'],
  [{ limit: 10, store: {} }, 'ERR_BL_STORE'],
  [{ limit: 10, windowMS: 1000 }, 'ERR_BL_UNKNOWN_OPTION'],
  // Every denyCache mistake has the option's code (a nested name's dot once leaked into it: ERR_BL_DENY_CACHE.MAX_GROUPS).
  [{ limit: 10, tuning: { denyCache: { maxGroups: 0 } } }, 'ERR_BL_DENY_CACHE'],
  [{ limit: 10, tuning: { denyCache: { sampleRate: 2 } } }, 'ERR_BL_DENY_CACHE'],
  [{ limit: 10, tuning: { denyCache: { hold: 'forever' } } }, 'ERR_BL_DENY_CACHE'],
  // rules: every mistake is ERR_BL_RULES (a misspelt key is an unknown option)
  [{ limit: 10, rules: {} }, 'ERR_BL_RULES'],
  [{ limit: 10, rules: [null] }, 'ERR_BL_RULES'],
  [{ limit: 10, rules: [{ name: '', limit: 1, windowMs: 1000 }] }, 'ERR_BL_RULES'],
  [{ limit: 10, rules: [{ name: 'a;b', limit: 1, windowMs: 1000 }] }, 'ERR_BL_RULES'],
  [{ limit: 10, rules: [{ name: 'global', limit: 1, windowMs: 1000 }] }, 'ERR_BL_RULES'],
  [
    {
      limit: 10,
      rules: [
        { name: 'a', limit: 1, windowMs: 1000 },
        { name: 'a', limit: 2, windowMs: 1000 },
      ],
    },
    'ERR_BL_RULES',
  ],
  [{ limit: 10, rules: [{ name: 'a', limit: 0, windowMs: 1000 }] }, 'ERR_BL_RULES'],
  [{ limit: 10, rules: [{ name: 'a', limit: 1, windowMs: 1.5 }] }, 'ERR_BL_RULES'],
  // a reply carries a sliding window's count times 16 as an exact integer
  [{ limit: 10, rules: [{ name: 'a', limit: 2 ** 48 + 1, windowMs: 1000 }] }, 'ERR_BL_RULES'],
  [{ limit: 10, rules: [{ name: 'a', limit: 1, windowMs: 1000, algorithm: 'leaky-bucket' }] }, 'ERR_BL_RULES'],
  [{ limit: 10, rules: Array.from({ length: 9 }, (_, i) => ({ name: `r${i}`, limit: 1, windowMs: 1000 })) }, 'ERR_BL_RULES'],
  [{ limit: 10, rules: [{ name: 'a', limit: 1, window: 1000 }] }, 'ERR_BL_UNKNOWN_OPTION'],
  [{ limit: 100, rules: [{ name: 'a', limit: 20, windowMs: 1000 }], tuning: { burst: 10, reserve: 2, maxCost: 5 } }, 'ERR_BL_MAX_COST'],
])('%j → %s', (options, code) => {
  expect(codeOf(options)).toBe(code);
});

test('messages show the bad value and, for maxCost, the bound', () => {
  expect(() => resolveLimiterOptions({ limit: 100, tuning: { burst: 10, reserve: 2, maxCost: 11 } })).toThrow(
    /`tuning.maxCost`.*`burst` \(10\).*`11` \(number\)/,
  );
  expect(resolveLimiterOptions({ limit: 100, tuning: { burst: 10, reserve: 2, maxCost: 10 } }).maxCost).toBe(10); // reservations make it deliverable
  expect(() => resolveLimiterOptions({ limit: 10, windowMS: 1 } as LimiterOptions)).toThrow(/`windowMS`/);
  expect(LIMITER_OPTION_NAMES).toContain('onStoreError');
});

test('rules: resolved with defaults; the default maxCost fits the smallest rule; messages name the rule and value', () => {
  const r = resolveLimiterOptions({
    limit: 1000,
    rules: [
      { name: 'per-second', limit: 10, windowMs: 1000 },
      { name: 'per-hour', limit: 5000, windowMs: 3_600_000, algorithm: 'sliding-window' },
    ],
  });
  expect(r.spec.rules).toEqual([
    { name: 'per-second', limit: 10, windowMs: 1000, algorithm: 'token-bucket', burst: 1, tag: expect.any(Number) },
    { name: 'per-hour', limit: 5000, windowMs: 3_600_000, algorithm: 'sliding-window', burst: 250, tag: expect.any(Number) },
  ]);
  expect(r.maxCost).toBe(1);
  expect(resolveLimiterOptions({ limit: 1000 }).spec.rules).toBeUndefined();
  expect(() => resolveLimiterOptions({ limit: 10, rules: [{ name: 'a', limit: 1, windowMs: 1000, algorithm: 'leaky' as never }] })).toThrow(
    /`rules\[0\]\.algorithm`.*'token-bucket', 'sliding-window', 'fixed-window'.*"leaky" \(string\)/,
  );
  expect(() =>
    resolveLimiterOptions({
      limit: 10,
      rules: [
        { name: 'a', limit: 1, windowMs: 1 },
        { name: 'a', limit: 1, windowMs: 1 },
      ],
    }),
  ).toThrow(/`rules\[1\]\.name` to be unique, got "a"/);
  expect(() => resolveLimiterOptions({ limit: 10, rules: [{ name: 'a', limit: 2 ** 48 + 1, windowMs: 1000 }] })).toThrow(
    /`rules\[0\]\.limit` to be an integer from 1 to 281474976710656/,
  );
  expect(resolveLimiterOptions({ limit: 10, rules: [{ name: 'a', limit: 2 ** 48, windowMs: 1000 }] }).spec.rules?.[0]?.limit).toBe(2 ** 48);
});

test('probationMs: min(epochMs, 1000) by default with rules too, and any value accepted with them (a newcomer keeps its own rule state)', () => {
  const rules = [{ name: 'per-second', limit: 10, windowMs: 1000 }];
  expect(resolveLimiterOptions({ limit: 100, windowMs: 1000 }).spec.probationMs).toBe(250);
  expect(resolveLimiterOptions({ limit: 100, windowMs: 1000, rules }).spec.probationMs).toBe(250);
  expect(resolveLimiterOptions({ limit: 100, windowMs: 1000, rules, tuning: { probationMs: 100 } }).spec.probationMs).toBe(100);
  expect(resolveLimiterOptions({ limit: 100, windowMs: 1000, rules, tuning: { probationMs: 0 } }).spec.probationMs).toBe(0);
  expect(() => resolveLimiterOptions({ limit: 100, windowMs: 1000, rules, tuning: { probationMs: -1 } })).toThrow(
    expect.objectContaining({ code: 'ERR_BL_PROBATION_MS' }),
  );
});

const sec = (name: string, limit: number) => ({ name, limit, windowMs: 1000 });

test.each<[unknown, string]>([
  // plans: the option's shape, names, weight, concurrency and rules are ERR_BL_PLANS (a misspelt key is an unknown option)
  [{ limit: 10, plans: [] }, 'ERR_BL_PLANS'],
  [{ limit: 10, plans: 'pro' }, 'ERR_BL_PLANS'],
  [{ limit: 10, plans: {} }, 'ERR_BL_PLANS'],
  [{ limit: 10, plans: { pro: null } }, 'ERR_BL_PLANS'],
  [{ limit: 10, plans: { '': {} } }, 'ERR_BL_PLANS'],
  [{ limit: 10, plans: { ' pro': {} } }, 'ERR_BL_PLANS'],
  [{ limit: 10, plans: { 'pro\n': {} } }, 'ERR_BL_PLANS'],
  [{ limit: 10, plans: { ['p'.repeat(65)]: {} } }, 'ERR_BL_PLANS'],
  [{ limit: 10, plans: Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`p${i}`, {}])) }, 'ERR_BL_PLANS'],
  [{ limit: 10, plans: { pro: { weight: 0 } } }, 'ERR_BL_PLANS'],
  [{ limit: 10, plans: { pro: { weight: 1.5 } } }, 'ERR_BL_PLANS'],
  [{ limit: 10, tuning: { maxWeight: 5 }, plans: { pro: { weight: 6 } } }, 'ERR_BL_PLANS'],
  [{ limit: 10, plans: { pro: { weight: '2' } } }, 'ERR_BL_PLANS'],
  [{ limit: 10, plans: { pro: { concurrency: 0 } } }, 'ERR_BL_PLANS'],
  [{ limit: 10, plans: { pro: { concurrency: 2.5 } } }, 'ERR_BL_PLANS'],
  [{ limit: 10, plans: { pro: { rules: {} } } }, 'ERR_BL_PLANS'],
  [{ limit: 10, plans: { pro: { rules: [{ name: 'global', limit: 1, windowMs: 1000 }] } } }, 'ERR_BL_PLANS'],
  [{ limit: 10, plans: { pro: { rules: [sec('a', 1), sec('a', 2)] } } }, 'ERR_BL_PLANS'],
  // merged with the limiter's 8, a 9th rule is one too many
  [{ limit: 10, rules: Array.from({ length: 8 }, (_, i) => sec(`r${i}`, 1)), plans: { pro: { rules: [sec('x', 1)] } } }, 'ERR_BL_PLANS'],
  [{ limit: 10, plans: { pro: { wieght: 2 } } }, 'ERR_BL_UNKNOWN_OPTION'],
  [{ limit: 10, plans: { pro: { rules: [{ name: 'a', limit: 1, window: 1000 }] } } }, 'ERR_BL_UNKNOWN_OPTION'],
  [{ limit: 10, defaultPlan: 'pro' }, 'ERR_BL_DEFAULT_PLAN'],
  [{ limit: 10, plans: { pro: {} }, defaultPlan: 'free' }, 'ERR_BL_DEFAULT_PLAN'],
  [{ limit: 10, plans: { pro: {} }, defaultPlan: 1 }, 'ERR_BL_DEFAULT_PLAN'],
  // probation combines with a plan's rules, but stays an integer ≥ 0
  [{ limit: 10, plans: { pro: { rules: [sec('a', 5)] } }, tuning: { probationMs: 1.5 } }, 'ERR_BL_PROBATION_MS'],
  // and its capacity bounds maxCost
  [
    { limit: 100, tuning: { burst: 10, reserve: 2, maxCost: 5 }, plans: { pro: { rules: [{ name: 'a', limit: 20, windowMs: 1000 }] } } },
    'ERR_BL_MAX_COST',
  ],
])('plans: %j → %s', (options, code) => {
  expect(codeOf(options)).toBe(code);
});

test("plans: resolved in a Map; a plan's rules replace the limiter's rule of their name in its place, the others follow", () => {
  const r = resolveLimiterOptions({
    limit: 1000,
    tuning: { maxWeight: 10 },
    rules: [sec('second', 10), { name: 'hour', limit: 5000, windowMs: 3_600_000 }],
    plans: {
      'Free tier': { weight: 1, concurrency: 1 },
      pro: { weight: 10, rules: [{ name: 'minute', limit: 300, windowMs: 60_000 }, sec('second', 50)], concurrency: 3 },
      constructor: {},
    },
    defaultPlan: 'Free tier',
  });
  const plans = r.spec.plans!;
  expect([...plans.keys()]).toEqual(['Free tier', 'pro', 'constructor']);
  expect(plans.get('Free tier')).toMatchObject({ name: 'Free tier', weight: 1, concurrency: 1 });
  // no rules of its own: exactly the limiter's
  expect(plans.get('Free tier')!.rules).toBe(r.spec.rules);
  expect(plans.get('pro')!.rules.map((x) => [x.name, x.limit])).toEqual([
    ['second', 50],
    ['hour', 5000],
    ['minute', 300],
  ]);
  expect(plans.get('pro')).toMatchObject({ weight: 10, concurrency: 3 });
  expect(plans.get('constructor')).toMatchObject({ weight: undefined, concurrency: undefined });
  expect(r.defaultPlan).toBe(plans.get('Free tier'));
  // the smallest capacity of any plan's rules: second at 10 is a bucket of 1
  expect(r.maxCost).toBe(1);
  expect(resolveLimiterOptions({ limit: 1000 }).spec.plans).toBeUndefined();
  expect(resolveLimiterOptions({ limit: 1000, plans: { pro: { weight: 2 } } }).spec.probationMs).toBe(1000);
  expect(resolveLimiterOptions({ limit: 1000, plans: { pro: { rules: [sec('a', 5)] } } }).spec.probationMs).toBe(1000);
  expect(() => resolveLimiterOptions({ limit: 10, tuning: { maxWeight: 5 }, plans: { pro: { weight: 6 } } })).toThrow(
    /`plans\.pro\.weight`.*1 to 5.*`6` \(number\)/,
  );
  expect(() => resolveLimiterOptions({ limit: 10, plans: { pro: { rules: [sec('a', 0)] } } })).toThrow(/`plans\.pro\.rules\[0\]\.limit`/);
  expect(() => resolveLimiterOptions({ limit: 10, plans: { pro: {} }, defaultPlan: 'free' })).toThrow(/`defaultPlan`.*"pro".*"free" \(string\)/);
});
