/**
 * The breaker in front of the store: a failed store call opens it (the outage's warning, logged once), and
 * while it is open a background probe asks the store every PROBE_MIN_MS … PROBE_MAX_MS (doubling); the first
 * probe that answers closes it (WRN_BL_STORE_RECOVERED). ./outage.ts skips the store while it is open.
 */
import type { StoreError } from '../../errors';
import type { Scheduler } from '../../util/scheduler';
import { toStoreError, withTimeout } from '../../util/store-call';
import type { Logger } from '../../types';

/** The background probe's first delay and its cap (it doubles in between). */
export const PROBE_MIN_MS = 100;
export const PROBE_MAX_MS = 1000;

export interface BreakerOptions {
  readonly timeoutMs: number;
  /** A cheap read that succeeds when the store answers again. */
  readonly probe: () => Promise<unknown>;
  readonly scheduler: Scheduler;
  readonly logger: Logger;
  readonly limiterName: string;
  /** Logged when the breaker opens (the `onStoreError` policy's warning). */
  readonly warning: string;
  readonly onDegraded?: ((error: StoreError) => void) | undefined;
  readonly onRecovered?: ((downMs: number) => void) | undefined;
}

export interface Breaker {
  /** `true` while the breaker is open (the store is skipped). */
  readonly failing: boolean;
  /** The last store failure, if any. */
  readonly lastError: StoreError | undefined;
  /** A store call failed (or timed out): opens the breaker, once per outage, and starts probing. */
  open(error: unknown): void;
  /** While open: a probe is pending (after close(), probing resumes only while calls still come). */
  keepProbing(): void;
  /** Stops the background probe. */
  close(): void;
}

export function createBreaker(options: BreakerOptions): Breaker {
  const { timeoutMs, probe, scheduler, logger, limiterName } = options;
  let failing = false;
  let failedAt = 0;
  let lastError: StoreError | undefined;
  /** Cancels the pending probe; undefined while none is pending. */
  let probeTimer: (() => void) | undefined;
  let probeDelayMs = PROBE_MIN_MS;
  let probing = false;

  const recover = (): void => {
    if (!failing) return;
    failing = false;
    probeTimer?.();
    probeTimer = undefined;
    logger.warn(`WRN_BL_STORE_RECOVERED: the store answers again (limiter "${limiterName}")`);
    options.onRecovered?.(scheduler.now() - failedAt);
  };

  const runProbe = (): void => {
    probeTimer = undefined;
    if (!failing) return;
    probing = true;
    const answer = probe();
    // A late answer counts too: a command queued offline runs as soon as the client reconnects.
    answer.then(recover, () => undefined);
    withTimeout(answer, timeoutMs, scheduler)
      .catch((error: unknown) => {
        lastError = toStoreError(error);
        probeDelayMs = Math.min(PROBE_MAX_MS, probeDelayMs * 2);
        schedule(probeDelayMs);
      })
      .finally(() => {
        probing = false;
      });
  };

  const schedule = (ms: number): void => {
    if (!failing || probeTimer) return;
    probeTimer = scheduler.setTimeout(runProbe, ms, { unref: true });
  };

  return {
    get failing() {
      return failing;
    },
    get lastError() {
      return lastError;
    },
    open(error) {
      lastError = toStoreError(error);
      if (failing) return;
      failing = true;
      failedAt = scheduler.now();
      logger.warn(`${options.warning} (limiter "${limiterName}": ${lastError.message})`);
      options.onDegraded?.(lastError);
      probeDelayMs = PROBE_MIN_MS;
      schedule(probeDelayMs);
    },
    keepProbing() {
      if (probeTimer === undefined && !probing) schedule(probeDelayMs);
    },
    close() {
      probeTimer?.();
      probeTimer = undefined;
    },
  };
}
