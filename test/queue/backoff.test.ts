import { exponentialBackoff } from '../../src/queue/backoff';
import { RetryLaterError, isRetryLater } from '../../src/queue/retry-later-error';
import { Sleeper } from '../../src/queue/sleeper';
import { ConfigError } from '../../src/errors';

describe('exponentialBackoff (full jitter)', () => {
  it('doubles the ceiling per attempt up to capMs', () => {
    const top = exponentialBackoff({ baseMs: 100, capMs: 1000, random: () => 0.999999 });
    expect([1, 2, 3, 4, 5, 50, 5000].map(top)).toEqual([99, 199, 399, 799, 999, 999, 999]);
  });

  it('spreads delays over [0, ceiling) with the random source', () => {
    const bottom = exponentialBackoff({ baseMs: 100, capMs: 1000, random: () => 0 });
    expect(bottom(3)).toBe(0);
    const half = exponentialBackoff({ baseMs: 100, capMs: 1000, random: () => 0.5 });
    expect(half(3)).toBe(200);
  });

  it('rejects bad options with a coded ConfigError', () => {
    expect(() => exponentialBackoff({ baseMs: 0 })).toThrow(ConfigError);
    expect(() => exponentialBackoff({ baseMs: 100, capMs: 50 })).toThrow(/capMs/);
    // the default cap (1 hour) is checked against baseMs too
    expect(() => exponentialBackoff({ baseMs: 7_200_000 })).toThrow(expect.objectContaining({ code: 'ERR_BL_BACKOFF_CAP_MS' }));
    expect(() => exponentialBackoff({ random: 0.5 as never })).toThrow(expect.objectContaining({ code: 'ERR_BL_BACKOFF_RANDOM' }));
  });
});

describe('RetryLaterError', () => {
  it('carries its delay and is recognised, also across package copies', () => {
    const error = new RetryLaterError(250);
    expect(error.delayMs).toBe(250);
    expect(isRetryLater(error)).toBe(true);
    expect(isRetryLater(Object.assign(new Error('x'), { code: 'ERR_BL_RETRY_LATER', delayMs: 5 }))).toBe(true);
    expect(isRetryLater(new Error('plain'))).toBe(false);
  });

  it('refuses a negative or fractional delay', () => {
    expect(() => new RetryLaterError(-1)).toThrow(/delayMs/);
    expect(() => new RetryLaterError(1.5)).toThrow(ConfigError);
  });
});

describe('Sleeper', () => {
  it('wakes early on wake() and yields (not blocks) on sleep(0)', async () => {
    const sleeper = new Sleeper();
    const started = Date.now();
    const long = sleeper.sleep(10_000);
    setTimeout(() => sleeper.wake(), 20);
    await long;
    expect(Date.now() - started).toBeLessThan(5000);
    let ticked = false;
    setImmediate(() => (ticked = true));
    await sleeper.sleep(0);
    await sleeper.sleep(0);
    expect(ticked).toBe(true);
  });
});
