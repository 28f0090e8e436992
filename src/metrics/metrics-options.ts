/** The options of `registerMetrics` (bulk-limiter/prometheus) and their validation. */
import type { Registry } from 'prom-client';
import { ConfigError, describeValue } from '../errors';
import type { Limiter } from '../limiter';
import type { Dispatcher } from '../queue/dispatcher';
import type { Worker } from '../queue/worker';

export interface MetricsOptions {
  /** A prom-client `Registry` (e.g. `require('prom-client').register`). */
  readonly registry: Pick<Registry, 'registerMetric' | 'removeSingleMetric'>;
  /** The limiters to count (names must differ: the name is the `limiter` label). */
  readonly limiters: readonly Limiter[];
  /** Workers, each with the limiter whose jobs it runs. */
  readonly workers?: ReadonlyArray<{ readonly limiter: Limiter; readonly worker: Worker }>;
  /** Dispatchers, each with the limiter whose jobs it moves. */
  readonly dispatchers?: ReadonlyArray<{ readonly limiter: Limiter; readonly dispatcher: Dispatcher }>;
  /** Groups with series of their own in `bulk_limiter_group_decisions_total`, per limiter (0 … 1000). @defaultValue `10` */
  readonly topGroups?: number;
}

const OPTION_NAMES = new Set(['registry', 'limiters', 'workers', 'dispatchers', 'topGroups']);

/** The options checked once, with defaults; a bad one throws a ConfigError naming it. */
export function validateMetricsOptions(options: MetricsOptions): Required<MetricsOptions> {
  if (typeof options !== 'object' || options === null) {
    throw new ConfigError('ERR_BL_OPTIONS', `Expected options to be an object, got ${describeValue(options)}`);
  }
  for (const key of Object.keys(options)) {
    if (!OPTION_NAMES.has(key))
      throw new ConfigError('ERR_BL_UNKNOWN_OPTION', `Unknown option \`${key}\`; known options: ${[...OPTION_NAMES].join(', ')}`);
  }
  const { registry, limiters, workers = [], dispatchers = [], topGroups = 10 } = options;
  if (typeof registry?.registerMetric !== 'function' || typeof registry.removeSingleMetric !== 'function') {
    throw new ConfigError('ERR_BL_REGISTRY', `Expected \`registry\` to be a prom-client Registry, got ${describeValue(registry)}`);
  }
  const isLimiter = (l: unknown): l is Limiter => typeof (l as Limiter | undefined)?.observe === 'function';
  if (!Array.isArray(limiters) || !limiters.every(isLimiter)) {
    throw new ConfigError('ERR_BL_LIMITERS', `Expected \`limiters\` to be an array of limiters from createLimiter, got ${describeValue(limiters)}`);
  }
  const names = limiters.map((l) => l.name);
  const repeated = names.find((n, i) => names.indexOf(n) !== i);
  if (repeated !== undefined)
    throw new ConfigError('ERR_BL_LIMITERS', `Expected \`limiters\` to have different names (the \`limiter\` label), got "${repeated}" twice`);
  if (!Array.isArray(workers) || !workers.every((w) => isLimiter(w?.limiter) && typeof w.worker?.on === 'function')) {
    throw new ConfigError('ERR_BL_WORKERS', `Expected \`workers\` to be an array of { limiter, worker }, got ${describeValue(workers)}`);
  }
  if (!Array.isArray(dispatchers) || !dispatchers.every((d) => isLimiter(d?.limiter) && typeof d.dispatcher?.on === 'function')) {
    throw new ConfigError(
      'ERR_BL_DISPATCHERS',
      `Expected \`dispatchers\` to be an array of { limiter, dispatcher }, got ${describeValue(dispatchers)}`,
    );
  }
  if (!Number.isInteger(topGroups) || topGroups < 0 || topGroups > 1000) {
    throw new ConfigError('ERR_BL_TOP_GROUPS', `Expected \`topGroups\` to be an integer from 0 to 1000, got ${describeValue(topGroups)}`);
  }
  return { registry, limiters, workers, dispatchers, topGroups };
}
