/**
 * `bulk-limiter/prometheus`: the limiters', workers' and dispatchers' metrics on a prom-client Registry.
 *
 * Counting on the request path is a few additions into arrays (through `limiter.observe`); series are built
 * only when Prometheus scrapes, and `bulk_limiter_jobs`, the oldest waiting job and the dispatcher lag read the
 * store then. Group ids
 * are untrusted, so only the `topGroups` busiest groups get series of their own (src/metrics/top-groups.ts).
 */
import type { Metric } from 'prom-client';
import type { Limiter } from '../limiter/limiter';
import { Collector, HistogramCounts, type Sample } from './collector';
import { validateMetricsOptions, type MetricsOptions } from './metrics-options';
import { countDispatcher, countWorker, type JobTotals } from './queue-totals';
import { TopGroups, outcomeOf } from './top-groups';
import { withTimeout } from '../util/store-call';
import type { JobCounts } from '../types';

export { OTHER_GROUP } from '../limiter/group-id';
export type { MetricsOptions } from './metrics-options';

export interface Metrics {
  /** Counts workers and dispatchers started after `registerMetrics` too. */
  add(more: Pick<MetricsOptions, 'workers' | 'dispatchers'>): void;
  /** Stops counting and removes the metrics from the registry. */
  close(): void;
}

/** Store call durations (seconds): sub-millisecond for the MemoryStore, about a millisecond on Redis. */
const STORE_BUCKETS = [0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1];
const OUTAGE_POLICIES = ['outage:allow', 'outage:deny', 'outage:local'] as const;
const JOB_STATES = ['delayed', 'pending', 'ready', 'active', 'completed', 'dead'] as const;

/** What one limiter's observer counts. */
interface LimiterCounts {
  readonly limiter: Limiter;
  /** The `policy` label's values: 'global', 'concurrency', each rule's name, then the outage policies. */
  readonly policies: readonly string[];
  /** [outcome * policies.length + policy] */
  readonly decisions: number[];
  /** With classes: the `class` label's values (config, never request data) and [outcome * classes.length + class]. */
  readonly classes: readonly string[];
  readonly classDecisions: number[];
  readonly groups: TopGroups;
  readonly store: HistogramCounts;
  storeErrors: number;
  degraded: boolean;
}

export function registerMetrics(options: MetricsOptions): Metrics {
  const { registry, limiters, workers = [], dispatchers = [], topGroups } = validateMetricsOptions(options);
  const cleanups: Array<() => void> = [];
  const perLimiter = limiters.map((limiter): LimiterCounts => {
    const policies = policyLabels(limiter);
    const policyIndex = new Map(policies.map((p, i) => [p, i]));
    const overrideRule = policyIndex.get('override') ?? 0;
    const classes = [...(limiter.spec.classes?.keys() ?? [])];
    const classIndex = new Map(classes.map((name, i) => [name, i]));
    const c: LimiterCounts = {
      limiter,
      policies,
      decisions: new Array<number>(3 * policies.length).fill(0),
      classes,
      classDecisions: new Array<number>(3 * classes.length).fill(0),
      groups: new TopGroups(topGroups),
      store: new HistogramCounts(STORE_BUCKETS),
      storeErrors: 0,
      degraded: false,
    };
    cleanups.push(
      limiter.observe({
        decision(d, fallback) {
          const outcome = outcomeOf(d);
          // An admission passed every policy: 'global'. A denial or deferral names the policy that said no.
          const policy = fallback !== undefined ? `outage:${fallback}` : d.allowed ? 'global' : (d.policy ?? 'global');
          c.decisions[outcome * policies.length + (policyIndex.get(policy) ?? overrideRule)]! += 1;
          const k = d.class === undefined ? undefined : classIndex.get(d.class);
          if (k !== undefined) c.classDecisions[outcome * classes.length + k]! += 1;
          c.groups.add(d.group, outcome);
        },
        storeCall(ms, failed) {
          c.store.observe(ms / 1000);
          if (failed) c.storeErrors += 1;
        },
      }),
    );
    const onDegraded = (): void => {
      c.degraded = true;
    };
    const onRecovered = (): void => {
      c.degraded = false;
    };
    limiter.on('degraded', onDegraded).on('recovered', onRecovered);
    cleanups.push(() => limiter.off('degraded', onDegraded).off('recovered', onRecovered));
    return c;
  });

  const jobTotals = new Map<string, JobTotals>();
  const totalsOf = (limiter: Limiter): JobTotals => {
    let t = jobTotals.get(limiter.name);
    if (t === undefined) {
      t = {
        completed: 0,
        failed: 0,
        retriedError: 0,
        retriedSnooze: 0,
        dead: 0,
        stalled: 0,
        moved: 0,
        promoted: 0,
        runs: new Map(),
        lastMoveAt: Date.now(),
        hasDispatcher: false,
      };
      jobTotals.set(limiter.name, t);
    }
    return t;
  };
  const limiterOfTotals = new Map<string, Limiter>();
  const add = (more: Pick<MetricsOptions, 'workers' | 'dispatchers'>): void => {
    for (const { limiter, worker } of more.workers ?? []) cleanups.push(countWorker(worker, totalsOf(limiter)));
    for (const { limiter, dispatcher } of more.dispatchers ?? []) cleanups.push(countDispatcher(dispatcher, totalsOf(limiter)));
    for (const { limiter } of [...(more.workers ?? []), ...(more.dispatchers ?? [])]) limiterOfTotals.set(limiter.name, limiter);
  };
  add({ workers, dispatchers });

  const byLimiter = (read: (c: LimiterCounts) => Sample[]) => (): Sample[] => perLimiter.flatMap(read);
  /** Read from each limiter's store at scrape time; a limiter whose store fails is left out of this scrape. */
  const byCounts = (read: (counts: JobCounts, limiter: string) => Sample[]) => async (): Promise<Sample[]> => {
    const all = await Promise.all(limiters.map(async (limiter) => [limiter.name, await countsOf(limiter)] as const));
    return all.flatMap(([limiter, counts]) => (counts === undefined ? [] : read(counts, limiter)));
  };
  const byTotals = (read: (t: JobTotals, limiter: string) => Sample[]) => (): Sample[] => [...jobTotals].flatMap(([name, t]) => read(t, name));
  const total = (field: 'completed' | 'failed' | 'dead' | 'stalled' | 'moved' | 'promoted') =>
    byTotals((t, limiter) => [{ labels: { limiter }, value: t[field] }]);

  const collectors = [
    new Collector(
      'bulk_limiter_decisions_total',
      'Decisions by limiter, outcome (allowed, denied, deferred) and policy (the one that said no: global, concurrency or a rule; global for admissions; outage:<onStoreError> when the outage policy decided)',
      'counter',
      byLimiter((c) =>
        c.decisions.flatMap((value, i) => {
          const labels = {
            limiter: c.limiter.name,
            outcome: ['allowed', 'denied', 'deferred'][Math.floor(i / c.policies.length)]!,
            policy: c.policies[i % c.policies.length]!,
          };
          return value > 0 || i % c.policies.length === 0 ? [{ labels, value }] : [];
        }),
      ),
    ),
    new Collector(
      'bulk_limiter_class_decisions_total',
      'Decisions of a limiter with priority classes by class (its `classes` and default) and outcome (allowed, denied, deferred)',
      'counter',
      byLimiter((c) =>
        c.classDecisions.map((value, i) => ({
          labels: {
            limiter: c.limiter.name,
            class: c.classes[i % c.classes.length]!,
            outcome: ['allowed', 'denied', 'deferred'][Math.floor(i / c.classes.length)]!,
          },
          value,
        })),
      ),
    ),
    new Collector(
      'bulk_limiter_group_decisions_total',
      `Decisions of the busiest groups by outcome; every other group is counted as group="*other*"`,
      'counter',
      byLimiter(
        (c) => (
          c.groups.rebalance(),
          c.groups.series().map(([group, outcome, value]) => ({ labels: { limiter: c.limiter.name, group, outcome }, value }))
        ),
      ),
    ),
    new Collector(
      'bulk_limiter_store_seconds',
      'Duration of store admission calls (failed and timed-out calls included)',
      'histogram',
      byLimiter((c) => c.store.samples('bulk_limiter_store_seconds', { limiter: c.limiter.name })),
    ),
    new Collector(
      'bulk_limiter_store_errors_total',
      'Store admission calls that failed or timed out',
      'counter',
      byLimiter((c) => [{ labels: { limiter: c.limiter.name }, value: c.storeErrors }]),
    ),
    new Collector(
      'bulk_limiter_degraded',
      '1 while the store is skipped (breaker open) and onStoreError answers',
      'gauge',
      byLimiter((c) => [{ labels: { limiter: c.limiter.name }, value: c.degraded ? 1 : 0 }]),
      'max',
    ),
    new Collector(
      'bulk_limiter_limit_in_force',
      'The limit per window in force: with the adaptive option the shared value read from the store at scrape time (docs/adaptive.md), else the configured limit',
      'gauge',
      async () => {
        const all = await Promise.all(limiters.map(async (limiter) => [limiter.name, await limiter.limitInForce()] as const));
        return all.map(([limiter, value]) => ({ labels: { limiter }, value }));
      },
      'max',
    ),
    new Collector(
      'bulk_limiter_overrides',
      'Overrides in force (limiter.setOverride), read from the store at scrape time; none when the store fails',
      'gauge',
      async () => {
        const all = await Promise.all(limiters.map(async (limiter) => [limiter.name, await countOverrides(limiter)] as const));
        return all.flatMap(([limiter, value]) => (value === undefined ? [] : [{ labels: { limiter }, value }]));
      },
      'max',
    ),
    new Collector(
      'bulk_limiter_jobs',
      'Jobs by state, read from the store at scrape time',
      'gauge',
      byCounts((counts, limiter) => JOB_STATES.map((state) => ({ labels: { limiter, state }, value: counts[state] }))),
      'max',
    ),
    new Collector(
      'bulk_limiter_oldest_waiting_seconds',
      'How long the oldest job that is due but not started has waited (0 when none is due), read from the store at scrape time',
      'gauge',
      byCounts((counts, limiter) => [{ labels: { limiter }, value: counts.oldestWaitingMs / 1000 }]),
      'max',
    ),
    new Collector('bulk_limiter_jobs_completed_total', 'Jobs whose handler resolved', 'counter', total('completed')),
    new Collector('bulk_limiter_jobs_failed_total', 'Handler runs that threw (not snoozes)', 'counter', total('failed')),
    new Collector(
      'bulk_limiter_jobs_retried_total',
      'Jobs sent back to wait: after an error (kind="error") or a RetryLaterError (kind="snooze")',
      'counter',
      byTotals((t, limiter) => [
        { labels: { limiter, kind: 'error' }, value: t.retriedError },
        { labels: { limiter, kind: 'snooze' }, value: t.retriedSnooze },
      ]),
    ),
    new Collector(
      'bulk_limiter_jobs_stalled_total',
      'Expired leases returned by dispatchers (a worker crashed or hung)',
      'counter',
      total('stalled'),
    ),
    new Collector(
      'bulk_limiter_jobs_dead_total',
      'Jobs dead-lettered (by workers, and by dispatchers after too many stalls)',
      'counter',
      total('dead'),
    ),
    new Collector(
      'bulk_limiter_job_run_seconds',
      'Handler run time by job type',
      'histogram',
      byTotals((t, limiter) => [...t.runs].flatMap(([type, h]) => h.samples('bulk_limiter_job_run_seconds', { limiter, type }))),
    ),
    new Collector('bulk_limiter_dispatcher_moved_total', 'Jobs moved to the ready list', 'counter', total('moved')),
    new Collector('bulk_limiter_dispatcher_promoted_total', 'Delayed jobs that came due (delayed → pending)', 'counter', total('promoted')),
    new Collector(
      'bulk_limiter_dispatcher_lag_seconds',
      'While jobs are pending (due, waiting for budget or room in ready): seconds since a dispatcher of this process last moved one to ready; 0 otherwise',
      'gauge',
      async () => {
        const out: Sample[] = [];
        for (const [name, t] of jobTotals) {
          const limiter = limiterOfTotals.get(name);
          if (!t.hasDispatcher || limiter === undefined) continue;
          const counts = await countsOf(limiter);
          if (counts === undefined) continue;
          out.push({ labels: { limiter: name }, value: counts.pending > 0 ? (Date.now() - t.lastMoveAt) / 1000 : 0 });
        }
        return out;
      },
      'max',
    ),
  ];
  for (const collector of collectors) {
    // The Registry reads only name, help, type, aggregator and get() (see src/metrics/collector.ts).
    registry.registerMetric(collector as unknown as Metric);
  }
  return {
    add(more) {
      const { workers: w, dispatchers: d } = validateMetricsOptions({ registry, limiters: [], ...more });
      add({ workers: w, dispatchers: d });
    },
    close() {
      cleanups.splice(0).forEach((cleanup) => cleanup());
      for (const collector of collectors) registry.removeSingleMetric(collector.name);
    },
  };
}

/** The policies a limiter's decisions can name: bounded by its configuration, never by requests. */
function policyLabels(limiter: Limiter): string[] {
  const rules = [...(limiter.spec.rules ?? []), ...[...(limiter.spec.plans?.values() ?? [])].flatMap((plan) => plan.rules ?? [])];
  // 'blocked' and 'override': an override's block, and a rule of an override (docs/runtime-policies.md), whatever its name
  return [...new Set(['global', 'concurrency', ...rules.map((rule) => rule.name), 'blocked', 'override']), ...OUTAGE_POLICIES];
}

/** The store's job counts within the limiter's timeoutMs; undefined when it fails (the scrape goes on). */
async function countsOf(limiter: Limiter): Promise<JobCounts | undefined> {
  try {
    return await withTimeout(limiter.counts(), limiter.options.timeoutMs);
  } catch {
    return undefined;
  }
}

/** The overrides a limiter holds, page by page (at most `tuning.maxOverrides`); undefined when the store fails. */
async function countOverrides(limiter: Limiter): Promise<number | undefined> {
  try {
    let n = 0;
    let cursor: string | undefined;
    do {
      const page = await limiter.listOverrides(cursor === undefined ? { count: 1000 } : { cursor, count: 1000 });
      n += page.overrides.length;
      cursor = page.cursor;
    } while (cursor !== undefined);
    return n;
  } catch {
    return undefined;
  }
}
