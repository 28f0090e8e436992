/** Shared by the dashboard tests: apps mounting the dashboard through each adapter, and a real dead job. */
import express from 'express';
import Koa from 'koa';
import Router from '@koa/router';
import type { RequestListener } from 'node:http';
import type { Limiter } from '../../src/limiter/limiter';
import * as onExpress from '../../src/middleware/express';
import * as onKoa from '../../src/middleware/koa';
import { Dispatcher } from '../../src/queue/dispatcher';
import { Worker } from '../../src/queue/worker';
import { until } from '../queue/fixtures/queues';

type Options = Record<string, unknown>;
export type Mount = (options: Options) => RequestListener;

/** Each mounts the dashboard at /dashboard next to a route of the app's own (/other). */
export const mounts: ReadonlyArray<readonly [string, Mount]> = [
  [
    'express',
    (options) => {
      const app = express();
      app.use('/dashboard', onExpress.dashboard(options as never));
      app.get('/other', (_req, res) => {
        res.send('other');
      });
      return app;
    },
  ],
  [
    'koa',
    (options) => {
      const app = new Koa();
      app.silent = true;
      app.use(onKoa.dashboard({ ...options, path: '/dashboard' } as never));
      app.use(async (ctx) => {
        if (ctx.path === '/other') ctx.body = 'other';
      });
      return app.callback();
    },
  ],
  [
    'koa + @koa/router',
    (options) => {
      const app = new Koa();
      app.silent = true;
      const router = new Router();
      router.all('/dashboard{/*rest}', onKoa.dashboard({ ...options, path: '/dashboard' } as never));
      router.get('/other', (ctx) => {
        ctx.body = 'other';
      });
      app.use(router.routes());
      return app.callback();
    },
  ],
];

const silent = { warn: () => undefined, error: () => undefined };

/** A job of `group` whose handler always fails, run once by a real worker until it is a dead letter. */
export async function deadJob(limiter: Limiter, group: string, error = 'the payload names no account'): Promise<string> {
  const { id } = await limiter.enqueue(group, { type: 'fragile', payload: { n: 1 } });
  const dispatcher = new Dispatcher({ limiter, pollMs: 20, logger: silent });
  const worker = new Worker({
    limiter,
    handlers: {
      fragile: async () => {
        throw new Error(error);
      },
    },
    maxAttempts: 1,
    logger: silent,
    idleWaitMs: 50,
  });
  dispatcher.start();
  worker.start();
  try {
    await until('dead', async () => (await limiter.getJob(id))?.state === 'dead');
  } finally {
    await worker.close(1000);
    await dispatcher.stop();
  }
  return id;
}
