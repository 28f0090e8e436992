/**
 * The honest bound of reserve-then-settle (docs/settle.md "The bound"), on the TypeScript core (MemoryStore) under
 * random limits, estimates and actual costs, on an injected clock: in any window [x, x + windowMs) of a strict
 * limiter, the actual cost of the checks admitted in it is at most `limit` plus the overages the limiter could
 * not know of when it admitted them: those of the reservations admitted in the window or settled in it. One
 * request in flight at a time, that is at most `limit` plus the largest single overage. A reservation never
 * settled counts at its estimate. test/conformance/settle-suite.ts runs the same walk on both stores.
 */
import fc from 'fast-check';
import { MemoryStore } from '../../src/memory/memory-store';
import type { LimiterSpec, LimiterStore } from '../../src/types';
import { SPEC_DEFAULTS } from '../helpers/spec';
import { settleWalk, type Walk } from '../helpers/settle-walk';

const RUNS = Number(process.env.SETTLE_RUNS ?? 60);

const specArb: fc.Arbitrary<LimiterSpec> = fc
  .record({
    limit: fc.integer({ min: 4, max: 200 }),
    windowMs: fc.integer({ min: 100, max: 2000 }),
    burstPct: fc.integer({ min: 5, max: 100 }),
    reservePct: fc.integer({ min: 0, max: 40 }),
    groups: fc.integer({ min: 1, max: 3 }),
  })
  .map(({ limit, windowMs, burstPct, reservePct }) => {
    const burst = Math.max(2, Math.ceil((burstPct * limit) / 100));
    return {
      ...SPEC_DEFAULTS,
      name: 'bound',
      limit,
      windowMs,
      burst,
      reserve: Math.min(burst - 1, Math.floor((reservePct * burst) / 100)),
      idleMs: 5000,
      epochMs: 250,
      sustained: false,
    };
  });

const walkArb = (spec: LimiterSpec, inFlight: number): fc.Arbitrary<Walk> =>
  fc.record({
    spec: fc.constant(spec),
    inFlight: fc.constant(inFlight),
    steps: fc.array(
      fc.record({
        // bursts (no time between checks), short gaps, and gaps long enough to refill the bucket while units are reserved
        dtMs: fc.oneof(
          { arbitrary: fc.constant(0), weight: 5 },
          { arbitrary: fc.integer({ min: 0, max: Math.ceil(spec.windowMs / 8) }), weight: 3 },
          { arbitrary: fc.integer({ min: 0, max: spec.windowMs }), weight: 1 },
        ),
        group: fc.oneof({ arbitrary: fc.constant('a'), weight: 3 }, { arbitrary: fc.constantFrom('b', 'c'), weight: 1 }),
        // an estimate up to the bucket's size less the reserve (a check must fit it)
        cost: fc.integer({ min: 1, max: Math.max(1, spec.burst - spec.reserve) }),
        // under, exact or over the estimate; or never settled
        actualPct: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 100 }), fc.constant(100), fc.integer({ min: 100, max: 300 }), fc.constant(-1)),
        plain: fc.boolean(),
        settleFirst: fc.oneof({ arbitrary: fc.constant(false), weight: 4 }, { arbitrary: fc.constant(true), weight: 1 }),
      }),
      { minLength: 20, maxLength: 160 },
    ),
  });

const memory = (spec: LimiterSpec, clock: () => number): LimiterStore => new MemoryStore({ clock }).bind(spec);

test.each([
  ['one request in flight: at most limit + the largest single overage', 1],
  ['several in flight: at most limit + the overages of the window', 4],
])(
  '%s (MemoryStore)',
  async (_label, inFlight) => {
    await fc.assert(
      fc.asyncProperty(
        specArb.chain((spec) => walkArb(spec, inFlight)),
        async (walk) => {
          const result = await settleWalk(walk, memory);
          expect(result.worst).toBeLessThanOrEqual(0);
          return true;
        },
      ),
      { numRuns: RUNS },
    );
  },
  120_000,
);
