/**
 * The adaptive limit through the limiter (docs/adaptive.md): the option's validation, limiter.report and
 * limitInForce, the per-process coalescing of reports, a worker's reports (RetryLaterError → throttled, success →
 * ok), reportUpstream's mapping of upstream answers, the decision's share and the metrics gauge.
 */
import { Registry } from 'prom-client';
import { ConfigError, InputError } from '../../src/errors';
import { createLimiter } from '../../src/limiter/limiter';
import { MemoryStore } from '../../src/memory/memory-store';
import { registerMetrics } from '../../src/metrics/prometheus';
import { reportUpstream, retryAfterMs } from '../../src/middleware/report-upstream';
import { Dispatcher } from '../../src/queue/dispatcher';
import { RetryLaterError } from '../../src/queue/retry-later-error';
import { Worker } from '../../src/queue/worker';
import type { LimiterSpec, LimiterStore, ReportInput, Store } from '../../src/types';
import { until } from '../queue/fixtures/queues';

const silent = { warn: () => undefined, error: () => undefined };

/** A MemoryStore on a manual clock whose report calls are logged. */
function counted(): { store: Store; reports: ReportInput[]; clock: { ms: number } } {
  const clock = { ms: 1_800_000_000_000 };
  const memory = new MemoryStore({ clock: () => clock.ms });
  const reports: ReportInput[] = [];
  const store: Store = {
    bind(spec: LimiterSpec): LimiterStore {
      const bound = memory.bind(spec);
      return {
        ...bound,
        ...(bound.report
          ? {
              report: (input: ReportInput) => {
                reports.push(input);
                return bound.report!(input);
              },
            }
          : {}),
      };
    },
  };
  return { store, reports, clock };
}

const refused = (adaptive: unknown): unknown => {
  try {
    createLimiter({ limit: 100, windowMs: 1000, adaptive: adaptive as never });
  } catch (error) {
    return error instanceof ConfigError ? [error.code, error.message] : error;
  }
  return 'accepted';
};

test('the option is validated: the field and the value in the message, min ≤ limit ≤ max', () => {
  expect(refused({ min: 0, max: 200 })).toEqual(['ERR_BL_ADAPTIVE', expect.stringMatching(/`adaptive\.min`.*got `0`/)]);
  expect(refused({ min: 101, max: 200 })).toEqual(['ERR_BL_ADAPTIVE', expect.stringMatching(/`adaptive\.min`.*`limit` \(100\).*got `101`/)]);
  expect(refused({ min: 10, max: 99 })).toEqual(['ERR_BL_ADAPTIVE', expect.stringMatching(/`adaptive\.max`.*got `99`/)]);
  expect(refused({ min: 10, max: 200, decrease: 1 })).toEqual(['ERR_BL_ADAPTIVE', expect.stringMatching(/`adaptive\.decrease`.*got `1`/)]);
  expect(refused({ min: 10, max: 200, intervalMs: 0 })).toEqual(['ERR_BL_ADAPTIVE', expect.stringMatching(/`adaptive\.intervalMs`.*got `0`/)]);
  expect(refused({ min: 10, max: 200, typo: 1 })).toEqual(['ERR_BL_UNKNOWN_OPTION', expect.stringContaining('adaptive.typo')]);
  expect(refused(7)).toEqual(['ERR_BL_ADAPTIVE', expect.stringContaining('got `7`')]);
  expect(refused({ min: 100, max: 100 })).toBe('accepted');
});

test('report and limitInForce; without adaptive the configured limit and nothing sent', async () => {
  const { store, reports } = counted();
  const plain = createLimiter({ store, name: 'plain', limit: 100, windowMs: 1000 });
  expect(await plain.report('throttled')).toBe(100);
  expect(await plain.limitInForce()).toBe(100);
  expect(reports).toEqual([]);
  const limiter = createLimiter({ store, name: 'adaptive', limit: 100, windowMs: 1000, adaptive: { min: 10, max: 200, decrease: 0.5 } });
  expect(await limiter.report('throttled', { retryAfterMs: 1500 })).toBe(50);
  expect(await limiter.limitInForce()).toBe(50);
  const d = await limiter.check('a');
  expect([d.limit, d.guaranteed]).toEqual([50, 50]);
  await expect(limiter.report('nope' as never)).rejects.toThrow(InputError);
  await expect(limiter.report('throttled', { retryAfterMs: -1 })).rejects.toMatchObject({ code: 'ERR_BL_BAD_RETRY_AFTER_MS' });
});

test('a process sends at most one report of a kind per intervalMs / 8; a longer Retry-After always goes', async () => {
  const { store, reports } = counted();
  // an interval of a day: every report below falls within one eighth of it
  const limiter = createLimiter({ store, name: 'coalesce', limit: 100, windowMs: 1000, adaptive: { min: 10, max: 200, intervalMs: 86_400_000 } });
  for (let i = 0; i < 5; i++) await limiter.report('ok');
  for (let i = 0; i < 5; i++) await limiter.report('throttled');
  await limiter.report('throttled', { retryAfterMs: 2000 });
  await limiter.report('throttled', { retryAfterMs: 1000 });
  expect(reports.map((r) => `${r.outcome}:${r.retryAfterMs}`)).toEqual(['ok:0', 'throttled:0', 'throttled:2000']);
  expect(await limiter.limitInForce()).toBe(90);
});

test('a worker reports a RetryLaterError as throttled (its delay the Retry-After) and a success as ok', async () => {
  const { store, reports } = counted();
  const limiter = createLimiter({ store, name: 'jobs', limit: 100, windowMs: 1000, adaptive: { min: 10, max: 200, intervalMs: 8 }, logger: silent });
  let calls = 0;
  const worker = new Worker({
    limiter,
    logger: silent,
    handlers: {
      async call() {
        calls += 1;
        if (calls === 1) throw new RetryLaterError(1234);
        return 'done';
      },
    },
  });
  const dispatcher = new Dispatcher({ limiter, logger: silent, pollMs: 5 });
  await limiter.enqueue('g', { type: 'call', payload: {} });
  await limiter.enqueue('g', { type: 'call', payload: {} });
  dispatcher.start();
  worker.start();
  await until('two reports', () => reports.length >= 2);
  await worker.close(1000);
  await dispatcher.stop();
  expect(reports.slice(0, 2)).toEqual([
    { outcome: 'throttled', retryAfterMs: 1234 },
    { outcome: 'ok', retryAfterMs: 0 },
  ]);
  await limiter.close();
});

test('reportUpstream: 429 and 503 are throttled with their Retry-After, other answers below 500 ok, other 5xx not reported', async () => {
  const { store, reports } = counted();
  // an interval of a day: a throttled report goes again only with a longer Retry-After
  const limiter = createLimiter({ store, name: 'upstream', limit: 100, windowMs: 1000, adaptive: { min: 10, max: 200, intervalMs: 86_400_000 } });
  expect(await reportUpstream(limiter, { statusCode: 503, headers: { 'retry-after': '1.5' } })).toBe(90);
  const fetchLike = { status: 429, headers: new Headers({ 'retry-after': '3' }) };
  expect(await reportUpstream(limiter, fetchLike)).toBe(90);
  expect(await reportUpstream(limiter, 502)).toBeUndefined();
  expect(await reportUpstream(limiter, { status: 200 })).toBe(90);
  expect(reports.map((r) => `${r.outcome}:${r.retryAfterMs}`)).toEqual(['throttled:1500', 'throttled:3000', 'ok:0']);
  expect(await reportUpstream(limiter, 429, 7)).toBe(90);
  expect(reports.at(-1)).toEqual({ outcome: 'throttled', retryAfterMs: 7000 });
});

test('retryAfterMs reads delay-seconds and HTTP dates; anything else is 0', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');
  expect(retryAfterMs('2', now)).toBe(2000);
  expect(retryAfterMs(['0.5'], now)).toBe(500);
  expect(retryAfterMs('Thu, 01 Jan 2026 00:00:10 GMT', now)).toBe(10_000);
  expect(retryAfterMs('Wed, 31 Dec 2025 23:59:00 GMT', now)).toBe(0);
  expect(retryAfterMs('soon', now)).toBe(0);
  expect(retryAfterMs(undefined, now)).toBe(0);
});

test('the metrics show the limit in force', async () => {
  const { store } = counted();
  const registry = new Registry();
  const plain = createLimiter({ store, name: 'm-plain', limit: 100, windowMs: 1000 });
  const limiter = createLimiter({ store, name: 'm-adaptive', limit: 100, windowMs: 1000, adaptive: { min: 10, max: 200, decrease: 0.5 } });
  const metrics = registerMetrics({ registry, limiters: [plain, limiter] });
  await limiter.report('throttled');
  const text = await registry.metrics();
  expect(text).toContain('bulk_limiter_limit_in_force{limiter="m-plain"} 100');
  expect(text).toContain('bulk_limiter_limit_in_force{limiter="m-adaptive"} 50');
  metrics.close();
});
