/**
 * Admission guarantees that took a fix to hold (each case failed on both stores before it): bounded retry
 * slots, the maxGroups count, costly requests' share (green reservation, docs/algorithm.md §2.6), the clock
 * clamp, green within the cap, the water-level floor, the green burst floor. Same harness as store-suite.ts.
 */
import type { AdmitInput, Decision, LimiterSpec, LimiterStore } from '../../src/types';
import { ManualClock, maxInAnyWindow, spec, useHarness, type StoreHarness } from './store-suite';

const input = (group: string, weight = 1, cost = 1): AdmitInput => ({ group, weight, cost });

/** Strict emission interval of a spec, in ms: W / (L − b + 1). */
const emissionMs = (s: LimiterSpec): number => s.windowMs / (s.limit - s.burst + 1);

export function describeAdmissionGuarantees(name: string, setup: () => Promise<StoreHarness>): void {
  describe(`admission guarantees under floods, costs and clock steps: ${name}`, () => {
    const bindAll = useHarness(setup);
    const bind = (clock: ManualClock, s: LimiterSpec): LimiterStore => bindAll(clock, s)[0]!;

    test('a flood is never told to wait more than a window plus its guaranteed interval', async () => {
      const clock = new ManualClock();
      const s = spec({ limit: 100, windowMs: 1000, burst: 5, reserve: 1 });
      const st = bind(clock, s);
      let maxRetry = 0;
      let denied = 0;
      for (let t = 0; t < 3000; t += 2) {
        // 1000 req/s against 100/s for 3 s
        for (let i = 0; i < 2; i++) {
          const d = await st.admit(input('flood'));
          if (!d.allowed) {
            denied += 1;
            maxRetry = Math.max(maxRetry, d.retryAfterMs);
          }
        }
        clock.advance(2);
      }
      expect(denied).toBeGreaterThan(2000);
      // a lone group: γ = 1, guaranteed interval = the emission interval
      expect(maxRetry).toBeLessThanOrEqual(s.windowMs + Math.ceil(emissionMs(s)));
    });

    test('20 closed-loop callers of one group next to a flood need about 2 attempts per success', async () => {
      const clock = new ManualClock();
      const s = spec({ limit: 1000, windowMs: 1000, burst: 50, reserve: 10, idleMs: 10_000 });
      const st = bind(clock, s);
      const wake = new Array<number>(20).fill(0);
      let attempts = 0;
      let admitted = 0;
      for (let t = 0; t < 2000; t++) {
        for (const f of ['f1', 'f2', 'f3']) await st.admit(input(f));
        for (let i = 0; i < 20; i++) {
          while (wake[i]! <= t) {
            const d = await st.admit(input('a'));
            attempts += 1;
            if (d.allowed) admitted += 1;
            else wake[i] = t + Math.max(1, d.retryAfterMs);
          }
        }
        clock.advance(1);
      }
      expect(attempts / admitted).toBeLessThan(2.5);
      // and the callers get their guaranteed share (951/4 per s) over 2 s
      expect(admitted).toBeGreaterThan((0.9 * 2 * 951) / 4);
    });

    test('the overflow group does not take one of the maxGroups places', async () => {
      const clock = new ManualClock();
      const st = bind(clock, spec({ idleMs: 1000, maxGroups: 3 }));
      expect((await st.admit(input('a'))).group).toBe('a');
      clock.advance(500);
      for (const g of ['b', 'c']) expect((await st.admit(input(g))).group).toBe(g);
      expect((await st.admit(input('x'))).group).toBe('*overflow*');
      // a goes idle and is trimmed; b, c and the overflow group (seen 500 ms later) stay active
      for (let t = 0; t < 6; t++) {
        clock.advance(100);
        for (const g of ['b', 'c']) await st.admit(input(g));
      }
      const d = await st.admit(input('d'));
      expect(d.group).toBe('d');
      expect(d.activeGroups).toBe(4); // 3 real groups + the overflow group
      expect((await st.admit(input('e'))).group).toBe('*overflow*');
    });

    test.each([4, 8, 20])('a cost-%i group next to a flood of cost-1 groups gets its weighted share', async (k) => {
      // 8 groups flood at 200/s each; the costly group asks every 50 ms (far above its share, open loop).
      const clock = new ManualClock();
      const s = spec({ limit: 200, windowMs: 1000, burst: 20, reserve: 4, idleMs: 10_000, epochMs: 250 });
      const st = bind(clock, s);
      const units: Record<string, number> = {};
      const log: Array<{ at: number; cost: number }> = [];
      for (let t = 0; t < 6000; t += 5) {
        const calls: Array<[string, number]> = Array.from({ length: 8 }, (_, f) => [`f${f}`, 1]);
        if (t >= 1000 && t % 50 === 0) calls.push(['k', k]);
        for (const [g, c] of calls) {
          const d = await st.admit(input(g, 1, c));
          if (d.allowed && t >= 1000) units[g] = (units[g] ?? 0) + c;
          if (d.allowed) log.push({ at: d.at, cost: c });
        }
        clock.advance(5);
      }
      const share = ((s.limit - s.burst + 1) / 9) * 5; // units in 5 s, Σw = 9
      expect(units.k ?? 0).toBeGreaterThanOrEqual(0.8 * share);
      expect(units.k ?? 0).toBeLessThanOrEqual(1.3 * share + k);
      // the flood keeps the rest: nothing is wasted, nobody starves (the fixed call order favours f0 over f7)
      const total = Object.values(units).reduce((a, b) => a + b, 0);
      expect(total).toBeGreaterThanOrEqual(0.95 * 9 * share);
      for (let f = 0; f < 8; f++) expect(units[`f${f}`]).toBeGreaterThanOrEqual(0.6 * share);
      expect(maxInAnyWindow(log, s.windowMs)).toBeLessThanOrEqual(s.limit);
    });

    test('a backward clock step and the way forward again refill only once', async () => {
      const clock = new ManualClock();
      const s = spec({ limit: 10, windowMs: 1000, burst: 5, reserve: 1 }); // T = 1000/6 ms
      const st = bind(clock, s);
      const drain = async (): Promise<number> => {
        let n = 0;
        while ((await st.admit(input('a'))).allowed) n += 1;
        return n;
      };
      expect(await drain()).toBe(5);
      clock.advance(500); // 3 tokens
      expect(await drain()).toBe(3);
      const before = (await st.admit(input('a'))).at;
      clock.advance(-500);
      const during = await st.admit(input('a'));
      expect(during.allowed).toBe(false);
      expect(during.at).toBe(before); // the store's time never steps back
      clock.advance(500); // back where we were: the same 500 ms are not refilled again
      expect(await drain()).toBe(0);
      clock.advance(500);
      expect(await drain()).toBe(3);
    });

    test('green stays within the cap: a heavy group never gets its cap plus its guarantee', async () => {
      // Two groups flood until the water level settles at the fair half; then one stops (still active,
      // and the level is only re-estimated every 10 s): the other may not exceed its cap of 50 %.
      const clock = new ManualClock();
      const s = spec({ limit: 100, windowMs: 1000, burst: 10, reserve: 2, idleMs: 60_000, epochMs: 10_000 });
      const st = bind(clock, s);
      let last: Decision | undefined;
      for (let t = 0; t < 21_000; t += 10) {
        // two epochs of both flooding
        await st.admit(input('a'));
        last = await st.admit(input('b'));
        clock.advance(10);
      }
      expect(last!.limit).toBe(50);
      let a = 0;
      for (let t = 0; t < 5000; t += 10) {
        // b is silent for 5 s: a alone, capped at 50/s
        const d = await st.admit(input('a'));
        if (d.allowed) a += 1;
        clock.advance(10);
      }
      expect(a).toBeLessThanOrEqual(5 * 50 + s.burst);
      expect(a).toBeGreaterThan(0.9 * 5 * 50);
    });

    test('the water level never drops below 1/Σw, so a flooding survivor regains the whole limit fast', async () => {
      // Short epochs (supply ≈ 38 < a new group's burst of 40): every epoch some new groups arrive with a burst,
      // counting more demand than the epoch supplied, which pushes the level down epoch after epoch.
      const clock = new ManualClock();
      const s = spec({ limit: 1000, windowMs: 1000, burst: 50, reserve: 40, idleMs: 60_000, epochMs: 40 });
      const st = bind(clock, s);
      let n = 0;
      for (let t = 0; t < 320; t++) {
        for (let i = 0; i < 2; i++) await st.admit(input('survivor'));
        if (t % 40 < 3) {
          for (let i = 0; i < 40; i++) await st.admit(input(`c${n}`));
          n += 1;
        }
        clock.advance(1);
      }
      // the 24 newcomers stay active but silent; two epochs later the survivor may borrow everything again
      const limits: number[] = [];
      for (let t = 320; t < 500; t++) {
        const d = await st.admit(input('survivor'));
        await st.admit(input('survivor'));
        if (t >= 400) limits.push(d.limit);
        clock.advance(1);
      }
      expect(Math.min(...limits)).toBeGreaterThan(0.9 * s.limit);
    });

    test("a small tenant's bursts of `reserve` stay green next to a flood", async () => {
      const clock = new ManualClock();
      const s = spec({ limit: 1000, windowMs: 1000, burst: 50, reserve: 10, idleMs: 10_000 });
      const st = bind(clock, s);
      const small = Array.from({ length: 20 }, (_, i) => `s${i}`); // γ = 1/21: b·γ ≈ 2.4 < reserve
      const colours: Record<string, number> = { green: 0, yellow: 0, red: 0 };
      for (let t = 0; t < 3000; t += 5) {
        for (let i = 0; i < 10; i++) await st.admit(input('flood'));
        // each small tenant: a burst of 10 every 500 ms (20/s, below its share of ≈ 45/s)
        for (const [k, g] of small.entries()) {
          if ((t + k * 25) % 500 !== 0) continue;
          for (let i = 0; i < 10; i++) {
            const d = await st.admit(input(g));
            if (t >= 500) colours[d.colour]! += 1;
          }
        }
        clock.advance(5);
      }
      expect(colours.red).toBe(0);
      expect(colours.green! / (colours.green! + colours.yellow!)).toBeGreaterThan(0.99);
    });
  });
}
