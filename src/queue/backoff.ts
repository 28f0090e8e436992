/**
 * Exponential backoff with full jitter (AWS architecture blog, "Exponential Backoff and Jitter"):
 * delay = random() × min(capMs, baseMs × 2^(attempt − 1)). Full jitter spreads retries of jobs that
 * failed together, so they do not come back as one herd.
 */
import { func, integer } from '../util/validate';

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
  const baseMs = integer('backoff.baseMs', options.baseMs, { fallback: 1000 });
  // the default cap is checked against baseMs too
  const capMs = integer('backoff.capMs', options.capMs ?? 3_600_000, { min: baseMs, expected: `an integer ≥ baseMs (${baseMs})` });
  const random = func<() => number, () => number>('backoff.random', options.random, { fallback: Math.random });
  return (attempt) => {
    // 2^(attempt-1) overflows to Infinity for huge attempts; min() with capMs keeps it finite.
    const ceiling = Math.min(capMs, baseMs * 2 ** Math.max(0, attempt - 1));
    return Math.floor(random() * ceiling);
  };
}
