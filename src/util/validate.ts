/**
 * The option checks every entry point shares: each throws ConfigError with the option's code and a message
 * "Expected `name` to be …, got <the value and its type>", and returns the value narrowed (or the fallback).
 */
import { ConfigError, describeValue, type ErrorCode } from '../errors';
import type { Logger } from '../types';

/**
 * The error code of an option or argument: `maxBacklog` → `ERR_BL_MAX_BACKLOG`, a path joins its parts
 * (`backoff.baseMs` → `ERR_BL_BACKOFF_BASE_MS`); `prefix` goes after `ERR_BL_` (`BAD_`, `DEFER_`). Every name
 * an entry point passes is in ERROR_CODES (test/package/error-codes.test.ts builds them all).
 */
export function codeOf(name: string, prefix = ''): ErrorCode {
  return `ERR_BL_${prefix}${name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/\./g, '_')
    .toUpperCase()}` as ErrorCode;
}

/**
 * How one check reports and defaults: `code` (else codeOf(name)), `expected` (the message's "to be …", else
 * the helper's own), `fallback` (returned for `undefined`; `{ fallback: undefined }` makes the option optional).
 */
export interface Check<F> {
  readonly code?: ErrorCode;
  readonly expected?: string;
  readonly fallback?: F;
}

/** Throws the ConfigError of option `name`: "Expected `name` to be <expected>, got <value>". */
export function refuse(name: string, expected: string, value: unknown, code: ErrorCode = codeOf(name)): never {
  throw new ConfigError(code, `Expected \`${name}\` to be ${expected}, got ${describeValue(value)}`);
}

/** True when `value` is absent and the check has a fallback for it. */
function absent<F>(value: unknown, check: Check<F>): boolean {
  return value === undefined && 'fallback' in check;
}

function fail<F>(name: string, value: unknown, check: Check<F>, expected: string): never {
  return refuse(name, check.expected ?? expected, value, check.code);
}

/** The check of an option that may be left out (undefined passes). */
export const optional: Check<undefined> = Object.freeze({ fallback: undefined });

/** A safe integer from `min` (default 1) to `max` (default none). */
export function isIntegerIn(value: unknown, min = 1, max = Number.MAX_SAFE_INTEGER): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= min && value <= max;
}

/** An integer ≥ `min` (default 1) and, with `max`, ≤ `max`. */
export function integer<F = never>(
  name: string,
  value: unknown,
  check: Check<F> & { readonly min?: number; readonly max?: number } = {},
): number | F {
  if (absent(value, check)) return check.fallback as F;
  const { min = 1, max } = check;
  if (!isIntegerIn(value, min, max)) {
    // 2 ** 53 is an integer ≥ 1 to a reader: say which bound it broke.
    const unsafe = max === undefined && typeof value === 'number' && Number.isInteger(value) && value > Number.MAX_SAFE_INTEGER;
    fail(
      name,
      value,
      check,
      max !== undefined ? `an integer from ${min} to ${max}` : unsafe ? `an integer from ${min} to 2^53 − 1` : `an integer ≥ ${min}`,
    );
  }
  return value as number;
}

/** A finite number > 0. */
export function positiveNumber<F = never>(name: string, value: unknown, check: Check<F> = {}): number | F {
  if (absent(value, check)) return check.fallback as F;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) fail(name, value, check, 'a positive number');
  return value as number;
}

/** One of `allowed` (compared with ===). */
export function oneOf<T, F = never>(name: string, value: unknown, allowed: readonly T[], check: Check<F> = {}): T | F {
  if (absent(value, check)) return check.fallback as F;
  if (!allowed.includes(value as T)) {
    fail(name, value, check, `one of ${allowed.map((v) => (typeof v === 'string' ? `'${v}'` : String(v))).join(', ')}`);
  }
  return value as T;
}

/** A function. */
export function func<T extends (...args: never[]) => unknown, F = never>(name: string, value: unknown, check: Check<F> = {}): T | F {
  if (absent(value, check)) return check.fallback as F;
  if (typeof value !== 'function') fail(name, value, check, 'a function');
  return value as T;
}

/** `true` or `false`. */
export function boolean<F = never>(name: string, value: unknown, check: Check<F> = {}): boolean | F {
  if (absent(value, check)) return check.fallback as F;
  if (typeof value !== 'boolean') fail(name, value, check, 'a boolean');
  return value as boolean;
}

/** An object that is not null and not an array. */
export function plainObject<T extends object = Record<string, unknown>, F = never>(name: string, value: unknown, check: Check<F> = {}): T | F {
  if (absent(value, check)) return check.fallback as F;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) fail(name, value, check, 'an object');
  return value as T;
}

/** The options argument of an entry point: an object (ERR_BL_OPTIONS). */
export function optionsObject<T>(options: T): T {
  if (typeof options !== 'object' || options === null) {
    throw new ConfigError('ERR_BL_OPTIONS', `Expected options to be an object, got ${describeValue(options)}`);
  }
  return options;
}

/** `logger`: anything with a warn(message) method; `console` by default. */
export function loggerOption(value: unknown): Logger {
  if (value === undefined) return console;
  if (typeof value !== 'object' || value === null || typeof (value as Logger).warn !== 'function') {
    refuse('logger', 'an object with a warn(message) method', value);
  }
  return value as Logger;
}

/** Prefixes and limiter names: letters, digits and `._-:/`, so they can never open or close a hash tag. */
export const NAME_PATTERN = /^[A-Za-z0-9._\-:/]{1,64}$/;
