/**
 * The shared option checks (src/util/validate.ts): each accepts what it should, returns the value or the fallback,
 * and refuses with a ConfigError whose code comes from the option's name and whose message names the option
 * and shows the value.
 */
import { ConfigError } from '../../src/errors';
import {
  boolean,
  codeOf,
  func,
  integer,
  isIntegerIn,
  loggerOption,
  oneOf,
  optional,
  optionsObject,
  plainObject,
  positiveNumber,
  refuse,
} from '../../src/util/validate';

/** The ConfigError `run` throws. */
function refusal(run: () => unknown): ConfigError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error('expected a ConfigError, nothing was thrown');
}

describe('codeOf', () => {
  test.each([
    ['limit', 'ERR_BL_LIMIT'],
    ['maxGroups', 'ERR_BL_MAX_GROUPS'],
    ['concurrencyLeaseMs', 'ERR_BL_CONCURRENCY_LEASE_MS'],
    ['ipv6Subnet', 'ERR_BL_IPV6_SUBNET'],
    ['backoff.baseMs', 'ERR_BL_BACKOFF_BASE_MS'],
  ])('%s → %s', (name, code) => {
    expect(codeOf(name)).toBe(code);
  });

  test('a prefix goes after ERR_BL_', () => {
    expect(codeOf('groupConcurrency', 'BAD_')).toBe('ERR_BL_BAD_GROUP_CONCURRENCY');
    expect(codeOf('statusUrl', 'DEFER_')).toBe('ERR_BL_DEFER_STATUS_URL');
  });
});

test('refuse: the option name, what was expected and the value, with the name-built code unless one is given', () => {
  const error = refusal(() => refuse('windowMs', 'an integer ≥ 1', 'soon'));
  expect(error.code).toBe('ERR_BL_WINDOW_MS');
  expect(error.message).toBe('Expected `windowMs` to be an integer ≥ 1, got "soon" (string)');
  expect(refusal(() => refuse('denyCache.hold', "'hint'", 1, 'ERR_BL_DENY_CACHE')).code).toBe('ERR_BL_DENY_CACHE');
});

describe('integer', () => {
  test('accepts integers in range and returns them', () => {
    expect(integer('limit', 5)).toBe(5);
    expect(integer('probationMs', 0, { min: 0 })).toBe(0);
    expect(integer('topGroups', 100, { max: 100 })).toBe(100);
  });

  test('undefined gives the fallback, and only when there is one', () => {
    expect(integer('windowMs', undefined, { fallback: 60_000 })).toBe(60_000);
    expect(integer('concurrency', undefined, optional)).toBeUndefined();
    expect(refusal(() => integer('limit', undefined)).message).toBe('Expected `limit` to be an integer ≥ 1, got `undefined` (undefined)');
  });

  test.each([0, 1.5, -1, NaN, Infinity, '5', null])('refuses %p', (value) => {
    const error = refusal(() => integer('maxGroups', value));
    expect(error.code).toBe('ERR_BL_MAX_GROUPS');
    expect(error.message).toMatch(/^Expected `maxGroups` to be an integer ≥ 1, got /);
  });

  test('refuses an integer beyond 2^53 − 1 naming that bound', () => {
    expect(refusal(() => integer('maxGroups', 2 ** 53)).message).toMatch(/^Expected `maxGroups` to be an integer from 1 to 2\^53 − 1, got /);
  });

  test('a range names both ends; min, max, code and expected are the caller’s', () => {
    expect(refusal(() => integer('topGroups', 101, { max: 100 })).message).toBe(
      'Expected `topGroups` to be an integer from 1 to 100, got `101` (number)',
    );
    expect(refusal(() => integer('topGroups', -1, { min: 0, max: 1000 })).message).toMatch(/from 0 to 1000, got `-1` \(number\)$/);
    const error = refusal(() => integer('rules[0].limit', 0, { code: 'ERR_BL_RULES', expected: 'a positive limit' }));
    expect(error.code).toBe('ERR_BL_RULES');
    expect(error.message).toBe('Expected `rules[0].limit` to be a positive limit, got `0` (number)');
  });

  test('isIntegerIn: the same test as a predicate', () => {
    expect(isIntegerIn(1)).toBe(true);
    expect(isIntegerIn(0)).toBe(false);
    expect(isIntegerIn(0, 0, 5)).toBe(true);
    expect(isIntegerIn(6, 0, 5)).toBe(false);
    expect(isIntegerIn('1')).toBe(false);
  });
});

describe('positiveNumber', () => {
  test('accepts finite numbers above 0', () => {
    expect(positiveNumber('rate', 0.5)).toBe(0.5);
    expect(positiveNumber('rate', undefined, { fallback: 2 })).toBe(2);
  });

  test.each([0, -1, NaN, Infinity, '1'])('refuses %p', (value) => {
    const error = refusal(() => positiveNumber('rate', value));
    expect(error.code).toBe('ERR_BL_RATE');
    expect(error.message).toMatch(/^Expected `rate` to be a positive number, got /);
  });
});

describe('oneOf', () => {
  test('accepts a listed value, strings and others alike', () => {
    expect(oneOf('onStoreError', 'deny', ['allow', 'deny', 'local'])).toBe('deny');
    expect(oneOf('headers', false, ['draft', 'legacy', false])).toBe(false);
    expect(oneOf('onStoreError', undefined, ['allow', 'deny', 'local'], { fallback: 'local' })).toBe('local');
  });

  test('refuses anything else, listing the choices', () => {
    const error = refusal(() => oneOf('headers', true, ['draft', 'legacy', false]));
    expect(error.code).toBe('ERR_BL_HEADERS');
    expect(error.message).toBe("Expected `headers` to be one of 'draft', 'legacy', false, got `true` (boolean)");
    expect(refusal(() => oneOf('onLimit', undefined, ['respond', 'next'])).code).toBe('ERR_BL_ON_LIMIT');
  });
});

describe('func', () => {
  test('accepts a function; undefined only when optional', () => {
    const group = (): string => 'a';
    expect(func('group', group)).toBe(group);
    expect(func('group', undefined, optional)).toBeUndefined();
  });

  test.each([undefined, 'req.ip', {}])('refuses %p', (value) => {
    const error = refusal(() => func('skip', value));
    expect(error.code).toBe('ERR_BL_SKIP');
    expect(error.message).toMatch(/^Expected `skip` to be a function, got /);
  });
});

describe('boolean', () => {
  test('accepts true and false', () => {
    expect(boolean('sustained', true)).toBe(true);
    expect(boolean('sustained', undefined, { fallback: false })).toBe(false);
  });

  test.each(['true', 1, null])('refuses %p', (value) => {
    const error = refusal(() => boolean('public', value));
    expect(error.code).toBe('ERR_BL_PUBLIC');
    expect(error.message).toMatch(/^Expected `public` to be a boolean, got /);
  });
});

describe('plainObject', () => {
  test('accepts an object', () => {
    const handlers = { report: () => undefined };
    expect(plainObject('handlers', handlers)).toBe(handlers);
  });

  test.each([null, [], 'x', () => undefined])('refuses %p', (value) => {
    const error = refusal(() => plainObject('handlers', value));
    expect(error.code).toBe('ERR_BL_HANDLERS');
    expect(error.message).toMatch(/^Expected `handlers` to be an object, got /);
  });
});

test('optionsObject: an entry point’s options must be an object (ERR_BL_OPTIONS)', () => {
  const options = { limit: 1 };
  expect(optionsObject(options)).toBe(options);
  const error = refusal(() => optionsObject(null));
  expect(error.code).toBe('ERR_BL_OPTIONS');
  expect(error.message).toBe('Expected options to be an object, got null');
});

test('loggerOption: console by default, anything with warn(), else ERR_BL_LOGGER', () => {
  expect(loggerOption(undefined)).toBe(console);
  const logger = { warn: (): void => undefined };
  expect(loggerOption(logger)).toBe(logger);
  const error = refusal(() => loggerOption({ log: () => undefined }));
  expect(error.code).toBe('ERR_BL_LOGGER');
  expect(error.message).toBe('Expected `logger` to be an object with a warn(message) method, got an object');
});
