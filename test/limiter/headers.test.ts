import { createHeaderWriter, retryAfterSeconds } from '../../src/middleware/headers';
import { quotaBodyWriter } from '../../src/middleware/rejection';
import { resolveRules } from '../../src/limiter/rule-options';
import type { Decision } from '../../src/types';

const at = 1_800_000_000_000;
const allowed: Decision = {
  allowed: true,
  group: 'g',
  limit: 250,
  guaranteed: 100,
  remaining: 17,
  retryAfterMs: 0,
  resetMs: 41_001,
  activeGroups: 3,
  colour: 'green',
  at,
};
const denied: Decision = { ...allowed, allowed: false, remaining: 0, retryAfterMs: 4_200, colour: 'red', reason: 'limit' };

describe('retryAfterSeconds', () => {
  test.each([
    [0, 1],
    [1, 1],
    [999, 1],
    [1000, 1],
    [1001, 2],
    [59_999, 60],
  ])('%p ms → %p s', (ms, s) => {
    expect(retryAfterSeconds(ms)).toBe(s);
  });
});

describe("'draft' headers", () => {
  const write = createHeaderWriter('draft', 'tenant', 60_000);
  test("with a class: the limiter's policy item names it, before any rule item", () => {
    expect(write({ ...allowed, class: 'critical' })['RateLimit-Policy']).toBe('"tenant";q=250;w=60;class="critical"');
    const withRules = createHeaderWriter('draft', 'tenant', 60_000, resolveRules([{ name: 'second', limit: 5, windowMs: 1000 }]));
    expect(withRules({ ...denied, class: 'default', rules: [] })['RateLimit-Policy']).toBe('"tenant";q=250;w=60;class="default", "second";q=5;w=1');
  });
  test('allowed: policy with quota and window, remaining and seconds to full', () => {
    expect(write(allowed)).toEqual({ 'RateLimit-Policy': '"tenant";q=250;w=60', RateLimit: '"tenant";r=17;t=42' });
  });
  test('denied: Retry-After, and t equals it (never earlier than the effective window)', () => {
    expect(write(denied)).toEqual({ 'Retry-After': '5', 'RateLimit-Policy': '"tenant";q=250;w=60', RateLimit: '"tenant";r=0;t=5' });
  });
  test('without quota numbers (store outage): only Retry-After', () => {
    expect(write(allowed, false)).toEqual({});
    expect(write(denied, false)).toEqual({ 'Retry-After': '5' });
  });
  test('a window that is not whole seconds is stated over whole seconds at the same rate; names are escaped as SF strings', () => {
    // `allowed` has a quota of 250 per window: 250 per 250 ms is 1,000 per second, 250 per 1.5 s is 500 per 3 s.
    expect(createHeaderWriter('draft', 'a"b\\c', 250)(allowed)['RateLimit-Policy']).toBe('"a\\"b\\\\c";q=1000;w=1');
    expect(createHeaderWriter('draft', 'x', 100)(allowed)['RateLimit-Policy']).toBe('"x";q=2500;w=1');
    expect(createHeaderWriter('draft', 'x', 1500)(allowed)['RateLimit-Policy']).toBe('"x";q=500;w=3');
    expect(createHeaderWriter('draft', 'x', 60_000)(allowed)['RateLimit-Policy']).toBe('"x";q=250;w=60');
    const rules = resolveRules([{ name: 'fast', limit: 10, windowMs: 100 }]);
    expect(createHeaderWriter('draft', 'x', 100, rules)(allowed)['RateLimit-Policy']).toBe('"x";q=2500;w=1, "fast";q=100;w=1');
  });
});

describe("'legacy' headers", () => {
  const write = createHeaderWriter('legacy', 'tenant', 60_000);
  test('reset is the epoch second at which the quota is full again', () => {
    expect(write(allowed)).toEqual({
      'X-RateLimit-Limit': '250',
      'X-RateLimit-Remaining': '17',
      'X-RateLimit-Reset': String(Math.ceil((at + 41_001) / 1000)),
    });
    expect(write(denied)['Retry-After']).toBe('5');
  });
});

describe('no headers', () => {
  const write = createHeaderWriter(false, 'tenant', 60_000);
  test('only Retry-After on a denial', () => {
    expect(write(allowed)).toEqual({});
    expect(write(denied)).toEqual({ 'Retry-After': '5' });
  });
});

describe("'draft' headers with rules: one item per policy", () => {
  const rules = resolveRules([
    { name: 'per-second', limit: 10, windowMs: 1000 },
    { name: 'per-hour', limit: 5000, windowMs: 3_600_000 },
  ]);
  const write = createHeaderWriter('draft', 'tenant', 60_000, rules);
  const states = [
    { name: 'per-second', limit: 10, windowMs: 1000, remaining: 0, resetMs: 300 },
    { name: 'per-hour', limit: 5000, windowMs: 3_600_000, remaining: 4990, resetMs: 3_000_001 },
  ];
  const policy = '"tenant";q=250;w=60, "per-second";q=10;w=1, "per-hour";q=5000;w=3600';
  test('allowed: the global share first, then each rule with its own remaining and reset', () => {
    expect(write({ ...allowed, rules: states })).toEqual({
      'RateLimit-Policy': policy,
      RateLimit: '"tenant";r=17;t=42, "per-second";r=0;t=1, "per-hour";r=4990;t=3001',
    });
  });
  test('denied by a rule: its t is the Retry-After; denied by the global share: the global t is', () => {
    expect(write({ ...denied, policy: 'per-hour', rules: states })).toEqual({
      'Retry-After': '5',
      'RateLimit-Policy': policy,
      RateLimit: '"tenant";r=0;t=42, "per-second";r=0;t=1, "per-hour";r=4990;t=5',
    });
    expect(write({ ...denied, policy: 'global', rules: states }).RateLimit).toBe('"tenant";r=0;t=5, "per-second";r=0;t=1, "per-hour";r=4990;t=3001');
    expect(write({ ...denied, policy: 'global', rules: states }, false)).toEqual({ 'Retry-After': '5' });
  });
});

describe('a concurrency cap adds one draft item (no window), after the rules', () => {
  const slots = { limit: 3, inFlight: 2, lease: '1-1:g' };
  const rules = resolveRules([{ name: 'per-second', limit: 10, windowMs: 1000 }]);
  test('allowed: q the cap, r the slots left, t 0', () => {
    expect(createHeaderWriter('draft', 'tenant', 60_000)({ ...allowed, concurrency: slots })).toEqual({
      'RateLimit-Policy': '"tenant";q=250;w=60, "concurrency";q=3',
      RateLimit: '"tenant";r=17;t=42, "concurrency";r=1;t=0',
    });
  });
  test("turned away by the cap: its t is the Retry-After; the rules' items keep their own", () => {
    const d: Decision = {
      ...denied,
      reason: 'concurrency',
      policy: 'concurrency',
      retryAfterMs: 1200,
      concurrency: { limit: 3, inFlight: 3 },
      rules: [{ name: 'per-second', limit: 10, windowMs: 1000, remaining: 9, resetMs: 100 }],
    };
    expect(createHeaderWriter('draft', 'tenant', 60_000, rules)(d)).toEqual({
      'Retry-After': '2',
      'RateLimit-Policy': '"tenant";q=250;w=60, "per-second";q=10;w=1, "concurrency";q=3',
      RateLimit: '"tenant";r=0;t=42, "per-second";r=9;t=1, "concurrency";r=0;t=2',
    });
  });
  test('legacy and no headers: unchanged', () => {
    expect(Object.keys(createHeaderWriter('legacy', 'tenant', 60_000)({ ...allowed, concurrency: slots }))).toEqual([
      'X-RateLimit-Limit',
      'X-RateLimit-Remaining',
      'X-RateLimit-Reset',
    ]);
    expect(createHeaderWriter(false, 'tenant', 60_000)({ ...allowed, concurrency: slots })).toEqual({});
  });
});

describe("a flood's denials, each waiting its own few seconds", () => {
  test('every wait gets its own Retry-After, RateLimit and 429 body, the same text the first time and again', () => {
    const write = createHeaderWriter('draft', 'api', 1000);
    const body = quotaBodyWriter(['api']);
    // staggered waits come and go; one past the kept range is made each time
    for (const ms of [1_000, 2_500, 1_000, 7_001, 2_500, 200_000, 200_000]) {
      const seconds = retryAfterSeconds(ms);
      const h = write({ ...denied, retryAfterMs: ms });
      expect(h['Retry-After']).toBe(String(seconds));
      expect(h.RateLimit).toBe(`"api";r=0;t=${seconds}`);
      expect(write({ ...denied, retryAfterMs: ms, remaining: 2 }).RateLimit).toBe(`"api";r=2;t=${seconds}`);
      expect(JSON.parse(body(seconds))).toEqual({
        type: 'https://iana.org/assignments/http-problem-types#quota-exceeded',
        title: 'Too Many Requests',
        status: 429,
        detail: `Too many requests; retry in ${seconds} s.`,
        'violated-policies': ['api'],
      });
    }
  });
});
