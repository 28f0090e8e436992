/**
 * bulk-limiter for Fastify 5: `app.register(bulkLimiter, options)`. Translation only; the logic is in
 * ./shared.ts. The plugin is not encapsulated (as fastify-plugin makes it): it limits the routes declared after
 * it in the scope that registers it and in that scope's children, through an `onRequest` hook added to each
 * route (`hook: 'preHandler'` when `defer.payload` reads the parsed body). A route's `config.bulkLimiter` sets
 * its own cost, plan, limiter, … (`false`: not limited), as `config.rateLimit` does for @fastify/rate-limit.
 * Allowed: RateLimit headers and `request.rateLimit`. Deferred: 202 + Location + `{ jobId, state, runAt }`.
 * Rejected: 429 / 503 / 400 with the headers and a problem+json body, or (`onLimit: 'next'`) the http-error
 * thrown to Fastify's error handler (the headers also on `err.headers`, which Fastify's default one sends).
 */
import type { FastifyInstance, FastifyPluginCallback, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { ConfigError, describeValue } from '../errors';
import { createLimiter, type Limiter } from '../limiter/limiter';
import { refuseUnknownOptions } from '../util/option-names';
import type { Decision } from '../types';
import { markAsFastifyPlugin, pluginOptionsOf } from './fastify-plugin-meta';
import { limiterOptionsOf, ROUTE_SETTING_NAMES, validateMiddlewareOptions, type RouteSettingName } from './middleware-options';
import { PROBLEM_CONTENT_TYPE } from './rejection';
import { releaseWhenDone } from './release';
import { createRunner, type BulkLimiterOptions, type Outcome, type Runner } from './shared';
import { oneOf } from '../util/validate';

export type { BulkLimiterOptions, DeferOptions, DeferredBody } from './shared';
export type { LimitError, ProblemDetails } from './rejection';
export type { JobStatusOptions, JobStatusBody } from './job-status';
export type { DashboardOptions } from '../dashboard/handler';
export type { ActionsState, DashboardData, DeadView, GroupView, LimiterView, Series } from '../dashboard/data';
export { jobStatus, dashboard, type FastifyDashboardOptions } from './fastify-routes';

/** The request lifecycle hook the limiter runs in. */
export type FastifyLimitHook = 'onRequest' | 'preParsing' | 'preValidation' | 'preHandler';

/** What a route may set in `config.bulkLimiter`: the middleware's per-request settings (a different budget: `limiter`). */
export type FastifyRouteLimit = Pick<BulkLimiterOptions<FastifyRequest>, RouteSettingName | 'onLimit'> & {
  /** @defaultValue the plugin's `hook` */
  readonly hook?: FastifyLimitHook;
};

export interface FastifyBulkLimiterOptions extends BulkLimiterOptions<FastifyRequest> {
  /**
   * `true`: every route declared after the plugin in its scope is limited unless its `config.bulkLimiter` is
   * `false`; `false`: only routes with a `config.bulkLimiter` object. @defaultValue `true`
   */
  readonly global?: boolean;
  /** The hook that runs the limiter. `'preHandler'` when `defer.payload` reads `request.body`. @defaultValue `'onRequest'` */
  readonly hook?: FastifyLimitHook;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The limiter's decision for this request (remaining, each rule's state); absent when skipped or not limited. */
    rateLimit?: Decision;
  }
  interface FastifyContextConfig {
    /** This route's own bulk-limiter settings; `false`: not limited. */
    bulkLimiter?: FastifyRouteLimit | false;
  }
}

const FASTIFY_ROUTE_SETTING_NAMES: readonly (keyof FastifyRouteLimit)[] = [...ROUTE_SETTING_NAMES, 'onLimit', 'hook'];
const HOOKS: readonly FastifyLimitHook[] = ['onRequest', 'preParsing', 'preValidation', 'preHandler'];
const REQUEST_READER = {
  clientIp: (request: FastifyRequest) => request.ip,
  header: (request: FastifyRequest, name: string) => {
    const value = request.headers[name];
    return Array.isArray(value) ? value[0] : value;
  },
};

function bulkLimiterPlugin(fastify: FastifyInstance, registered: FastifyBulkLimiterOptions, done: (err?: Error) => void): void {
  try {
    setUp(fastify, registered);
  } catch (error) {
    return done(error as Error);
  }
  done();
}

function setUp(fastify: FastifyInstance, registered: FastifyBulkLimiterOptions): void {
  const { global = true, hook = 'onRequest', ...given } = pluginOptionsOf(registered);
  if (typeof global !== 'boolean') throw new ConfigError('ERR_BL_GLOBAL', `Expected \`global\` to be a boolean, got ${describeValue(global)}`);
  oneOf('hook', hook, HOOKS, { code: 'ERR_BL_HOOK' });
  const options = validateMiddlewareOptions(given);
  // Inline limiter options: the plugin's own limiter, warning through Fastify's logger, closed with the app.
  let limiter = options.limiter;
  if (limiter === undefined) {
    const limiterOptions = limiterOptionsOf(options);
    limiter = createLimiter({ ...limiterOptions, logger: limiterOptions.logger ?? fastify.log });
    const owned = limiter;
    fastify.addHook('onClose', async () => owned.close());
  }
  const middleware = { ...withoutLimiterOptions(options, given), limiter };
  const routeDefault = createRunner<FastifyRequest>(middleware, REQUEST_READER);
  if (!fastify.hasRequestDecorator('rateLimit')) fastify.decorateRequest('rateLimit', undefined);

  fastify.addHook('onRoute', (route: RouteOptions) => {
    const settings: unknown = route.config?.bulkLimiter;
    if (settings === false || (settings === undefined && !global)) return;
    if (settings === undefined) return addHook(route, hook, limitHook(routeDefault, hook));
    if (typeof settings !== 'object' || settings === null) {
      throw new ConfigError(
        'ERR_BL_ROUTE_CONFIG',
        `Expected \`config.bulkLimiter\` of ${route.url} to be an object or false, got ${describeValue(settings)}`,
      );
    }
    refuseUnknownOptions(settings as Record<string, unknown>, FASTIFY_ROUTE_SETTING_NAMES, `config.bulkLimiter of ${route.url}`);
    const { hook: routeHook = hook, ...own } = settings as FastifyRouteLimit;
    oneOf('config.bulkLimiter.hook', routeHook, HOOKS, { code: 'ERR_BL_HOOK' });
    const merged = { ...middleware, ...own };
    // A group function of the route replaces the default one, and so its IPv6 grouping.
    if (own.group !== undefined) delete (merged as { ipv6Subnet?: unknown }).ipv6Subnet;
    addHook(route, routeHook, limitHook(createRunner<FastifyRequest>(merged, REQUEST_READER), routeHook));
  });
}

type HookDone = (error?: Error) => void;
type LimitHook =
  | ((request: FastifyRequest, reply: FastifyReply, done: HookDone) => void)
  | ((request: FastifyRequest, reply: FastifyReply, payload: unknown, done: HookDone) => void);

/**
 * The hook of one route: what the Express and Koa middleware do, in Fastify's words. A callback hook, not an async
 * one: Fastify chains its own handlers on the promise an async hook returns, per request. An answer sent from the
 * hook (202, 429, …) ends the request there (`done` is not called); `onLimit: 'next'` hands the http-error to `done`.
 */
function limitHook(runner: Runner<FastifyRequest>, name: FastifyLimitHook): LimitHook {
  const passErrors = runner.onLimit === 'next';
  const limiter: Limiter = runner.limiter;
  function answer(outcome: Outcome, request: FastifyRequest, reply: FastifyReply, done: HookDone): void {
    try {
      const headers = outcome.headers;
      for (const field in headers) reply.header(field, headers[field]);
      if (outcome.kind === 'pass') {
        // handlers read the decision (remaining, each rule's state); skipped requests have none
        if (outcome.decision !== undefined) {
          request.rateLimit = outcome.decision;
          releaseWhenDone(limiter, outcome.decision, reply.raw);
        }
        return done();
      }
      if (outcome.kind === 'deferred') {
        reply.code(202).send(outcome.body);
        return;
      }
      if (passErrors) return done(outcome.error);
      reply.code(outcome.status).type(PROBLEM_CONTENT_TYPE).send(outcome.body);
    } catch (error) {
      done(error as Error);
    }
  }
  function run(request: FastifyRequest, reply: FastifyReply, done: HookDone): void {
    runner.evaluate(request).then((outcome) => answer(outcome, request, reply, done), done);
  }
  // preParsing hooks are given the payload stream before `done` (`done()` keeps it).
  if (name === 'preParsing') return (request: FastifyRequest, reply: FastifyReply, _payload: unknown, done: HookDone) => run(request, reply, done);
  return run;
}

function addHook(route: RouteOptions, name: FastifyLimitHook, handler: LimitHook): void {
  const existing = route[name] as unknown;
  // The limiter runs after the route's own hooks of the same kind (authentication may set the tenant).
  (route as unknown as Record<string, unknown>)[name] =
    existing === undefined ? [handler] : Array.isArray(existing) ? [...(existing as unknown[]), handler] : [existing, handler];
}

/** The middleware options of the plugin's options (the inline limiter options went to its limiter). */
function withoutLimiterOptions(options: BulkLimiterOptions<FastifyRequest>, given: object): BulkLimiterOptions<FastifyRequest> {
  const inline = new Set(Object.keys(limiterOptionsOf(options)));
  return Object.fromEntries(Object.entries(given).filter(([name]) => !inline.has(name))) as BulkLimiterOptions<FastifyRequest>;
}

/** `app.register(bulkLimiter, { limit: 100, windowMs: 1000, group: (request) => … })` */
export const bulkLimiter: FastifyPluginCallback<FastifyBulkLimiterOptions> = markAsFastifyPlugin(bulkLimiterPlugin, 'bulk-limiter', false);
