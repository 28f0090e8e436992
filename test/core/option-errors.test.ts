/**
 * Option errors that name what the user wrote: the bound an unsafe integer broke, a client passed where its
 * options go, the rule (and plan) that caps maxCost; and an option set to `undefined` is one left out.
 */
import Redis from 'ioredis';
import { ConfigError } from '../../src/errors';
import { createLimiter } from '../../src/limiter/limiter';
import { RedisStore } from '../../src/redis/redis-store';
import { bulkLimiter } from '../../src/middleware/express';

const error = (make: () => unknown): ConfigError => {
  try {
    make();
  } catch (e) {
    return e as ConfigError;
  }
  throw new Error('expected a ConfigError');
};

test('an integer beyond 2^53 − 1 is refused naming that bound, not "≥ 1"', () => {
  const e = error(() => createLimiter({ limit: 2 ** 53, windowMs: 1000 }));
  expect(e).toBeInstanceOf(ConfigError);
  expect(e.message).toBe('Expected `limit` to be an integer from 1 to 2^53 − 1, got `9007199254740992` (number)');
});

test('new RedisStore(client) says to pass { client }', () => {
  const client = new Redis({ lazyConnect: true });
  try {
    const e = error(() => new RedisStore(client as never));
    expect({ code: e.code, message: e.message }).toEqual({
      code: 'ERR_BL_CLIENT',
      message: 'Expected options with a `client`, got an ioredis client itself: pass `new RedisStore({ client })`',
    });
  } finally {
    client.disconnect();
  }
});

test("maxCost above a rule's capacity names the rule, and the plan when a plan's rule caps it", () => {
  const rules = [{ name: 'per-second', limit: 5, windowMs: 1000, algorithm: 'fixed-window' as const }];
  expect(error(() => createLimiter({ limit: 100, windowMs: 1000, tuning: { burst: 50, maxCost: 10 }, rules })).message).toBe(
    'Expected `tuning.maxCost` to be at most 5, the most rule "per-second" admits at once: a larger cost could never be admitted, got `10` (number)',
  );
  const plans = { free: { rules: [{ name: 'tiny', limit: 3, windowMs: 1000, algorithm: 'fixed-window' as const }] } };
  expect(error(() => createLimiter({ limit: 100, windowMs: 1000, tuning: { burst: 50, maxCost: 10 }, rules, plans })).message).toBe(
    'Expected `tuning.maxCost` to be at most 3, the most plan "free"\'s rule "tiny" admits at once: a larger cost could never be admitted, got `10` (number)',
  );
});

test('bulkLimiter({ limiter, windowMs: undefined }): an option set to undefined is not an inline option', () => {
  const limiter = createLimiter({ limit: 10, windowMs: 1000 });
  expect(() => bulkLimiter({ limiter, windowMs: undefined })).not.toThrow();
  expect(error(() => bulkLimiter({ limiter, windowMs: 1000 })).code).toBe('ERR_BL_LIMITER');
});
