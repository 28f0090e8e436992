/** Injection tokens and metadata keys of the Nest module. */

/** The module's limiter: `@Inject(BULK_LIMITER) limiter: Limiter`, or `@InjectLimiter()`. */
export const BULK_LIMITER = Symbol.for('bulk-limiter:limiter');
/** The module's resolved options. */
export const BULK_LIMITER_OPTIONS = Symbol.for('bulk-limiter:options');
/** A route's or a controller's settings (`@BulkLimit`). */
export const ROUTE_LIMIT = 'bulk-limiter:route';
/** A provider's job type (`@JobHandler`). */
export const JOB_HANDLER = 'bulk-limiter:job-handler';
