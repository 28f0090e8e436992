/** The shared HTTP case table through Nest: BulkLimiterModule with a global guard, on platform-express and platform-fastify. */
import { limiterOptionsOf } from '../../src/middleware/middleware-options';
import { BulkLimit, BulkLimiterModule } from '../../src/nest';
import type { Harness, Options } from './cases';
import { nestListener, okController, type Platform } from './nest-app';
import { runCases } from './run-cases';

/**
 * The first route's options are the module's; each other route's are its `@BulkLimit()` (a limiter and middleware
 * settings); `onLimit` is the module's.
 */
function harnessOn(platform: Platform): Harness {
  return {
    name: `nest-${platform}`,
    app(routes, errorHandler = 'default', settings = {}) {
      const [[, first], ...others] = Object.entries(routes) as [[string, Options], ...Array<[string, Options]>];
      const paths: Record<string, MethodDecorator[]> = { [Object.keys(routes)[0]!]: [] };
      for (const [path, options] of others) {
        if (Object.keys(limiterOptionsOf(options)).length > 0) throw new Error(`route ${path}: give the harness a limiter, not limiter options`);
        paths[path] = [BulkLimit(options as never)];
      }
      return nestListener(platform, {
        imports: [BulkLimiterModule.forRoot({ ...(first as object), globalGuard: true })],
        controllers: [okController(paths, settings.hold)],
        appFilter: errorHandler === 'app',
        trustProxy: settings.trustProxy,
      });
    },
  };
}

runCases(harnessOn('express'));
runCases(harnessOn('fastify'));
