/**
 * Decorators of the Nest module: a route's (or a controller's) own settings, leaving it out, a provider that
 * handles a job type, and the limiter's injection. Route settings are checked once, at boot.
 */
import { Inject, SetMetadata } from '@nestjs/common';
import type { BulkLimiterOptions } from '../middleware/shared';
import type { RouteSettingName } from '../middleware/middleware-options';
import type { Decision } from '../types';
import { BULK_LIMITER, JOB_HANDLER, ROUTE_LIMIT } from './tokens';

/** The request a function option sees: Express's `req` on platform-express, Fastify's `request` on platform-fastify. */
export interface NestRequest {
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly ip?: string;
  readonly query?: unknown;
  readonly params?: unknown;
  readonly body?: unknown;
  rateLimit?: Decision;
}

/** What `@BulkLimit()` sets for a route or a controller's routes (a different budget: `limiter`). */
export type RouteLimit = Pick<BulkLimiterOptions<NestRequest>, RouteSettingName> & {
  /** `false`: this route is not limited (what `@SkipBulkLimit()` sets). */
  readonly enabled?: boolean;
};

/** A route's own settings: `@BulkLimit({ cost: 5 })`, `@BulkLimit({ defer: { type: 'import', … } })`. On a controller: its routes'. */
export const BulkLimit = (settings: RouteLimit): MethodDecorator & ClassDecorator => SetMetadata(ROUTE_LIMIT, settings);

/** This route (or controller) is not limited, even under a global guard. */
export const SkipBulkLimit = (): MethodDecorator & ClassDecorator => SetMetadata(ROUTE_LIMIT, { enabled: false });

/**
 * A provider that runs deferred jobs of `type`: its `handle(job, signal)` is the handler, found at boot and run by
 * the module's worker. `@JobHandler('import') @Injectable() class ImportJob { handle(job) { … } }`
 */
export const JobHandler = (type: string): ClassDecorator => SetMetadata(JOB_HANDLER, type);

/** Injects the module's limiter: `constructor(@InjectLimiter() private readonly limiter: Limiter) {}`. */
export const InjectLimiter = (): PropertyDecorator & ParameterDecorator => Inject(BULK_LIMITER);
