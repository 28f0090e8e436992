/** fast-check generators shared by the core property tests: a limiter spec and a stream of arrivals. */
import fc from 'fast-check';
import type { LimiterSpec } from '../../src/types';

export interface Arrival {
  readonly dtMs: number;
  readonly group: number;
  readonly weight: number;
  readonly cost: number;
}

export const specArb = fc
  .record({
    limit: fc.integer({ min: 1, max: 120 }),
    windowMs: fc.integer({ min: 50, max: 2000 }),
    b: fc.double({ min: 0, max: 1, noNaN: true }),
    r: fc.double({ min: 0, max: 1, noNaN: true }),
    idleMs: fc.integer({ min: 20, max: 3000 }),
    epochMs: fc.integer({ min: 10, max: 1000 }),
    // few groups (overflow) or more than a trim page of them
    maxGroups: fc.oneof(fc.integer({ min: 1, max: 8 }), fc.integer({ min: 100, max: 400 })),
  })
  .map(({ limit, windowMs, b, r, idleMs, epochMs, maxGroups }) => {
    const burst = Math.max(1, Math.ceil(b * limit));
    const reserve = Math.min(burst - 1, Math.floor(r * burst * 0.5));
    const spec: LimiterSpec = {
      name: 'p',
      limit,
      windowMs,
      burst,
      reserve,
      idleMs,
      epochMs,
      sustained: false,
      maxGroups,
      probationMs: 0,
      concurrencyLeaseMs: 60_000,
    };
    return spec;
  });

export const arrivalsArb = (maxCost: number, n = 300) =>
  fc.array(
    fc.record({
      dtMs: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 5 }), fc.integer({ min: 0, max: 400 })),
      group: fc.oneof(fc.integer({ min: 0, max: 9 }), fc.integer({ min: 0, max: 299 })),
      weight: fc.integer({ min: 1, max: 5 }),
      cost: fc.integer({ min: 1, max: Math.max(1, maxCost) }),
    }),
    { minLength: 1, maxLength: n },
  );
