import Koa from 'koa';
import { bulkLimiter } from '../../src/middleware/koa';
import type { Harness, Options } from './cases';
import { runCases } from './run-cases';

const harness: Harness = {
  name: 'koa',
  app(routes, errorHandler = 'default') {
    const app = new Koa();
    app.silent = true;
    if (errorHandler === 'app') {
      app.use(async (ctx, next) => {
        try {
          await next();
        } catch (e) {
          const err = e as { status?: number; message: string; headers?: Record<string, string>; decision?: unknown };
          ctx.status = err.status ?? 500;
          if (err.headers) ctx.set(err.headers);
          ctx.body = { handled: true, status: err.status, message: err.message, errHeaders: err.headers, hasDecision: err.decision !== undefined };
        }
      });
    }
    const mounted = Object.entries(routes).map(([path, options]) => [path, bulkLimiter(options as Options as Parameters<typeof bulkLimiter>[0])] as const);
    app.use(async (ctx, next) => {
      const route = mounted.find(([path]) => path === ctx.path);
      if (!route) return next();
      await route[1](ctx, async () => { ctx.body = 'ok'; });
    });
    return app.callback();
  },
};

runCases(harness);
