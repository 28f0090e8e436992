/**
 * The middleware's own options: names (unknown ones refused), types and values, checked once at
 * construction, and the limiter options given inline, picked out for createLimiter.
 */
import { ConfigError, codeOf, describeValue } from '../errors';
import type { LimiterOptions } from '../limiter';
import { refuseUnknownOptions, type OptionNames } from '../option-names';
import { LIMITER_OPTION_NAMES as ADMISSION_OPTION_NAMES } from '../options';
import { DEFER_OPTION_NAMES } from '../queue/defer-input';
import { validateDefer } from './defer';
import type { BulkLimiterOptions } from './shared';

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
  if (typeof options !== 'object' || options === null) {
    throw new ConfigError('ERR_BL_OPTIONS', `Expected options to be an object, got ${describeValue(options)}`);
  }
  refuseUnknownOptions(options, ALL_OPTION_NAMES, 'bulkLimiter()');
  const inline = Object.keys(options).filter((k) => !MIDDLEWARE_OPTION_NAMES.includes(k));
  const o = options;
  if (o.limiter !== undefined) {
    if (typeof o.limiter !== 'object' || o.limiter === null || typeof o.limiter.check !== 'function') {
      throw new ConfigError('ERR_BL_LIMITER', `Expected \`limiter\` to be a limiter from createLimiter(), got ${describeValue(o.limiter)}`);
    }
    if (inline.length > 0) {
      throw new ConfigError('ERR_BL_LIMITER', `Pass either \`limiter\` or limiter options (${inline.join(', ')}), not both`);
    }
  }
  fn('group', o.group);
  if (o.group !== undefined && o.ipv6Subnet !== undefined) {
    throw new ConfigError(
      'ERR_BL_IPV6_SUBNET',
      '`ipv6Subnet` shapes the default group (the client IP); with a `group` function, group addresses there',
    );
  }
  fn('skip', o.skip);
  fn('plan', o.plan);
  oneOf('missingGroup', o.missingGroup, ['shared', 'reject']);
  oneOf('headers', o.headers, ['draft', 'legacy', false]);
  oneOf('onLimit', o.onLimit, ['respond', 'next']);
  intOrFn('weight', o.weight);
  intOrFn('cost', o.cost);
  if (o.defer !== undefined) validateDefer(o.defer);
  return o;
}

function fn(name: string, value: unknown): void {
  if (value !== undefined && typeof value !== 'function') {
    throw new ConfigError(`ERR_BL_${name.toUpperCase()}`, `Expected \`${name}\` to be a function, got ${describeValue(value)}`);
  }
}

function intOrFn(name: string, value: unknown): void {
  if (value !== undefined && typeof value !== 'function' && !(typeof value === 'number' && Number.isInteger(value) && value >= 1)) {
    throw new ConfigError(`ERR_BL_${name.toUpperCase()}`, `Expected \`${name}\` to be an integer ≥ 1 or a function, got ${describeValue(value)}`);
  }
}

function oneOf(name: string, value: unknown, allowed: readonly unknown[]): void {
  if (value !== undefined && !allowed.includes(value)) {
    const code = codeOf(name);
    throw new ConfigError(
      code,
      `Expected \`${name}\` to be ${allowed.map((v) => (typeof v === 'string' ? `'${v}'` : String(v))).join(', ')}, got ${describeValue(value)}`,
    );
  }
}
