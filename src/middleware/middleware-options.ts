/**
 * The middleware's own options: names (unknown ones refused), types and values, checked once at
 * construction, and the limiter options given inline, picked out for createLimiter.
 */
import { ConfigError } from '../errors';
import type { LimiterOptions } from '../limiter';
import { refuseUnknownOptions, type OptionNames } from '../option-names';
import { LIMITER_OPTION_NAMES as ADMISSION_OPTION_NAMES } from '../options';
import { DEFER_OPTION_NAMES } from '../queue/defer-input';
import { validateDefer } from './defer';
import type { BulkLimiterOptions } from './shared';
import { func, isIntegerIn, oneOf, optional, optionsObject, refuse } from '../validate';

const LIMITER_OPTION_NAMES: readonly string[] = [...ADMISSION_OPTION_NAMES, ...DEFER_OPTION_NAMES];
const MIDDLEWARE_OPTIONS: OptionNames<Omit<BulkLimiterOptions<unknown>, keyof LimiterOptions>> = {
  limiter: true,
  group: true,
  ipv6Subnet: true,
  missingGroup: true,
  weight: true,
  cost: true,
  plan: true,
  skip: true,
  headers: true,
  onLimit: true,
  defer: true,
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
  refuseUnknownOptions(o, ALL_OPTION_NAMES, 'bulkLimiter()');
  const inline = Object.keys(o).filter((k) => !MIDDLEWARE_OPTION_NAMES.includes(k));
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
  oneOf('missingGroup', o.missingGroup, ['shared', 'reject'], optional);
  oneOf('headers', o.headers, ['draft', 'legacy', false], optional);
  oneOf('onLimit', o.onLimit, ['respond', 'next'], optional);
  for (const name of ['weight', 'cost'] as const) {
    const value = o[name];
    if (value !== undefined && typeof value !== 'function' && !isIntegerIn(value)) refuse(name, 'an integer ≥ 1 or a function', value);
  }
  if (o.defer !== undefined) validateDefer(o.defer);
  return o;
}
