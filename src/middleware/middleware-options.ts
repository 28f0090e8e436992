/**
 * The middleware's own options: names (unknown ones refused), types and values, checked once at
 * construction, and the limiter options given inline, picked out for createLimiter.
 */
import { ConfigError } from '../errors';
import type { LimiterOptions } from '../limiter/limiter';
import { refuseUnknownOptions, type OptionNames } from '../util/option-names';
import { LIMITER_OPTION_NAMES as ADMISSION_OPTION_NAMES, NESTED_OPTION_NAMES } from '../limiter/options';
import { DEFER_OPTION_NAMES } from '../queue/defer-input';
import { validateDefer } from './defer';
import type { HeaderFormat } from './headers';
import type { Limiter } from '../limiter/limiter';
import type { DeferOptions } from './defer';
import { func, isIntegerIn, oneOf, optional, optionsObject, refuse } from '../util/validate';

export type MaybePromise<T> = T | Promise<T>;

/** Middleware options. `Ctx` is Express's `req` or Koa's `ctx`. Pass `limiter`, or limiter options inline. */
export interface BulkLimiterOptions<Ctx> extends Partial<LimiterOptions> {
  /** A limiter from `createLimiter` (share one between routes to share its budget). */
  readonly limiter?: Limiter;
  /** The group (tenant) of a request; untrusted input. @defaultValue the client IP (`req.ip` / `ctx.ip`) */
  readonly group?: (ctx: Ctx) => MaybePromise<string | undefined | null>;
  /**
   * The default group (the client IP) puts IPv6 clients in one group per subnet of this prefix length;
   * `false`: one group per address. IPv4 and IPv4-mapped addresses are single clients. Only without `group`.
   * @defaultValue `56`
   */
  readonly ipv6Subnet?: number | false;
  /** A request without a group: `'shared'` puts all of them in one group, `'reject'` answers 400. @defaultValue `'shared'` */
  readonly missingGroup?: 'shared' | 'reject';
  /** The group's weight (tier). @defaultValue `1` */
  readonly weight?: number | ((group: string, ctx: Ctx) => MaybePromise<number>);
  /** Units this request uses. @defaultValue `1` */
  readonly cost?: number | ((ctx: Ctx) => MaybePromise<number>);
  /**
   * The group's plan (one of the limiter's `plans`): its weight (unless `weight` is given) and its rules.
   * `undefined`: the limiter's `defaultPlan`, or none. A name that is not a plan is the server's mistake: a 500
   * and one WRN_BL_OPTION_RESULT warning, never a 4xx. @defaultValue none
   */
  readonly plan?: (group: string, ctx: Ctx) => MaybePromise<string | undefined>;
  /**
   * The request's priority class (one of the limiter's `classes`): e.g. `'critical'` for known tenants next to
   * anonymous per-IP traffic. `undefined`: the plan's `class`, else `'default'`. A name that is not a class is
   * the server's mistake: a 500 and one WRN_BL_OPTION_RESULT warning, never a 4xx. @defaultValue none
   */
  readonly class?: (group: string, ctx: Ctx) => MaybePromise<string | undefined>;
  /** Requests for which this returns true are not counted and get no headers. */
  readonly skip?: (ctx: Ctx) => MaybePromise<boolean>;
  /** Header format: IETF draft fields, legacy `X-RateLimit-*`, or none. @defaultValue `'draft'` */
  readonly headers?: HeaderFormat;
  /** `'respond'`: answer 429/503/400 with a problem+json body; `'next'`: hand the http-error to the app's error handler. @defaultValue `'respond'` */
  readonly onLimit?: 'respond' | 'next';
  /** Defer denied requests as jobs (202 + Location) instead of answering 429. */
  readonly defer?: DeferOptions<Ctx>;
  /**
   * `cost` is an estimate: an allowed request's decision (`req.rateLimit`, `ctx.state.rateLimit`,
   * `request.rateLimit`) carries `settle(actual)`, which gives the unused units back or charges the overage once
   * the real cost is known (docs/settle.md). Not with `defer`. @defaultValue `false`
   */
  readonly settle?: boolean;
}

/** The settings one route may set for itself (Fastify's `config.bulkLimiter`, Nest's `@BulkLimit()`): one list for both. */
export const ROUTE_SETTING_NAMES = [
  'limiter',
  'group',
  'missingGroup',
  'weight',
  'cost',
  'plan',
  'class',
  'skip',
  'headers',
  'defer',
  'settle',
] as const;
export type RouteSettingName = (typeof ROUTE_SETTING_NAMES)[number];

const LIMITER_OPTION_NAMES: readonly string[] = [...ADMISSION_OPTION_NAMES, ...DEFER_OPTION_NAMES];
const MIDDLEWARE_OPTIONS: OptionNames<Omit<BulkLimiterOptions<unknown>, keyof LimiterOptions>> = {
  limiter: true,
  group: true,
  ipv6Subnet: true,
  missingGroup: true,
  weight: true,
  cost: true,
  plan: true,
  class: true,
  skip: true,
  headers: true,
  onLimit: true,
  defer: true,
  settle: true,
};
const MIDDLEWARE_OPTION_NAMES: readonly string[] = Object.keys(MIDDLEWARE_OPTIONS);
const ALL_OPTION_NAMES: readonly string[] = [...MIDDLEWARE_OPTION_NAMES, ...LIMITER_OPTION_NAMES];

export function limiterOptionsOf<Ctx>(o: BulkLimiterOptions<Ctx>): LimiterOptions {
  const out: Record<string, unknown> = {};
  for (const name of LIMITER_OPTION_NAMES) {
    if ((o as Record<string, unknown>)[name] !== undefined) out[name] = (o as Record<string, unknown>)[name];
  }
  return out as unknown as LimiterOptions;
}

export function validateMiddlewareOptions<Ctx>(options: BulkLimiterOptions<Ctx>): BulkLimiterOptions<Ctx> {
  const o = optionsObject(options);
  refuseUnknownOptions(o, ALL_OPTION_NAMES, 'bulkLimiter()', '', NESTED_OPTION_NAMES);
  // An option set to undefined is an option left out (`{ limiter, windowMs: config.windowMs }` with none configured).
  const inline = Object.keys(o).filter((k) => !MIDDLEWARE_OPTION_NAMES.includes(k) && (o as Record<string, unknown>)[k] !== undefined);
  if (o.limiter !== undefined) {
    if (typeof o.limiter !== 'object' || o.limiter === null || typeof o.limiter.check !== 'function') {
      refuse('limiter', 'a limiter from createLimiter()', o.limiter);
    }
    if (inline.length > 0) {
      throw new ConfigError('ERR_BL_LIMITER', `Pass either \`limiter\` or limiter options (${inline.join(', ')}), not both`);
    }
  }
  func('group', o.group, optional);
  if (o.group !== undefined && o.ipv6Subnet !== undefined) {
    throw new ConfigError(
      'ERR_BL_IPV6_SUBNET',
      '`ipv6Subnet` shapes the default group (the client IP); with a `group` function, group addresses there',
    );
  }
  func('skip', o.skip, optional);
  func('plan', o.plan, optional);
  func('class', o.class, optional);
  oneOf('missingGroup', o.missingGroup, ['shared', 'reject'], optional);
  oneOf('headers', o.headers, ['draft', 'legacy', false], optional);
  oneOf('onLimit', o.onLimit, ['respond', 'next'], optional);
  for (const name of ['weight', 'cost'] as const) {
    const value = o[name];
    if (value !== undefined && typeof value !== 'function' && !isIntegerIn(value)) refuse(name, 'an integer ≥ 1 or a function', value);
  }
  if (o.defer !== undefined) validateDefer(o.defer);
  if (o.settle !== undefined && typeof o.settle !== 'boolean') refuse('settle', 'a boolean', o.settle);
  if (o.settle === true && o.defer !== undefined)
    refuse('settle', 'false with `defer` (a deferred job settles through its handler’s result)', o.settle);
  return o;
}
