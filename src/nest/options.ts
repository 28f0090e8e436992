/**
 * The Nest module's options: the middleware's (limiter or inline limiter options, group, weight, …, checked as
 * `bulkLimiter()` checks them), and the module's own: the worker and dispatcher it runs with the app.
 */
import { Logger } from '@nestjs/common';
import { ConfigError, describeValue } from '../errors';
import { createLimiter, type Limiter } from '../limiter/limiter';
import { limiterOptionsOf, validateMiddlewareOptions } from '../middleware/middleware-options';
import type { BulkLimiterOptions } from '../middleware/shared';
import type { DispatcherOptions } from '../queue/dispatcher';
import type { WorkerOptions } from '../queue/worker-options';
import type { NestRequest } from './decorators';

/** The worker the module runs for the `@JobHandler` providers (`false`: none in this process). */
export type NestWorkerOptions = Omit<WorkerOptions, 'limiter' | 'handlers'>;
/** The dispatcher the module runs (`false`: none in this process; on Redis one per deployment is enough). */
export type NestDispatcherOptions = Omit<DispatcherOptions, 'limiter'>;

/** The limiter's and the middleware's options (`onLimit` is the module's: BulkLimiterModuleSetup). */
export interface BulkLimiterModuleOptions extends Omit<BulkLimiterOptions<NestRequest>, 'onLimit'> {
  /** @defaultValue `{}` when a `@JobHandler` provider exists */
  readonly worker?: NestWorkerOptions | false;
  /** @defaultValue `{}` when a `@JobHandler` provider exists */
  readonly dispatcher?: NestDispatcherOptions | false;
}

/** What the module keeps: the limiter (owned when made from inline options) and the checked middleware options. */
export interface ResolvedModuleOptions {
  readonly limiter: Limiter;
  readonly owned: boolean;
  readonly middleware: BulkLimiterOptions<NestRequest>;
  readonly worker: NestWorkerOptions | false | undefined;
  readonly dispatcher: NestDispatcherOptions | false | undefined;
}

export function resolveModuleOptions(options: BulkLimiterModuleOptions): ResolvedModuleOptions {
  if (typeof options !== 'object' || options === null) {
    throw new ConfigError('ERR_BL_OPTIONS', `Expected BulkLimiterModule options to be an object, got ${describeValue(options)}`);
  }
  const { worker, dispatcher, ...given } = options;
  for (const [name, value] of [
    ['worker', worker],
    ['dispatcher', dispatcher],
  ] as const) {
    if (value !== undefined && value !== false && (typeof value !== 'object' || value === null)) {
      throw new ConfigError(
        name === 'worker' ? 'ERR_BL_WORKER' : 'ERR_BL_DISPATCHER',
        `Expected \`${name}\` to be options or false, got ${describeValue(value)}`,
      );
    }
  }
  const checked = validateMiddlewareOptions(given);
  const inline = limiterOptionsOf(checked);
  const inlineNames = new Set(Object.keys(inline));
  const middleware = Object.fromEntries(Object.entries(checked).filter(([name]) => !inlineNames.has(name))) as BulkLimiterOptions<NestRequest>;
  // warnings of a limiter made here go through Nest's Logger
  const limiter = checked.limiter ?? createLimiter({ ...inline, logger: inline.logger ?? new Logger('BulkLimiter') });
  return { limiter, owned: checked.limiter === undefined, middleware: { ...middleware, limiter }, worker, dispatcher };
}
