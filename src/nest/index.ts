/**
 * bulk-limiter for NestJS (on @nestjs/platform-express and @nestjs/platform-fastify): BulkLimiterModule, the
 * injectable limiter, BulkLimiterGuard, the route decorators, `@JobHandler` providers run by the module's worker,
 * and controllers for a deferred job's status and the dashboard.
 */
export { BulkLimiterModule, type BulkLimiterModuleAsyncOptions, type BulkLimiterModuleSetup } from './module';
export type { BulkLimiterModuleOptions, NestWorkerOptions, NestDispatcherOptions } from './options';
export { BulkLimiterGuard, BulkLimitException } from './guard';
export { BulkLimitFilter } from './filter';
export { BulkLimit, SkipBulkLimit, JobHandler, InjectLimiter, type RouteLimit, type NestRequest } from './decorators';
export { jobStatusController, dashboardController, type JobStatusControllerOptions, type DashboardControllerOptions } from './controllers';
export { BULK_LIMITER, BULK_LIMITER_OPTIONS } from './tokens';
export type { BulkLimiterOptions, DeferOptions, DeferredBody } from '../middleware/shared';
export type { LimitError, ProblemDetails } from '../middleware/rejection';
export type { JobStatusOptions, JobStatusBody } from '../middleware/job-status';
export type { DashboardOptions } from '../dashboard/handler';
export type { Limiter } from '../limiter/limiter';
export type { WorkerJob } from '../queue/worker-options';
