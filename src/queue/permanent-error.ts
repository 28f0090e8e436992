/**
 * A handler throws `PermanentError` when trying again cannot help (a malformed payload, a 4xx from the
 * upstream): the job goes to dead at once with this message, whatever attempts it has left.
 */
import { BulkLimiterError } from '../errors';

export class PermanentError extends BulkLimiterError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('ERR_BL_PERMANENT', message, options);
  }
}

/** True for a PermanentError, also one thrown by another copy of this package (instanceof fails there). */
export function isPermanent(error: unknown): boolean {
  return (
    error instanceof PermanentError || (typeof error === 'object' && error !== null && (error as { code?: unknown }).code === 'ERR_BL_PERMANENT')
  );
}
