import { ConfigError } from '../../src/errors';
import { createLimiter } from '../../src/limiter/limiter';
import { bulkLimiter as expressLimiter } from '../../src/middleware/express';
import { bulkLimiter as koaLimiter } from '../../src/middleware/koa';
import { MemoryStore } from '../../src/memory/memory-store';

const limiter = createLimiter({ store: new MemoryStore(), name: 'mw-options', limit: 10 });

describe.each([
  ['express', expressLimiter as (o: unknown) => unknown],
  ['koa', koaLimiter as (o: unknown) => unknown],
])('%s bulkLimiter options', (_name, bulkLimiter) => {
  test('returns a named middleware', () => {
    expect((bulkLimiter({ limiter }) as { name: string }).name).toBe('bulkLimiterMiddleware');
    expect(typeof bulkLimiter({ limit: 5 })).toBe('function');
  });

  test.each([
    ['not an object', null, 'ERR_BL_OPTIONS'],
    ['a typo', { limiter, grup: () => 'a' }, 'ERR_BL_UNKNOWN_OPTION'],
    ['limiter and inline options', { limiter, limit: 5 }, 'ERR_BL_LIMITER'],
    ['limiter not a limiter', { limiter: {} }, 'ERR_BL_LIMITER'],
    ['group not a function', { limiter, group: 'x-tenant' }, 'ERR_BL_GROUP'],
    ['skip not a function', { limiter, skip: true }, 'ERR_BL_SKIP'],
    ['missingGroup unknown', { limiter, missingGroup: 'drop' }, 'ERR_BL_MISSING_GROUP'],
    ['headers unknown', { limiter, headers: 'draft-7' }, 'ERR_BL_HEADERS'],
    ['headers true', { limiter, headers: true }, 'ERR_BL_HEADERS'],
    ['onLimit unknown', { limiter, onLimit: 'throw' }, 'ERR_BL_ON_LIMIT'],
    ['weight 0', { limiter, weight: 0 }, 'ERR_BL_WEIGHT'],
    ['cost 1.5', { limiter, cost: 1.5 }, 'ERR_BL_COST'],
    ['cost a string', { limiter, cost: '2' }, 'ERR_BL_COST'],
    // Static values beyond the limiter's maximum would fail every request (maxCost here is 1, maxWeight 1000).
    ['cost above maxCost', { limiter, cost: 2 }, 'ERR_BL_COST'],
    ['cost above an inline maxCost', { limit: 100, cost: 4, tuning: { maxCost: 3 } }, 'ERR_BL_COST'],
    ['weight above maxWeight', { limiter, weight: 1001 }, 'ERR_BL_WEIGHT'],
    ['inline limit missing', { windowMs: 1000 }, 'ERR_BL_LIMIT'],
    ['inline onStoreError unknown', { limit: 5, onStoreError: 'retry' }, 'ERR_BL_ON_STORE_ERROR'],
  ])('%s → ConfigError', (_label, options, code) => {
    let error: unknown;
    try {
      bulkLimiter(options);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect(error).toMatchObject({ code });
    expect((error as Error).message).toMatch(/Expected|Unknown|Pass either/);
  });
});
