/** bulk-limiter: the framework-agnostic API. Middleware lives in `bulk-limiter/express` and `bulk-limiter/koa`. */
export {
  createLimiter,
  type Limiter,
  type CheckOptions,
  type PeekOptions,
  type LimiterOptions,
  type DeferRequest,
  type DeferLimiterOptions,
  type LimiterEvents,
  type LimiterObserver,
  type Health,
  type HealthStatus,
  type RedisHealth,
} from './limiter/limiter';
export { resolveLimiterOptions, type ResolvedLimiterOptions, type StoreErrorPolicy } from './limiter/options';
export { RedisStore, type RedisStoreOptions } from './redis/redis-store';
export { MemoryStore, type MemoryStoreOptions } from './memory/memory-store';
export { OVERFLOW_GROUP } from './core/fair-share';
export { createHeaderWriter, retryAfterSeconds, type HeaderFormat, type HeaderMap } from './middleware/headers';
export type { BulkLimiterOptions, DeferOptions, DeferredBody } from './middleware/shared';
export type { LimitError, ProblemDetails } from './middleware/rejection';
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
export { PermanentError } from './queue/permanent-error';
export { EnqueueError, type EnqueueOptions, type EnqueuedJob } from './queue/offload';
export type { DurabilityOptions } from './queue/durability';
export { exponentialBackoff, type Backoff, type BackoffOptions } from './queue/backoff';
export { BulkLimiterError, ConfigError, InputError, StoreError } from './errors';
// Types by name: `export type *` also lists the modules' values (CLAIM_MAX) as named exports that do not exist.
export type {
  AdmitInput,
  Clock,
  Colour,
  ConcurrencyStatus,
  Decision,
  DeferInput,
  DeferredJob,
  DenyReason,
  DurableWrites,
  GroupStatus,
  LimiterSpec,
  LimiterStore,
  Logger,
  PeekInput,
  PlanSpec,
  RuleStatus,
  Store,
} from './types';
export type { Rule } from './limiter/rule-options';
export type { Plan } from './limiter/plan-options';
export type { RuleAlgorithm, RuleSpec } from './types';
export type {
  ClaimedJob,
  ClaimResult,
  CompleteAndClaimResult,
  DispatchOptions,
  DispatchResult,
  FailOutcome,
  FailResult,
  GroupJobCounts,
  JobCounts,
  JobInfo,
  JobState,
  QueueStore,
} from './types';
