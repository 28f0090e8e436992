import type { FastifyError } from 'fastify';
import { bulkLimiter } from '../../src/middleware/fastify';
import type { Harness, Options } from './cases';
import { fastifyListener } from './fastify-app';
import { runCases } from './run-cases';

const harness: Harness = {
  name: 'fastify',
  app(routes, errorHandler = 'default', settings = {}) {
    return fastifyListener(
      (app) => {
        // One plugin per route, each in its own scope: a route's limiter and options stay its own.
        for (const [path, options] of Object.entries(routes)) {
          void app.register(async (scope) => {
            await scope.register(bulkLimiter, options as Options as Parameters<typeof bulkLimiter>[1]);
            scope.get(path, async (request, reply) => {
              if (settings.hold) await settings.hold();
              // what handlers see of the decision
              const seen = request.rateLimit;
              if (seen) void reply.header('x-seen-decision', JSON.stringify({ remaining: seen.remaining, rules: seen.rules }));
              return reply.type('text/plain').send('ok');
            });
          });
        }
        if (errorHandler === 'app') {
          app.setErrorHandler((err: FastifyError & { status?: number; headers?: Record<string, string>; decision?: unknown }, _request, reply) => {
            void reply.code(err.status ?? 500).send({
              handled: true,
              status: err.status,
              code: err.code,
              message: err.message,
              errHeaders: err.headers,
              hasDecision: err.decision !== undefined,
            });
          });
        }
      },
      { trustProxy: settings.trustProxy ?? false },
    );
  },
};

runCases(harness);
