/**
 * Unknown options are refused by every entry point, with a suggestion: a misspelling, or the name another
 * package (express-rate-limit, rate-limiter-flexible, BullMQ) uses for the option.
 */
import { ConfigError } from '../../src/errors';
import { createLimiter } from '../../src/limiter/limiter';
import * as onExpress from '../../src/middleware/express';
import * as onKoa from '../../src/middleware/koa';
import { suggestOption } from '../../src/util/option-names';
import { Dispatcher } from '../../src/queue/dispatcher';
import { Worker } from '../../src/queue/worker';
import { MemoryStore } from '../../src/memory/memory-store';

const limiter = createLimiter({ store: new MemoryStore(), name: 'option-names', limit: 10 });
const handlers = { a: () => undefined };

function thrown(make: () => unknown): ConfigError {
  try {
    make();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

describe('unknown options are refused everywhere, with a suggestion', () => {
  test.each([
    ['createLimiter: max (express-rate-limit)', () => createLimiter({ max: 10 } as never), 'max', 'limit'],
    ['createLimiter: points (rate-limiter-flexible)', () => createLimiter({ points: 10 } as never), 'points', 'limit'],
    ['createLimiter: duration (rate-limiter-flexible)', () => createLimiter({ limit: 1, duration: 60 } as never), 'duration', 'windowMs'],
    ['createLimiter: keyPrefix (rate-limiter-flexible)', () => createLimiter({ limit: 1, keyPrefix: 'x' } as never), 'keyPrefix', 'name'],
    ['createLimiter: windowMS (case)', () => createLimiter({ limit: 1, windowMS: 60 } as never), 'windowMS', 'windowMs'],
    ['createLimiter: maxBaclog (a deferral option, misspelt)', () => createLimiter({ limit: 1, maxBaclog: 1 } as never), 'maxBaclog', 'maxBacklog'],
    [
      'createLimiter: denyCache.sampelRate',
      () => createLimiter({ limit: 1, tuning: { denyCache: { sampelRate: 0.1 } } } as never),
      'tuning.denyCache.sampelRate',
      'tuning.denyCache.sampleRate',
    ],
    ['express bulkLimiter: keyGenerator', () => onExpress.bulkLimiter({ limiter, keyGenerator: () => 'a' } as never), 'keyGenerator', 'group'],
    ['koa bulkLimiter: max inline', () => onKoa.bulkLimiter({ max: 5 } as never), 'max', 'limit'],
    [
      'express bulkLimiter: standardHeaders',
      () => onExpress.bulkLimiter({ limiter, standardHeaders: 'draft-7' } as never),
      'standardHeaders',
      'headers',
    ],
    [
      'koa bulkLimiter: defer.statusURL',
      () => onKoa.bulkLimiter({ limiter, defer: { type: 'a', statusURL: () => '/' } } as never),
      'defer.statusURL',
      'defer.statusUrl',
    ],
    ['express jobStatus: grup', () => onExpress.jobStatus({ limiter, grup: () => 'a' } as never), 'grup', 'group'],
    ['koa jobStatus: limitter', () => onKoa.jobStatus({ limitter: limiter } as never), 'limitter', 'limiter'],
    ['koa jobStatus: paramName', () => onKoa.jobStatus({ limiter, public: true, paramName: 'jobId' } as never), 'paramName', 'param'],
    [
      'Dispatcher: stalledInterval (BullMQ)',
      () => new Dispatcher({ limiter, stalledInterval: 1000 } as never),
      'stalledInterval',
      'reclaimIntervalMs',
    ],
    ['Dispatcher: readymax', () => new Dispatcher({ limiter, readymax: 10 } as never), 'readymax', 'readyMax'],
    ['Worker: attempts (BullMQ)', () => new Worker({ limiter, handlers, attempts: 3 } as never), 'attempts', 'maxAttempts'],
    ['Worker: lockDuration (BullMQ)', () => new Worker({ limiter, handlers, lockDuration: 30_000 } as never), 'lockDuration', 'leaseMs'],
    ['Worker: max means maxAttempts here', () => new Worker({ limiter, handlers, max: 3 } as never), 'max', 'maxAttempts'],
    ['Worker: concurency', () => new Worker({ limiter, handlers, concurency: 3 } as never), 'concurency', 'concurrency'],
  ])('%s', (_title, make, name, suggestion) => {
    const error = thrown(make);
    expect(error.code).toBe('ERR_BL_UNKNOWN_OPTION');
    expect(error.message).toContain(`Unknown option \`${name}\``);
    expect(error.message).toContain(`did you mean \`${suggestion}\`?`);
  });

  test('a name with nothing close is refused without a guess, listing the known options', () => {
    const error = thrown(() => new Dispatcher({ limiter, frobnicate: true } as never));
    expect(error.message).not.toContain('did you mean');
    expect(error.message).toMatch(/of new Dispatcher\(\).*Known options: limiter, readyMax/);
  });

  test('check(group, opts) refuses unknown options and unknown defer fields (the promise rejects)', async () => {
    await expect(limiter.check('a', { points: 2 } as never)).rejects.toMatchObject({
      code: 'ERR_BL_UNKNOWN_OPTION',
      message: expect.stringContaining('did you mean `cost`?'),
    });
    await expect(limiter.check('a', { cots: 2 } as never)).rejects.toMatchObject({
      code: 'ERR_BL_UNKNOWN_OPTION',
      message: expect.stringContaining('did you mean `cost`?'),
    });
    await expect(limiter.check('a', { defer: { type: 'a', paylod: 1 } } as never)).rejects.toMatchObject({
      message: expect.stringContaining('`defer.paylod`'),
    });
    await expect(limiter.check('a', { cost: 1, weight: 1 })).resolves.toMatchObject({ allowed: true });
  });

  test('known options still pass, including ones whose value is undefined', () => {
    expect(() => new Dispatcher({ limiter, readyMax: undefined })).not.toThrow();
    expect(() => new Worker({ limiter, handlers, concurrency: 2 })).not.toThrow();
    expect(() => onExpress.jobStatus({ limiter, group: () => 'a' })).not.toThrow();
  });
});

describe('suggestOption', () => {
  const known = ['limit', 'windowMs', 'group', 'cost', 'maxAttempts'];
  test.each([
    ['max', 'limit'],
    ['points', 'limit'],
    ['keyGenerator', 'group'],
    ['WINDOWMS', 'windowMs'],
    ['windwMs', 'windowMs'],
    ['gruop', 'group'],
    ['cots', 'cost'],
    ['limt', 'limit'],
  ])('%s → %s', (name, expected) => expect(suggestOption(name, known)).toBe(expected));

  test.each(['zzz', 'xyz', 'constructor', 'toString'])('%s → no guess', (name) => expect(suggestOption(name, known)).toBeUndefined());
});
