/**
 * A handler throws `RetryLaterError` to run the job again later without counting a failed attempt
 * (River's JobSnooze): e.g. the upstream answered 429 with its own Retry-After. Snoozes have their own
 * cap (`maxSnoozes` on the Worker), so a job that is always told to wait cannot loop forever.
 */
import { BulkLimiterError } from '../errors';
import { integer, isIntegerIn } from '../util/validate';

export class RetryLaterError extends BulkLimiterError {
  /** How long to wait before the job is due again (ms, integer ≥ 0). */
  readonly delayMs: number;

  constructor(delayMs: number, message = `Retry later, in ${delayMs} ms`) {
    integer('delayMs', delayMs, { min: 0, code: 'ERR_BL_RETRY_DELAY_MS' });
    super('ERR_BL_RETRY_LATER', message);
    this.delayMs = delayMs;
  }
}

/** True for a RetryLaterError, also one thrown by another copy of this package (instanceof fails there). */
export function isRetryLater(error: unknown): error is RetryLaterError {
  if (error instanceof RetryLaterError) return true;
  if (typeof error !== 'object' || error === null) return false;
  const candidate = error as { code?: unknown; delayMs?: unknown };
  return candidate.code === 'ERR_BL_RETRY_LATER' && isIntegerIn(candidate.delayMs, 0);
}
