import express, { type ErrorRequestHandler } from 'express';
import { bulkLimiter, type RateLimitedRequest } from '../../src/middleware/express';
import type { Harness, Options } from './cases';
import { runCases } from './run-cases';

const harness: Harness = {
  name: 'express',
  app(routes, errorHandler = 'default', settings = {}) {
    const app = express();
    if (settings.trustProxy) app.set('trust proxy', true);
    for (const [path, options] of Object.entries(routes)) {
      app.get(path, bulkLimiter(options as Options as Parameters<typeof bulkLimiter>[0]), async (req, res, next) => {
        if (settings.hold) {
          try {
            await settings.hold();
          } catch (error) {
            return next(error);
          }
        }
        // what downstream code sees of the decision
        const seen = (req as RateLimitedRequest).rateLimit;
        if (seen) res.set('x-seen-decision', JSON.stringify({ remaining: seen.remaining, rules: seen.rules }));
        res.send('ok');
      });
    }
    if (errorHandler === 'app') {
      const handler: ErrorRequestHandler = (err, _req, res, _next) => {
        res.status(err.status ?? 500).json({
          handled: true,
          status: err.status,
          code: err.code,
          message: err.message,
          errHeaders: err.headers,
          hasDecision: err.decision !== undefined,
        });
      };
      app.use(handler);
    }
    return app;
  },
};

runCases(harness);
