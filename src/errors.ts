/**
 * Error classes, each with a stable `code` (ERR_BL_*) listed in docs/errors.md.
 */

/** Base class: every error the package throws has a code. */
export class BulkLimiterError extends Error {
  readonly code: string;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/** An option is missing, of the wrong type or out of range. Thrown at construction. */
export class ConfigError extends BulkLimiterError {}

/** Untrusted input (a group id, a payload) is not acceptable. The request is answered 400. */
export class InputError extends BulkLimiterError {}

/** The store failed or did not answer within `timeoutMs`. `cause` holds the underlying error. */
export class StoreError extends BulkLimiterError {}

/** Shows a value and its type in an error message. */
export function describeValue(value: unknown): string {
  if (typeof value === 'string') return `${JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value)} (string)`;
  if (typeof value === 'function') return `a function`;
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  return `\`${String(value)}\` (${typeof value})`;
}
