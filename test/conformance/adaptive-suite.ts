/**
 * The adaptive limit (lua/includes/adaptive.lua, lua/report.lua; src/core/adaptive.ts) on a store, on its injected
 * clock: a cut on throttled, pacing (one cut and one rise per interval whoever reports), rises over time, the
 * bounds, a Retry-After's hold, shares and the global bound that follow the limit in force, and one value for
 * every process on the store.
 */
import type { AdaptiveSpec, LimiterSpec, LimiterStore } from '../../src/types';
import { ManualClock, maxInAnyWindow, spec, useHarness, type StoreHarness } from './store-suite';

const ADAPTIVE: AdaptiveSpec = { min: 20, max: 200, increase: 5, decrease: 0.5, intervalMs: 1000 };
const adaptiveSpec = (over: Partial<AdaptiveSpec> = {}, rest: Partial<LimiterSpec> = {}): LimiterSpec =>
  spec({ limit: 100, burst: 10, reserve: 2, idleMs: 60_000, ...rest, adaptive: { ...ADAPTIVE, ...over } });

const throttled = (st: LimiterStore, retryAfterMs = 0) => st.report!({ outcome: 'throttled', retryAfterMs });
const ok = (st: LimiterStore) => st.report!({ outcome: 'ok', retryAfterMs: 0 });
const read = async (st: LimiterStore) => (await st.report!({ outcome: 'read', retryAfterMs: 0 })).limit;

/** Admits `group` as fast as `rate` per second for `ms`; the admitted (at, cost) pairs. */
async function flood(
  st: LimiterStore,
  clock: ManualClock,
  groups: readonly string[],
  ms: number,
  stepMs = 2,
): Promise<Array<{ at: number; cost: number; group: string }>> {
  const out: Array<{ at: number; cost: number; group: string }> = [];
  for (let t = 0; t < ms; t += stepMs) {
    for (const group of groups) {
      const d = await st.admit({ group, weight: 1, cost: 1 });
      if (d.allowed) out.push({ at: clock.ms, cost: 1, group });
    }
    clock.advance(stepMs);
  }
  return out;
}

export function describeAdaptiveCases(name: string, setup: () => Promise<StoreHarness>): void {
  describe(`${name}: the adaptive limit`, () => {
    const bind = useHarness(setup);

    test('a throttled report cuts the limit by `decrease`; a reading changes nothing', async () => {
      const clock = new ManualClock();
      const [st] = bind(clock, adaptiveSpec());
      expect(await read(st!)).toBe(100);
      expect(await throttled(st!)).toEqual({ limit: 50, change: -1 });
      expect(await read(st!)).toBe(50);
    });

    test('pacing: ten throttled reports from two processes in one interval are one cut; the next interval cuts again', async () => {
      const clock = new ManualClock();
      const [a, b] = bind(clock, adaptiveSpec(), 2);
      const changes: number[] = [];
      for (let i = 0; i < 10; i++) {
        changes.push((await (i % 2 === 0 ? a! : b!).report!({ outcome: 'throttled', retryAfterMs: 0 })).change);
        clock.advance(99);
      }
      expect(changes).toEqual([-1, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
      expect(await read(b!)).toBe(50);
      clock.advance(10); // 1000 ms after the first cut
      expect(await throttled(b!)).toEqual({ limit: 25, change: -1 });
    });

    test('ok reports raise it once per interval, by `increase` and then doubling steps; many in one interval are one rise', async () => {
      const clock = new ManualClock();
      const [st] = bind(clock, adaptiveSpec());
      const limits: number[] = [];
      expect((await ok(st!)).change).toBe(0); // the state is made: rises are paced from here
      for (let i = 0; i < 5; i++) {
        clock.advance(1000);
        for (let k = 0; k < 5; k++) limits.push((await ok(st!)).limit); // the same instant
      }
      // 100 +5 +10 +20 +40 +80 (capped at max 200 after that)
      expect(limits.filter((_, i) => i % 5 === 0)).toEqual([105, 115, 135, 175, 200]);
      expect(limits.slice(0, 5)).toEqual([105, 105, 105, 105, 105]);
    });

    test('a cut resets the step; the limit stays within min and max', async () => {
      const clock = new ManualClock();
      const [st] = bind(clock, adaptiveSpec());
      for (let i = 0; i < 6; i++) {
        await throttled(st!);
        clock.advance(1000);
      }
      expect(await read(st!)).toBe(20); // 100 → 50 → 25 → 20 (min) …
      expect((await ok(st!)).limit).toBe(25); // an interval after the last cut: +5, the step started again
      for (let i = 0; i < 20; i++) {
        clock.advance(1000);
        await ok(st!);
      }
      expect(await read(st!)).toBe(200);
    });

    test("no rise before an upstream's Retry-After has passed; a cut within the interval only extends the hold", async () => {
      const clock = new ManualClock();
      const [st] = bind(clock, adaptiveSpec());
      await throttled(st!);
      clock.advance(500);
      expect(await throttled(st!, 3000)).toEqual({ limit: 50, change: 0 });
      clock.advance(2000); // 2.5 s after the cut, 1.5 s before the hold ends
      expect((await ok(st!)).change).toBe(0);
      clock.advance(1500);
      expect(await ok(st!)).toEqual({ limit: 55, change: 1 });
    });

    test('the global bound and the shares follow the limit in force; tokens above the smaller bucket are clipped', async () => {
      const clock = new ManualClock();
      const s = adaptiveSpec({}, { burst: 20, reserve: 4 });
      const [st] = bind(clock, s);
      const before = await flood(st!, clock, ['a', 'b'], 3000);
      expect(
        maxInAnyWindow(
          before.filter((x) => x.at >= clock.ms - 2000),
          1000,
        ),
      ).toBeGreaterThanOrEqual(78); // strict at 100: 81 tokens/s
      clock.advance(5000); // idle: the bucket is full (20 tokens)
      await throttled(st!); // limit 50, bucket 10
      const after = await flood(st!, clock, ['a', 'b'], 4000);
      expect(maxInAnyWindow(after, 1000)).toBeLessThanOrEqual(50);
      // the first burst is the new bucket's 10 (and a token per 24.4 ms), not the 20 the bucket held
      expect(after.filter((x) => x.at < after[0]!.at + 20).length).toBeLessThanOrEqual(11);
      const late = after.filter((x) => x.at >= clock.ms - 2000);
      const a = late.filter((x) => x.group === 'a').length;
      const b = late.filter((x) => x.group === 'b').length;
      expect(a + b).toBeGreaterThanOrEqual(75); // strict: 41 tokens/s (T = 1000/(50 − 10 + 1) ms) for 2 s
      expect(Math.abs(a - b)).toBeLessThanOrEqual(6);
      const d = await st!.admit({ group: 'a', weight: 1, cost: 1 });
      expect(d.guaranteed).toBe(25); // half of the limit in force
    });

    test('two processes on one store see one value; the other admits under it', async () => {
      const clock = new ManualClock();
      const [a, b] = bind(clock, adaptiveSpec(), 2);
      await throttled(a!);
      clock.advance(1000);
      await throttled(b!);
      expect(await read(a!)).toBe(25);
      expect(await read(b!)).toBe(25);
      const admitted = await flood(b!, clock, ['x'], 3000);
      expect(maxInAnyWindow(admitted, 1000)).toBeLessThanOrEqual(25);
    });

    // (that it lapses with the keys' TTL, which runs on Redis's own clock, the oracle checks: test/oracle)
    test('the limit in force made before any admission outlives the fresh limiter state the first admission makes', async () => {
      const clock = new ManualClock();
      const s = adaptiveSpec({}, { idleMs: 2000 });
      const [st] = bind(clock, s);
      await throttled(st!); // only the adaptive state exists: no admission yet
      await st!.admit({ group: 'a', weight: 1, cost: 1 }); // a fresh limiter's state, the limit kept
      expect(await read(st!)).toBe(50);
    });
  });
}
