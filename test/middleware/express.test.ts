import http from 'node:http';
import express, { type ErrorRequestHandler } from 'express';
import request from 'supertest';
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

// Express swaps each request's prototype; the decision rides on an accessor of Express's base request prototype
// (src/middleware/express.ts keepDecision). What handlers see must not change.
describe('express: req.rateLimit', () => {
  const limited = () => bulkLimiter({ limit: 100, windowMs: 1000, group: (req) => req.get('x-tenant') });
  const show = (req: express.Request, res: express.Response) => {
    const d = (req as RateLimitedRequest).rateLimit;
    res.json({ group: d?.group ?? null, allowed: d?.allowed ?? null, own: Object.prototype.hasOwnProperty.call(req, 'rateLimit') });
  };

  test('a handler in a mounted sub-app reads the decision the parent app made', async () => {
    const app = express();
    const sub = express();
    sub.get('/x', show);
    app.use(limited());
    app.use('/api', sub);
    const res = await request(app).get('/api/x').set('x-tenant', 'acme');
    expect(res.body).toEqual({ group: 'acme', allowed: true, own: false });
  });

  test('a decision made in a sub-app is read after it hands the request back', async () => {
    const app = express();
    const sub = express();
    sub.use(limited());
    app.use('/api', sub);
    app.get('/api/x', show);
    const res = await request(app).get('/api/x').set('x-tenant', 'acme');
    expect(res.body).toEqual({ group: 'acme', allowed: true, own: false });
  });

  test("each request has its own decision, an app's write wins, and a skipped request has none", async () => {
    const app = express();
    const skipping = bulkLimiter({ limit: 100, windowMs: 1000, group: (req) => req.get('x-tenant'), skip: (req) => req.path === '/skip' });
    app.use(skipping);
    app.get('/overwrite', (req, res) => {
      (req as { rateLimit?: unknown }).rateLimit = { group: 'set-by-app' };
      show(req, res);
    });
    app.get('/skip', show);
    // both requests are held until each has its decision, then read it: neither may see the other's
    let arrived = 0;
    let bothIn: () => void = () => {};
    const both = new Promise<void>((resolve) => (bothIn = resolve));
    app.get('/a', async (req, res) => {
      if (++arrived === 2) bothIn();
      await both;
      show(req, res);
    });
    const [a, b] = await Promise.all([request(app).get('/a').set('x-tenant', 'a'), request(app).get('/a').set('x-tenant', 'b')]);
    expect([a.body.group, b.body.group]).toEqual(['a', 'b']);
    expect((await request(app).get('/skip').set('x-tenant', 'a')).body).toEqual({ group: null, allowed: null, own: false });
    expect((await request(app).get('/overwrite').set('x-tenant', 'a')).body.group).toBe('set-by-app');
  });

  test('a default on app.request does not hide the decision, and a skipped request reads the default', async () => {
    const app = express();
    (app.request as { rateLimit?: unknown }).rateLimit = null;
    app.use(bulkLimiter({ limit: 100, windowMs: 1000, group: (req) => req.get('x-tenant'), skip: (req) => req.path === '/skip' }));
    app.get(['/x', '/skip'], (req, res) => {
      const d = (req as { rateLimit?: { group: string } | null }).rateLimit;
      res.json({ seen: d === null ? 'the default' : d === undefined ? 'nothing' : d.group });
    });
    expect((await request(app).get('/x').set('x-tenant', 'acme')).body.seen).toBe('acme');
    expect((await request(app).get('/skip').set('x-tenant', 'acme')).body.seen).toBe('the default');
  });

  test('code before the middleware that wrote req.rateLimit does not hide the decision, on the first request too', async () => {
    // fresh modules: express.request without the accessor, as in a process whose first request this is
    let fresh: { express: typeof express; bulkLimiter: typeof bulkLimiter } | undefined;
    jest.isolateModules(() => {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      fresh = { express: require('express') as typeof express, bulkLimiter: require('../../src/middleware/express').bulkLimiter };
    });
    const app = fresh!.express();
    app.use((req, _res, next) => {
      (req as { rateLimit?: unknown }).rateLimit = { group: 'written-before' };
      next();
    });
    app.use(fresh!.bulkLimiter({ limit: 100, windowMs: 1000, group: (req) => req.get('x-tenant') }));
    app.get('/x', show);
    const first = await request(app).get('/x').set('x-tenant', 'acme');
    const second = await request(app).get('/x').set('x-tenant', 'acme');
    expect([first.body.group, second.body.group]).toEqual(['acme', 'acme']);
  });

  test('on Express the decision is not an own property: keys, spreads and delete do not see it (docs/reference.md)', async () => {
    const app = express();
    app.use(limited());
    app.get('/x', (req, res) => {
      const before = (req as RateLimitedRequest).rateLimit?.group;
      const spread = ({ ...req } as RateLimitedRequest).rateLimit;
      delete (req as RateLimitedRequest).rateLimit;
      res.json({
        before,
        inKeys: Object.keys(req).includes('rateLimit'),
        inOperator: 'rateLimit' in req,
        spread: spread ?? null,
        afterDelete: (req as RateLimitedRequest).rateLimit?.group,
      });
    });
    const res = await request(app).get('/x').set('x-tenant', 'acme');
    expect(res.body).toEqual({ before: 'acme', inKeys: false, inOperator: true, spread: null, afterDelete: 'acme' });
  });

  test('a request outside Express gets the decision as its own property', async () => {
    const middleware = limited();
    const server = http.createServer((req, res) => {
      const r = req as unknown as express.Request;
      r.get = ((name: string) => req.headers[name.toLowerCase()]) as express.Request['get'];
      middleware(r, res as unknown as express.Response, () => {
        res.end(JSON.stringify({ own: Object.prototype.hasOwnProperty.call(req, 'rateLimit'), group: (r as RateLimitedRequest).rateLimit?.group }));
      });
    });
    const res = await request(server).get('/').set('x-tenant', 'plain');
    expect(JSON.parse(res.text)).toEqual({ own: true, group: 'plain' });
  });
});
