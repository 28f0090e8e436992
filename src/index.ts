/**
 * bulk-limiter: what users call. Middleware lives in `bulk-limiter/express` and `bulk-limiter/koa`, Prometheus
 * metrics in `bulk-limiter/prometheus`, and the contract a store implements in `bulk-limiter/store`.
 */
export {
  createLimiter,
  type Limiter,
  type LimiterOptions,
  type CheckOptions,
  type PeekOptions,
  type DeferRequest,
  type LimiterEvents,
  type LimiterObserver,
  type Health,
  type HealthStatus,
  type RedisHealth,
} from './limiter/limiter';
export { RedisStore, type RedisStoreOptions } from './redis/redis-store';
export { MemoryStore, type MemoryStoreOptions } from './memory/memory-store';
export { Dispatcher, type DispatcherOptions, type DispatcherEvents } from './queue/dispatcher';
export {
  Worker,
  LeaseLostError,
  WorkerClosedError,
  type WorkerOptions,
  type WorkerJob,
  type JobHandler,
  type JobHandlers,
  type JobTypes,
  type WorkerEvents,
} from './queue/worker';
export { RetryLaterError } from './queue/retry-later-error';
export { reportUpstream, type UpstreamResponse } from './middleware/report-upstream';
export type { AdaptiveOptions } from './limiter/adaptive-options';
export type { ReportOptions, ReportOutcome } from './limiter/adaptive-reports';
export { PermanentError } from './queue/permanent-error';
export { EnqueueError, type EnqueueOptions, type EnqueuedJob } from './queue/offload';
export type { DurabilityOptions } from './queue/durability';
export { exponentialBackoff, type Backoff, type BackoffOptions } from './queue/backoff';
export { BulkLimiterError, ConfigError, InputError, StoreError, ERROR_CODES, WARNING_CODES, type ErrorCode, type WarningCode } from './errors';
export type { Rule } from './limiter/rule-options';
export type { Plan } from './limiter/plan-options';
export type { TuningOptions } from './limiter/options';
export type { ClassOptions } from './limiter/class-options';
// Types by name: `export type *` would also list a module's values as named exports that do not exist.
export type {
  Colour,
  ConcurrencyStatus,
  ConfigMismatch,
  Decision,
  DeferredJob,
  DenyReason,
  GroupJobCounts,
  GroupStatus,
  JobCounts,
  JobInfo,
  JobState,
  ListOverridesOptions,
  Logger,
  Override,
  OverridePage,
  OverrideRule,
  OverrideSettings,
  RuleAlgorithm,
  RuleStatus,
  SetOverrideOptions,
  SettleResult,
  Store,
  StoreErrorPolicy,
} from './types';
