/**
 * Error classes, each with a stable `code` from ERROR_CODES; warnings are logged with a code from WARNING_CODES.
 * docs/errors.md has one row per code (its cause and its fix); test/package/error-codes.test.ts keeps the
 * tables, the page and the codes the source writes or builds from option names (util/validate.ts codeOf) equal.
 */

/**
 * Every error code, keyed by its name without `ERR_BL_`. A ConfigError about an option has the option's name in
 * upper snake case (`windowMs` → `WINDOW_MS`, a `defer` option of the middleware `DEFER_<NAME>`); an InputError
 * about an argument of a call is `BAD_<NAME>`.
 */
export const ERROR_CODES = Object.freeze({
  // Any entry point: the options argument.
  OPTIONS: 'ERR_BL_OPTIONS',
  UNKNOWN_OPTION: 'ERR_BL_UNKNOWN_OPTION',
  LOGGER: 'ERR_BL_LOGGER',
  // createLimiter options (also inline in bulkLimiter).
  LIMIT: 'ERR_BL_LIMIT',
  WINDOW_MS: 'ERR_BL_WINDOW_MS',
  NAME: 'ERR_BL_NAME',
  STORE: 'ERR_BL_STORE',
  TUNING: 'ERR_BL_TUNING',
  BURST: 'ERR_BL_BURST',
  RESERVE: 'ERR_BL_RESERVE',
  SUSTAINED: 'ERR_BL_SUSTAINED',
  IDLE_MS: 'ERR_BL_IDLE_MS',
  EPOCH_MS: 'ERR_BL_EPOCH_MS',
  MAX_GROUPS: 'ERR_BL_MAX_GROUPS',
  PROBATION_MS: 'ERR_BL_PROBATION_MS',
  MAX_GROUP_LENGTH: 'ERR_BL_MAX_GROUP_LENGTH',
  MAX_COST: 'ERR_BL_MAX_COST',
  MAX_WEIGHT: 'ERR_BL_MAX_WEIGHT',
  ON_STORE_ERROR: 'ERR_BL_ON_STORE_ERROR',
  TIMEOUT_MS: 'ERR_BL_TIMEOUT_MS',
  INSTANCES: 'ERR_BL_INSTANCES',
  DENY_CACHE: 'ERR_BL_DENY_CACHE',
  ADAPTIVE: 'ERR_BL_ADAPTIVE',
  CONCURRENCY: 'ERR_BL_CONCURRENCY',
  CONCURRENCY_LEASE_MS: 'ERR_BL_CONCURRENCY_LEASE_MS',
  RULES: 'ERR_BL_RULES',
  PLANS: 'ERR_BL_PLANS',
  CLASSES: 'ERR_BL_CLASSES',
  DEFAULT_PLAN: 'ERR_BL_DEFAULT_PLAN',
  MAX_BACKLOG: 'ERR_BL_MAX_BACKLOG',
  MAX_DEFER_MS: 'ERR_BL_MAX_DEFER_MS',
  MAX_PAYLOAD_BYTES: 'ERR_BL_MAX_PAYLOAD_BYTES',
  GROUP_CONCURRENCY: 'ERR_BL_GROUP_CONCURRENCY',
  DURABILITY: 'ERR_BL_DURABILITY',
  MAX_OVERRIDES: 'ERR_BL_MAX_OVERRIDES',
  // limiter.setOverride and listOverrides: the settings and the call's options.
  OVERRIDE: 'ERR_BL_OVERRIDE',
  OVERRIDE_OPTIONS: 'ERR_BL_OVERRIDE_OPTIONS',
  TOO_MANY_OVERRIDES: 'ERR_BL_TOO_MANY_OVERRIDES',
  NO_OVERRIDES: 'ERR_BL_NO_OVERRIDES',
  // Store options.
  CLIENT: 'ERR_BL_CLIENT',
  PREFIX: 'ERR_BL_PREFIX',
  MAX_BATCH: 'ERR_BL_MAX_BATCH',
  CLOCK: 'ERR_BL_CLOCK',
  MAX_DEAD: 'ERR_BL_MAX_DEAD',
  // bulkLimiter options and its `defer` options.
  LIMITER: 'ERR_BL_LIMITER',
  GROUP: 'ERR_BL_GROUP',
  IPV6_SUBNET: 'ERR_BL_IPV6_SUBNET',
  MISSING_GROUP: 'ERR_BL_MISSING_GROUP',
  WEIGHT: 'ERR_BL_WEIGHT',
  COST: 'ERR_BL_COST',
  PLAN: 'ERR_BL_PLAN',
  CLASS: 'ERR_BL_CLASS',
  SKIP: 'ERR_BL_SKIP',
  SETTLE: 'ERR_BL_SETTLE',
  HEADERS: 'ERR_BL_HEADERS',
  ON_LIMIT: 'ERR_BL_ON_LIMIT',
  DEFER: 'ERR_BL_DEFER',
  DEFER_TYPE: 'ERR_BL_DEFER_TYPE',
  DEFER_PAYLOAD: 'ERR_BL_DEFER_PAYLOAD',
  DEFER_IDEMPOTENCY_KEY: 'ERR_BL_DEFER_IDEMPOTENCY_KEY',
  DEFER_STATUS_URL: 'ERR_BL_DEFER_STATUS_URL',
  DEFER_WHEN: 'ERR_BL_DEFER_WHEN',
  DEFER_GROUP_CONCURRENCY: 'ERR_BL_DEFER_GROUP_CONCURRENCY',
  // jobStatus options.
  PUBLIC: 'ERR_BL_PUBLIC',
  PARAM: 'ERR_BL_PARAM',
  ID: 'ERR_BL_ID',
  // bulk-limiter/fastify's plugin and route options.
  GLOBAL: 'ERR_BL_GLOBAL',
  HOOK: 'ERR_BL_HOOK',
  ROUTE_CONFIG: 'ERR_BL_ROUTE_CONFIG',
  // bulk-limiter/nest's module, route settings and job handlers.
  WORKER: 'ERR_BL_WORKER',
  DISPATCHER: 'ERR_BL_DISPATCHER',
  GLOBAL_GUARD: 'ERR_BL_GLOBAL_GUARD',
  IS_GLOBAL: 'ERR_BL_IS_GLOBAL',
  ENABLED: 'ERR_BL_ENABLED',
  JOB_HANDLER: 'ERR_BL_JOB_HANDLER',
  // Dispatcher and Worker options, backoff and RetryLaterError.
  READY_MAX: 'ERR_BL_READY_MAX',
  MOVE_MAX: 'ERR_BL_MOVE_MAX',
  PROMOTE_MAX: 'ERR_BL_PROMOTE_MAX',
  SCAN_MAX: 'ERR_BL_SCAN_MAX',
  LEASE_MS: 'ERR_BL_LEASE_MS',
  POLL_MS: 'ERR_BL_POLL_MS',
  RECLAIM_INTERVAL_MS: 'ERR_BL_RECLAIM_INTERVAL_MS',
  MAX_STALLS: 'ERR_BL_MAX_STALLS',
  HANDLERS: 'ERR_BL_HANDLERS',
  MAX_ATTEMPTS: 'ERR_BL_MAX_ATTEMPTS',
  MAX_SNOOZES: 'ERR_BL_MAX_SNOOZES',
  KEEP_COMPLETED_MS: 'ERR_BL_KEEP_COMPLETED_MS',
  IDLE_WAIT_MS: 'ERR_BL_IDLE_WAIT_MS',
  BACKOFF: 'ERR_BL_BACKOFF',
  BACKOFF_BASE_MS: 'ERR_BL_BACKOFF_BASE_MS',
  BACKOFF_CAP_MS: 'ERR_BL_BACKOFF_CAP_MS',
  BACKOFF_RANDOM: 'ERR_BL_BACKOFF_RANDOM',
  RETRY_DELAY_MS: 'ERR_BL_RETRY_DELAY_MS',
  // registerMetrics and dashboard options.
  REGISTRY: 'ERR_BL_REGISTRY',
  LIMITERS: 'ERR_BL_LIMITERS',
  WORKERS: 'ERR_BL_WORKERS',
  DISPATCHERS: 'ERR_BL_DISPATCHERS',
  TOP_GROUPS: 'ERR_BL_TOP_GROUPS',
  AUTHORIZE: 'ERR_BL_AUTHORIZE',
  PATH: 'ERR_BL_PATH',
  // The server's mistakes found by a call or a request.
  UNKNOWN_PLAN: 'ERR_BL_UNKNOWN_PLAN',
  UNKNOWN_CLASS: 'ERR_BL_UNKNOWN_CLASS',
  OPTION_RESULT: 'ERR_BL_OPTION_RESULT',
  // InputError: the group id and the arguments of a call.
  NO_GROUP: 'ERR_BL_NO_GROUP',
  GROUP_EMPTY: 'ERR_BL_GROUP_EMPTY',
  BAD_GROUP: 'ERR_BL_BAD_GROUP',
  GROUP_TOO_LONG: 'ERR_BL_GROUP_TOO_LONG',
  GROUP_MALFORMED: 'ERR_BL_GROUP_MALFORMED',
  GROUP_RESERVED: 'ERR_BL_GROUP_RESERVED',
  BAD_COST: 'ERR_BL_BAD_COST',
  BAD_OUTCOME: 'ERR_BL_BAD_OUTCOME',
  BAD_RETRY_AFTER_MS: 'ERR_BL_BAD_RETRY_AFTER_MS',
  BAD_WEIGHT: 'ERR_BL_BAD_WEIGHT',
  BAD_GROUP_CONCURRENCY: 'ERR_BL_BAD_GROUP_CONCURRENCY',
  BAD_CONCURRENCY: 'ERR_BL_BAD_CONCURRENCY',
  BAD_SETTLE: 'ERR_BL_BAD_SETTLE',
  BAD_ACTUAL: 'ERR_BL_BAD_ACTUAL',
  BAD_DELAY_MS: 'ERR_BL_BAD_DELAY_MS',
  BAD_MAX_ATTEMPTS: 'ERR_BL_BAD_MAX_ATTEMPTS',
  BAD_DEFER: 'ERR_BL_BAD_DEFER',
  BAD_JOB_TYPE: 'ERR_BL_BAD_JOB_TYPE',
  BAD_IDEMPOTENCY_KEY: 'ERR_BL_BAD_IDEMPOTENCY_KEY',
  BAD_PAYLOAD: 'ERR_BL_BAD_PAYLOAD',
  PAYLOAD_TOO_LARGE: 'ERR_BL_PAYLOAD_TOO_LARGE',
  DEAD_PAGE: 'ERR_BL_DEAD_PAGE',
  // EnqueueError.
  BACKLOG_FULL: 'ERR_BL_BACKLOG_FULL',
  DEFER_HORIZON: 'ERR_BL_DEFER_HORIZON',
  // StoreError.
  STORE_TIMEOUT: 'ERR_BL_STORE_TIMEOUT',
  STORE_FAILED: 'ERR_BL_STORE_FAILED',
  STORE_REPLY: 'ERR_BL_STORE_REPLY',
  STORE_CONFIG: 'ERR_BL_STORE_CONFIG',
  NOT_DURABLE: 'ERR_BL_NOT_DURABLE',
  STORE_READONLY: 'ERR_BL_STORE_READONLY',
  MAY_EVICT: 'ERR_BL_MAY_EVICT',
  LIMITER_CLOSED: 'ERR_BL_LIMITER_CLOSED',
  // The queue: thrown by handlers, by a job's run, or recorded on a job.
  RETRY_LATER: 'ERR_BL_RETRY_LATER',
  PERMANENT: 'ERR_BL_PERMANENT',
  LEASE_LOST: 'ERR_BL_LEASE_LOST',
  WORKER_CLOSED: 'ERR_BL_WORKER_CLOSED',
  NO_HANDLER: 'ERR_BL_NO_HANDLER',
  JOB_PAYLOAD: 'ERR_BL_JOB_PAYLOAD',
  JOB_RESULT: 'ERR_BL_JOB_RESULT',
} as const);

/** Every warning code (the start of a message to `logger.warn`), keyed by its name without `WRN_BL_`. */
export const WARNING_CODES = Object.freeze({
  MISSING_GROUP: 'WRN_BL_MISSING_GROUP',
  OPTION_RESULT: 'WRN_BL_OPTION_RESULT',
  ROUTE_PARAM: 'WRN_BL_ROUTE_PARAM',
  STORE_FAIL_OPEN: 'WRN_BL_STORE_FAIL_OPEN',
  STORE_FAIL_CLOSED: 'WRN_BL_STORE_FAIL_CLOSED',
  STORE_FAIL_LOCAL: 'WRN_BL_STORE_FAIL_LOCAL',
  STORE_RECOVERED: 'WRN_BL_STORE_RECOVERED',
  MAXMEMORY_POLICY: 'WRN_BL_MAXMEMORY_POLICY',
  CONFIG_MISMATCH: 'WRN_BL_CONFIG_MISMATCH',
} as const);

export type ErrorCode = (typeof ERROR_CODES)[keyof typeof ERROR_CODES];
export type WarningCode = (typeof WARNING_CODES)[keyof typeof WARNING_CODES];

/** Base class: every error the package throws has a code. */
export class BulkLimiterError extends Error {
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/** An option is missing, of the wrong type or out of range. Thrown at construction. */
export class ConfigError extends BulkLimiterError {}

/** Untrusted input (a group id, a payload) is not acceptable. The request is answered 400. */
export class InputError extends BulkLimiterError {}

/**
 * The store failed or did not answer within `timeoutMs`. `cause` holds the underlying error. From `enqueue`,
 * `idempotencyKey` is the job's key (the caller's, or one generated for it): the job may have been written, and
 * an `enqueue` with this key lands on it instead of writing a second one.
 */
export class StoreError extends BulkLimiterError {
  readonly idempotencyKey?: string;
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown; idempotencyKey?: string }) {
    super(code, message, options);
    if (options?.idempotencyKey !== undefined) this.idempotencyKey = options.idempotencyKey;
  }
}

/** Shows a value and its type in an error message. */
export function describeValue(value: unknown): string {
  if (typeof value === 'string') return `${JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value)} (string)`;
  if (typeof value === 'function') return `a function`;
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  return `\`${String(value)}\` (${typeof value})`;
}
