/**
 * `limiter.report(outcome)` and `limiter.limitInForce()`: what the upstream answered, sent to the store's
 * report.lua (the adaptive limit's shared state: lua/includes/adaptive.lua). The script paces changes by time
 * (one cut and one rise per interval whoever reports), so this process sends at most one report of a kind per
 * intervalMs/8 (a throttled one with a longer Retry-After always goes): a busy process's thousand ok reports
 * a second cost a handful of script calls.
 */
import { InputError, describeValue } from '../errors';
import type { LimiterSpec, LimiterStore, Logger } from '../types';

export type ReportOutcome = 'ok' | 'throttled';

export interface ReportOptions {
  /** The upstream's Retry-After in ms: the limit does not rise before it has passed. @defaultValue `0` */
  readonly retryAfterMs?: number;
}

export interface AdaptiveReports {
  report(outcome: ReportOutcome, opts?: ReportOptions): Promise<number>;
  read(): Promise<number>;
  /** The limit in force as this process last heard it (the configured limit before any report). */
  readonly known: number;
}

export function createAdaptiveReports(store: LimiterStore, spec: LimiterSpec, now: () => number, logger: Logger): AdaptiveReports {
  let known = spec.limit;
  let lastOk = -Infinity;
  let lastThrottled = -Infinity;
  let lastRetry = 0;
  const gap = spec.adaptive ? spec.adaptive.intervalMs / 8 : 0;
  const send = (outcome: 'ok' | 'throttled' | 'read', retryAfterMs: number): Promise<number> =>
    store.report!({ outcome, retryAfterMs }).then(
      (status) => (known = status.limit),
      (error: unknown) => {
        // a report lost is an outcome unheard: the limit keeps its value (the next report may move it)
        logger.warn?.(`bulk-limiter: report to the adaptive limit of ${spec.name} failed: ${(error as Error)?.message ?? String(error)}`);
        return known;
      },
    );
  return {
    get known() {
      return known;
    },
    report(outcome, opts) {
      if (outcome !== 'ok' && outcome !== 'throttled') {
        return Promise.reject(new InputError('ERR_BL_BAD_OUTCOME', `Expected \`outcome\` to be 'ok' or 'throttled', got ${describeValue(outcome)}`));
      }
      const retry = opts?.retryAfterMs ?? 0;
      if (typeof retry !== 'number' || !Number.isFinite(retry) || retry < 0) {
        return Promise.reject(
          new InputError('ERR_BL_BAD_RETRY_AFTER_MS', `Expected \`retryAfterMs\` to be a number ≥ 0, got ${describeValue(retry)}`),
        );
      }
      if (!spec.adaptive || !store.report) return Promise.resolve(spec.limit);
      const retryAfterMs = Math.min(Math.ceil(retry), 86_400_000);
      const t = now();
      if (outcome === 'ok') {
        if (t - lastOk < gap) return Promise.resolve(known);
        lastOk = t;
      } else {
        if (t - lastThrottled < gap && retryAfterMs <= lastRetry) return Promise.resolve(known);
        lastThrottled = t;
        lastRetry = retryAfterMs;
      }
      return send(outcome, retryAfterMs);
    },
    read() {
      if (!spec.adaptive || !store.report) return Promise.resolve(spec.limit);
      return send('read', 0);
    },
  };
}
