/**
 * The breaker in front of the store: a failed store call opens it, and while it is open a background probe
 * asks the store every PROBE_MIN_MS … PROBE_MAX_MS (doubling); the first probe that answers closes it, after
 * `closeDelayMs`. While Redis refuses writes the probe is a write (a read would close it at once). An episode
 * (its warning at the opening, WRN_BL_STORE_RECOVERED at its first close) lasts until the store has answered
 * for EPISODE_QUIET_MS: at most two warnings each.
 */
import type { StoreError } from '../../errors';
import type { Scheduler } from '../../util/scheduler';
import { refusesWrites, toStoreError, withTimeout } from '../../util/store-call';
import type { Logger } from '../../types';

/** The background probe's first delay and its cap (it doubles in between). */
export const PROBE_MIN_MS = 100;
export const PROBE_MAX_MS = 1000;
/** A failure within this long of the breaker closing continues the episode (no new warnings). */
export const EPISODE_QUIET_MS = 10_000;

export interface BreakerOptions {
  readonly timeoutMs: number;
  /** A cheap read that succeeds when the store answers again. */
  readonly probe: () => Promise<unknown>;
  /** A cheap write, probed instead while the store refuses writes (READONLY, NOREPLICAS). */
  readonly writeProbe?: (() => Promise<unknown>) | undefined;
  /** ms to wait before closing once the store answers. */
  readonly closeDelayMs?: (() => number) | undefined;
  readonly onOpen?: (() => void) | undefined;
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
  let closing = false;
  /** An opening before this continues the last episode. */
  let quietUntil = -Infinity;
  let recoveryWarned = true;

  const close = (): void => {
    if (!failing) return;
    failing = false;
    closing = false;
    probeTimer?.();
    probeTimer = undefined;
    quietUntil = scheduler.now() + EPISODE_QUIET_MS;
    if (!recoveryWarned) {
      recoveryWarned = true;
      logger.warn(`WRN_BL_STORE_RECOVERED: the store answers again (limiter "${limiterName}")`);
    }
    options.onRecovered?.(scheduler.now() - failedAt);
  };

  const recover = (): void => {
    if (!failing || closing) return;
    probeTimer?.();
    probeTimer = undefined;
    const delayMs = options.closeDelayMs?.() ?? 0;
    if (delayMs <= 0) return close();
    closing = true;
    probeTimer = scheduler.setTimeout(close, delayMs, { unref: true });
  };

  const runProbe = (): void => {
    probeTimer = undefined;
    if (!failing || closing) return;
    probing = true;
    const answer = options.writeProbe && refusesWrites(lastError) ? options.writeProbe() : probe();
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
    if (!failing || closing || probeTimer) return;
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
      options.onOpen?.();
      if (failedAt >= quietUntil) {
        recoveryWarned = false;
        logger.warn(`${options.warning} (limiter "${limiterName}": ${lastError.message})`);
      }
      options.onDegraded?.(lastError);
      probeDelayMs = PROBE_MIN_MS;
      schedule(probeDelayMs);
    },
    keepProbing() {
      if (probeTimer === undefined && !probing && !closing) schedule(probeDelayMs);
    },
    close() {
      probeTimer?.();
      probeTimer = undefined;
    },
  };
}
