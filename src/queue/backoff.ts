/**
 * Exponential backoff with full jitter (AWS architecture blog, "Exponential Backoff and Jitter"):
 * delay = random() × min(capMs, baseMs × 2^(attempt − 1)). Full jitter spreads retries of jobs that
 * failed together, so they do not come back as one herd.
 */
import { ConfigError, describeValue } from '../errors';

export interface BackoffOptions {
  /**
   * The ceiling of the first retry's delay.
   * @defaultValue 1000
   */
  readonly baseMs?: number;
  /**
   * No delay is ever longer than this.
   * @defaultValue 3_600_000 (1 hour)
   */
  readonly capMs?: number;
  /**
   * Uniform in [0, 1). Injectable for tests.
   * @defaultValue Math.random
   */
  readonly random?: () => number;
}

/** Delay in whole ms before retry number `attempt` (1 = the first retry). */
export type Backoff = (attempt: number) => number;

export function exponentialBackoff(options: BackoffOptions = {}): Backoff {
  const baseMs = options.baseMs ?? 1000;
  const capMs = options.capMs ?? 3_600_000;
  const random = options.random ?? Math.random;
  if (!Number.isInteger(baseMs) || baseMs < 1) {
    throw new ConfigError('ERR_BL_BACKOFF_BASE_MS', `Expected \`backoff.baseMs\` to be a positive integer, got ${describeValue(baseMs)}`);
  }
  if (!Number.isInteger(capMs) || capMs < baseMs) {
    throw new ConfigError('ERR_BL_BACKOFF_CAP_MS', `Expected \`backoff.capMs\` to be an integer ≥ baseMs (${baseMs}), got ${describeValue(capMs)}`);
  }
  if (typeof random !== 'function') {
    throw new ConfigError('ERR_BL_BACKOFF_RANDOM', `Expected \`backoff.random\` to be a function, got ${describeValue(random)}`);
  }
  return (attempt) => {
    // 2^(attempt-1) overflows to Infinity for huge attempts; min() with capMs keeps it finite.
    const ceiling = Math.min(capMs, baseMs * 2 ** Math.max(0, attempt - 1));
    return Math.floor(random() * ceiling);
  };
}
