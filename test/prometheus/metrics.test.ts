/**
 * registerMetrics on a real prom-client Registry: exact counts after known sequences, bounded group labels
 * under 100,000 distinct groups, outage metrics, worker and dispatcher metrics, and validation.
 */
import { Registry } from 'prom-client';
import { createLimiter } from '../../src/limiter/limiter';
import { OTHER_GROUP, registerMetrics } from '../../src/metrics/prometheus';
import { Dispatcher } from '../../src/queue/dispatcher';
import { Worker } from '../../src/queue/worker';
import { MemoryStore } from '../../src/memory/memory-store';
import { FaultStore } from '../limiter/fault-store';
import { until } from '../queue/fixtures/queues';

const silent = { warn: () => undefined, error: () => undefined };
const NOW = 1_800_000_000_000;

/** The value of one series in Prometheus text, e.g. `bulk_limiter_decisions_total{limiter="a",outcome="allowed",policy="global"}`. */
function value(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}
const sumOf = (lines: string[]): number => lines.reduce((s, l) => s + Number(l.split(' ').pop()), 0);
const seriesOf = (text: string, name: string): string[] => text.split('\n').filter((l) => l.startsWith(`${name}{`));

test('decisions by class: one series per class of the config and outcome, none for a limiter without classes', async () => {
  const registry = new Registry();
  const store = new MemoryStore({ clock: () => NOW });
  const limiter = createLimiter({
    store,
    name: 'cls',
    limit: 3,
    tuning: { burst: 3, reserve: 1 },
    windowMs: 60_000,
    classes: { critical: { share: 0.5 } },
  });
  const plain = createLimiter({ store, name: 'plain', limit: 3, windowMs: 60_000 });
  registerMetrics({ registry, limiters: [limiter, plain] });
  for (let i = 0; i < 3; i++) await limiter.check('a', { class: 'critical' });
  for (let i = 0; i < 2; i++) await limiter.check('b'); // denied: the bucket is empty
  await plain.check('a');
  const text = await registry.metrics();
  expect(value(text, 'bulk_limiter_class_decisions_total{limiter="cls",class="critical",outcome="allowed"}')).toBe(3);
  expect(value(text, 'bulk_limiter_class_decisions_total{limiter="cls",class="default",outcome="denied"}')).toBe(2);
  expect(seriesOf(text, 'bulk_limiter_class_decisions_total')).toHaveLength(6);
  expect(seriesOf(text, 'bulk_limiter_class_decisions_total').some((l) => l.includes('limiter="plain"'))).toBe(false);
});

test('exact decision counts by outcome and policy, per group, store calls and job states', async () => {
  const registry = new Registry();
  const limiter = createLimiter({
    store: new MemoryStore({ clock: () => NOW }),
    name: 'exact',
    limit: 3,
    tuning: { burst: 3, reserve: 1 },
    windowMs: 60_000,
  });
  const metrics = registerMetrics({ registry, limiters: [limiter] });
  for (let i = 0; i < 5; i++) await limiter.check('a'); // 3 allowed (a alone may borrow), 2 denied
  await limiter.check('b');
  await limiter.check('a', { defer: { type: 'later', payload: {} } });
  const text = await registry.metrics();
  expect(value(text, 'bulk_limiter_decisions_total{limiter="exact",outcome="allowed",policy="global"}')).toBe(3);
  expect(value(text, 'bulk_limiter_decisions_total{limiter="exact",outcome="denied",policy="global"}')).toBe(3);
  expect(value(text, 'bulk_limiter_decisions_total{limiter="exact",outcome="deferred",policy="global"}')).toBe(1);
  expect(value(text, 'bulk_limiter_group_decisions_total{limiter="exact",group="a",outcome="allowed"}')).toBe(3);
  expect(value(text, 'bulk_limiter_group_decisions_total{limiter="exact",group="a",outcome="denied"}')).toBe(2);
  expect(value(text, 'bulk_limiter_group_decisions_total{limiter="exact",group="a",outcome="deferred"}')).toBe(1);
  expect(value(text, 'bulk_limiter_group_decisions_total{limiter="exact",group="b",outcome="denied"}')).toBe(1);
  // 8 store calls for 7 checks: the deferring one went without its payload first (a was denied by plain checks,
  // which the payload-saving guess does not follow), then with it. Each check is one decision above.
  expect(value(text, 'bulk_limiter_store_seconds_count{limiter="exact"}')).toBe(8);
  expect(value(text, 'bulk_limiter_store_seconds_bucket{limiter="exact",le="+Inf"}')).toBe(8);
  expect(value(text, 'bulk_limiter_store_errors_total{limiter="exact"}')).toBe(0);
  expect(value(text, 'bulk_limiter_degraded{limiter="exact"}')).toBe(0);
  expect(
    value(text, 'bulk_limiter_jobs{limiter="exact",state="delayed"}')! + value(text, 'bulk_limiter_jobs{limiter="exact",state="pending"}')!,
  ).toBe(1);
  expect(value(text, 'bulk_limiter_jobs{limiter="exact",state="dead"}')).toBe(0);
  metrics.close();
  expect(await registry.metrics()).not.toContain('bulk_limiter');
  await limiter.check('a');
  // Closed: no longer observed, and the same registry takes a new registration.
  registerMetrics({ registry, limiters: [limiter] }).close();
});

test('100,000 distinct groups: at most topGroups + 1 group label values, the busy groups keep theirs, counters never go down', async () => {
  const registry = new Registry();
  const limiter = createLimiter({
    store: new MemoryStore({ clock: () => NOW }),
    name: 'many',
    limit: 1_000_000,
    windowMs: 1000,
    tuning: { maxGroups: 200_000 },
  });
  registerMetrics({ registry, limiters: [limiter], topGroups: 5 });
  const heavy = ['h1', 'h2', 'h3'];
  let previousOther = 0;
  let total = 0;
  for (let scrape = 0; scrape < 4; scrape++) {
    for (let i = 0; i < 25_000; i++) {
      await limiter.check(`u-${scrape}-${i}`); // each id once: a Sybil flood of new tenants
      total += 1;
      if (i % 10 === 9)
        for (const h of heavy) {
          await limiter.check(h);
          total += 1;
        }
    }
    const text = await registry.metrics();
    const series = seriesOf(text, 'bulk_limiter_group_decisions_total');
    const groups = new Set(series.map((l) => /group="([^"]*)"/.exec(l)![1]));
    expect(groups.size).toBeLessThanOrEqual(6);
    const other = sumOf(series.filter((l) => l.includes(`group="${OTHER_GROUP}"`)));
    expect(other).toBeGreaterThanOrEqual(previousOther);
    previousOther = other;
    // Every decision is counted in the unlabelled metric; a group's series ends when it is evicted.
    expect(sumOf(seriesOf(text, 'bulk_limiter_decisions_total'))).toBe(total);
    expect(sumOf(series)).toBeLessThanOrEqual(total);
    if (scrape > 0) for (const h of heavy) expect(groups.has(h)).toBe(true);
  }
}, 60_000);

test('an outage: decisions by the onStoreError policy, store errors, degraded 1, then 0 once recovered', async () => {
  const registry = new Registry();
  const store = new FaultStore();
  const limiter = createLimiter({
    store,
    name: 'outage-metrics',
    limit: 10,
    tuning: { burst: 10 },
    windowMs: 1000,
    onStoreError: 'local',
    timeoutMs: 40,
    logger: silent,
  });
  registerMetrics({ registry, limiters: [limiter] });
  await limiter.check('a');
  store.mode = 'throw';
  for (let i = 0; i < 4; i++) await limiter.check('a');
  let text = await registry.metrics();
  expect(value(text, 'bulk_limiter_decisions_total{limiter="outage-metrics",outcome="allowed",policy="global"}')).toBe(1);
  // The fallback admits nothing for timeoutMs + windowMs after the opening (one limit with the store): 503s.
  expect(value(text, 'bulk_limiter_decisions_total{limiter="outage-metrics",outcome="denied",policy="outage:local"}')).toBe(4);
  expect(value(text, 'bulk_limiter_store_errors_total{limiter="outage-metrics"}')).toBe(1);
  expect(value(text, 'bulk_limiter_store_seconds_count{limiter="outage-metrics"}')).toBe(2); // the breaker skips the rest
  expect(value(text, 'bulk_limiter_degraded{limiter="outage-metrics"}')).toBe(1);
  // The job counts fail with the store: the scrape still answers, without them.
  expect(seriesOf(text, 'bulk_limiter_jobs')).toEqual([]);
  store.mode = 'ok';
  await new Promise<void>((resolve) => limiter.on('recovered', () => resolve()));
  text = await registry.metrics();
  expect(value(text, 'bulk_limiter_degraded{limiter="outage-metrics"}')).toBe(0);
  await limiter.close();
});

test('worker and dispatcher: completed, failed, retried, dead, run-time histogram, moves and lag', async () => {
  const registry = new Registry();
  // the store's clock stands still while the four are deferred (however slow the machine), then runs on
  let frozen: number | undefined = Date.now();
  const store = new MemoryStore({ clock: () => frozen ?? Date.now() });
  const limiter = createLimiter({ store, name: 'jobs-metrics', limit: 1, tuning: { burst: 1 }, windowMs: 100 });
  await limiter.check('g');
  for (const type of ['ok', 'ok', 'flaky', 'broken']) await limiter.check('g', { defer: { type, payload: {} } });
  frozen = undefined;
  let flaky = 0;
  const worker = new Worker({
    limiter,
    logger: silent,
    maxAttempts: 2,
    backoff: () => 1,
    idleWaitMs: 100,
    handlers: {
      ok: async () => {
        await new Promise((r) => setTimeout(r, 20));
        return 'done';
      },
      flaky: async () => {
        if (flaky++ === 0) throw new Error('once');
      },
      broken: async () => {
        throw new Error('always');
      },
    },
  });
  const dispatcher = new Dispatcher({ limiter, pollMs: 20, logger: silent });
  const metrics = registerMetrics({ registry, limiters: [limiter], workers: [{ limiter, worker }] });
  metrics.add({ dispatchers: [{ limiter, dispatcher }] }); // one started later
  dispatcher.start();
  worker.start();
  try {
    await until('all done', async () => {
      const c = await limiter.counts();
      return c.completed === 3 && c.dead === 1;
    });
    const text = await registry.metrics();
    const at = (name: string, labels = '') => value(text, `${name}{limiter="jobs-metrics"${labels}}`);
    expect(at('bulk_limiter_jobs_completed_total')).toBe(3);
    expect(at('bulk_limiter_jobs_failed_total')).toBe(3); // flaky once, broken twice
    expect(at('bulk_limiter_jobs_retried_total', ',kind="error"')).toBe(2);
    expect(at('bulk_limiter_jobs_dead_total')).toBe(1);
    expect(at('bulk_limiter_jobs_stalled_total')).toBe(0);
    expect(value(text, 'bulk_limiter_job_run_seconds_count{limiter="jobs-metrics",type="ok"}')).toBe(2);
    expect(value(text, 'bulk_limiter_job_run_seconds_bucket{limiter="jobs-metrics",type="ok",le="0.01"}')).toBe(0); // each ran ≥ 20 ms
    expect(value(text, 'bulk_limiter_job_run_seconds_count{limiter="jobs-metrics",type="broken"}')).toBe(2);
    expect(at('bulk_limiter_dispatcher_moved_total')).toBe(6); // 4 jobs + 2 retries
    expect(at('bulk_limiter_dispatcher_lag_seconds')).toBe(0); // nothing waits
    expect(at('bulk_limiter_jobs', ',state="completed"')).toBe(3);
  } finally {
    metrics.close();
    await dispatcher.stop();
    await worker.close(1000);
  }
});

test('stalls: an expired lease returned by the dispatcher counts as stalled, and as dead past maxStalls', async () => {
  const registry = new Registry();
  let frozen: number | undefined = Date.now();
  const store = new MemoryStore({ clock: () => frozen ?? Date.now() });
  const limiter = createLimiter({ store, name: 'stall-metrics', limit: 1, tuning: { burst: 1 }, windowMs: 100 });
  await limiter.check('g');
  await limiter.check('g', { defer: { type: 'lost', payload: {} } });
  frozen = undefined;
  const dispatcher = new Dispatcher({ limiter, pollMs: 20, reclaimIntervalMs: 20, maxStalls: 0, logger: silent });
  const metrics = registerMetrics({ registry, limiters: [limiter], dispatchers: [{ limiter, dispatcher }] });
  dispatcher.start();
  try {
    // A worker that claims the job and dies: nothing acknowledges it, its lease expires.
    await until('claimed', async () => (await limiter.queue.claimMany(30, 1)).claimed.length === 1);
    await until('dead', async () => (await limiter.counts()).dead === 1);
    const text = await registry.metrics();
    expect(value(text, 'bulk_limiter_jobs_stalled_total{limiter="stall-metrics"}')).toBe(1);
    expect(value(text, 'bulk_limiter_jobs_dead_total{limiter="stall-metrics"}')).toBe(1);
  } finally {
    metrics.close();
    await dispatcher.stop();
  }
});

test('dispatcher lag: grows while due jobs wait and nothing moves (ready full, no worker), 0 when nothing waits', async () => {
  const registry = new Registry();
  const limiter = createLimiter({ store: new MemoryStore(), name: 'lag-metrics', limit: 1, tuning: { burst: 1 }, windowMs: 50 });
  await limiter.check('g');
  for (let i = 0; i < 2; i++) await limiter.check('g', { defer: { type: 't', payload: {} } });
  const dispatcher = new Dispatcher({ limiter, readyMax: 1, pollMs: 20, logger: silent });
  const metrics = registerMetrics({ registry, limiters: [limiter], dispatchers: [{ limiter, dispatcher }] });
  dispatcher.start();
  try {
    await until('one ready, one pending', async () => {
      const c = await limiter.counts();
      return c.ready === 1 && c.pending === 1;
    });
    await new Promise((r) => setTimeout(r, 300));
    const lag = value(await registry.metrics(), 'bulk_limiter_dispatcher_lag_seconds{limiter="lag-metrics"}')!;
    expect(lag).toBeGreaterThanOrEqual(0.25);
    expect(lag).toBeLessThan(5);
  } finally {
    metrics.close();
    await dispatcher.stop();
  }
});

test.each([
  [{ registry: {}, limiters: [] }, 'ERR_BL_REGISTRY'],
  [{ registry: new Registry(), limiters: [{}] }, 'ERR_BL_LIMITERS'],
  [{ registry: new Registry(), limiters: [], topGroups: -1 }, 'ERR_BL_TOP_GROUPS'],
  [{ registry: new Registry(), limiters: [], workers: [{}] }, 'ERR_BL_WORKERS'],
  [{ registry: new Registry(), limiters: [], registery: 1 }, 'ERR_BL_UNKNOWN_OPTION'],
])('bad options fail at construction: %p → %s', (options, code) => {
  expect(() => registerMetrics(options as never)).toThrow(expect.objectContaining({ code }));
});

test('two limiters of one name are refused (the name is the limiter label)', () => {
  const a = createLimiter({ limit: 1 });
  const b = createLimiter({ limit: 1 });
  expect(() => registerMetrics({ registry: new Registry(), limiters: [a, b] })).toThrow(/"default" twice/);
});

test('bulk_limiter_oldest_waiting_seconds: the age of the oldest due job not started, from the store at scrape time', async () => {
  const registry = new Registry();
  let now = NOW;
  const limiter = createLimiter({
    store: new MemoryStore({ clock: () => now }),
    name: 'oldest',
    limit: 1,
    tuning: { burst: 1, reserve: 0 },
    windowMs: 60_000,
  });
  registerMetrics({ registry, limiters: [limiter] });
  expect(value(await registry.metrics(), 'bulk_limiter_oldest_waiting_seconds{limiter="oldest"}')).toBe(0);
  await limiter.check('a');
  await limiter.check('a', { defer: { type: 'later', payload: {} } }); // denied: deferred, due at once
  await limiter.enqueue('b', { type: 'later', payload: {}, delayMs: 60_000 }); // not due for a minute
  now += 2500;
  expect(value(await registry.metrics(), 'bulk_limiter_oldest_waiting_seconds{limiter="oldest"}')).toBe(2.5);
});

test("a denial's policy label names the policy that said no: a rule, concurrency or the global share", async () => {
  const registry = new Registry();
  const rules = [{ name: 'per-minute', limit: 1, windowMs: 60_000 }];
  const limiter = createLimiter({ store: new MemoryStore({ clock: () => NOW }), name: 'policies', limit: 100, windowMs: 60_000, rules });
  const metrics = registerMetrics({ registry, limiters: [limiter] });
  await limiter.check('a'); // allowed
  await limiter.check('a'); // denied by the rule
  const held = await limiter.check('b', { concurrency: 1 }); // allowed, holds b's one slot
  await limiter.check('b', { concurrency: 1 }); // denied by concurrency
  const text = await registry.metrics();
  const series = (outcome: string, policy: string) =>
    value(text, `bulk_limiter_decisions_total{limiter="policies",outcome="${outcome}",policy="${policy}"}`);
  expect([series('allowed', 'global'), series('denied', 'per-minute'), series('denied', 'concurrency'), series('denied', 'global')]).toEqual([
    2, 1, 1, 0,
  ]);
  await limiter.release(held);
  metrics.close();
});
