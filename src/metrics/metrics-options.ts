/** The options of `registerMetrics` (bulk-limiter/prometheus) and their validation. */
import type { Registry } from 'prom-client';
import { ConfigError } from '../errors';
import type { Limiter } from '../limiter/limiter';
import { refuseUnknownOptions, type OptionNames } from '../util/option-names';
import type { Dispatcher } from '../queue/dispatcher';
import type { Worker } from '../queue/worker';
import { integer, optionsObject, refuse } from '../util/validate';

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

const OPTION_NAMES: OptionNames<MetricsOptions> = { registry: true, limiters: true, workers: true, dispatchers: true, topGroups: true };
export const METRICS_OPTION_NAMES: readonly string[] = Object.freeze(Object.keys(OPTION_NAMES));

/** The options checked once, with defaults; a bad one throws a ConfigError naming it. */
export function validateMetricsOptions(options: MetricsOptions): Required<MetricsOptions> {
  refuseUnknownOptions(optionsObject(options), METRICS_OPTION_NAMES, 'registerMetrics()');
  const { registry, limiters, workers = [], dispatchers = [] } = options;
  if (typeof registry?.registerMetric !== 'function' || typeof registry.removeSingleMetric !== 'function') {
    refuse('registry', 'a prom-client Registry', registry);
  }
  const isLimiter = (l: unknown): l is Limiter => typeof (l as Limiter | undefined)?.observe === 'function';
  if (!Array.isArray(limiters) || !limiters.every(isLimiter)) refuse('limiters', 'an array of limiters from createLimiter', limiters);
  const names = limiters.map((l) => l.name);
  const repeated = names.find((n, i) => names.indexOf(n) !== i);
  if (repeated !== undefined)
    throw new ConfigError('ERR_BL_LIMITERS', `Expected \`limiters\` to have different names (the \`limiter\` label), got "${repeated}" twice`);
  if (!Array.isArray(workers) || !workers.every((w) => isLimiter(w?.limiter) && typeof w.worker?.on === 'function')) {
    refuse('workers', 'an array of { limiter, worker }', workers);
  }
  if (!Array.isArray(dispatchers) || !dispatchers.every((d) => isLimiter(d?.limiter) && typeof d.dispatcher?.on === 'function')) {
    refuse('dispatchers', 'an array of { limiter, dispatcher }', dispatchers);
  }
  const topGroups = integer('topGroups', options.topGroups, { min: 0, max: 1000, fallback: 10 });
  return { registry, limiters, workers, dispatchers, topGroups };
}
