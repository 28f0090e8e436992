/**
 * Fair when demand is bursty and identities are cheap (docs/algorithm.md §2.4, §2.9): a tenant whose arrivals run
 * near its share keeps its demand next to backlogged borrowers (the within-share meter's priority inside the
 * reserve), the graduation budget bounds how many new ids register, a flood of new ids that come back leaves the
 * established tenants their demand, and a costly request that fits beside the configured reserve still passes as
 * yellow. The global bound holds throughout. Same harness as store-suite.ts; all timing on the injected clock,
 * arrivals seeded.
 */
import type { LimiterSpec, LimiterStore } from '../../src/types';
import { ManualClock, maxInAnyWindow, seededRandom, spec, useHarness, type StoreHarness } from './store-suite';

interface Source {
  readonly group: string;
  readonly weight: number;
  /** arrival times (ms from the start) */
  readonly times: number[];
}

/** Poisson arrival times at `rate` per second over [from, to), in bunches of `bunch` at one instant. */
function poisson(next: () => number, rate: number, from: number, to: number, bunch = 1): number[] {
  const times: number[] = [];
  const gap = () => -Math.log(1 - next()) * ((1000 * bunch) / rate);
  for (let t = from + gap(); t < to; t += gap()) for (let i = 0; i < bunch; i++) times.push(t);
  return times;
}

/** Plays every source's arrivals in time order; per group, demand and admitted from `fromMs` on. */
async function play(st: LimiterStore, clock: ManualClock, sources: Source[], fromMs: number) {
  const arrivals = sources.flatMap((s) => s.times.map((t) => ({ t, s })));
  arrivals.sort((a, b) => a.t - b.t);
  const start = clock.ms;
  const demand = new Map<string, number>();
  const admitted = new Map<string, number>();
  const log: Array<{ at: number; cost: number }> = [];
  let activeMax = 0;
  for (const { t, s } of arrivals) {
    clock.ms = start + t;
    const d = await st.admit({ group: s.group, weight: s.weight, cost: 1 });
    if (d.allowed) log.push({ at: d.at, cost: 1 });
    if (d.activeGroups > activeMax) activeMax = d.activeGroups;
    if (t < fromMs) continue;
    demand.set(s.group, (demand.get(s.group) ?? 0) + 1);
    if (d.allowed) admitted.set(s.group, (admitted.get(s.group) ?? 0) + 1);
  }
  const ratio = (g: string) => (admitted.get(g) ?? 0) / demand.get(g)!;
  return { log, ratio, activeMax };
}

export function describeBurstyCases(name: string, setup: () => Promise<StoreHarness>): void {
  describe(`bursty demand and cheap identities: ${name}`, () => {
    const bindAll = useHarness(setup);
    const bind = (clock: ManualClock, s: LimiterSpec): LimiterStore => bindAll(clock, s)[0]!;

    test('tenants below their share, Poisson and in bunches, keep their demand next to backlogged borrowers', async () => {
      // limit 1000, burst 50, reserve 10 (the bench's s8 setting): 6 borrowers at 400/s; 6 tenants at 0.9 of their
      // share, Poisson, and 6 at 0.85 of it in bunches of 4 requests at once (Σw = 24: 951/24 ≈ 39.6/s per weight)
      const clock = new ManualClock();
      const s = spec({ limit: 1000, windowMs: 1000, burst: 50, reserve: 10, idleMs: 10_000, epochMs: 250, probationMs: 250 });
      const st = bind(clock, s);
      const next = seededRandom(7);
      const sources: Source[] = [];
      for (let i = 0; i < 6; i++) sources.push({ group: `borrower-${i}`, weight: 1, times: poisson(next, 400, 0, 8000) });
      for (let i = 0; i < 12; i++) {
        const weight = i % 2 ? 2 : 1;
        const bunched = i >= 6;
        sources.push({ group: `near-${i}`, weight, times: poisson(next, (bunched ? 0.85 : 0.9) * 39.6 * weight, 0, 8000, bunched ? 4 : 1) });
      }
      const r = await play(st, clock, sources, 2000);
      for (let i = 0; i < 6; i++) expect(r.ratio(`near-${i}`)).toBeGreaterThanOrEqual(0.98);
      for (let i = 6; i < 12; i++) expect(r.ratio(`near-${i}`)).toBeGreaterThanOrEqual(0.97);
      expect(maxInAnyWindow(r.log, s.windowMs)).toBeLessThanOrEqual(s.limit);
    });

    test('the graduation budget: 100 new ids register at once, then 10 per second; the others stay on probation and keep their sighting', async () => {
      const clock = new ManualClock();
      const s = spec({ limit: 100_000, windowMs: 1000, burst: 5000, reserve: 1, idleMs: 600_000, probationMs: 100, maxGroups: 10_000 });
      const st = bind(clock, s);
      const ids = Array.from({ length: 150 }, (_, i) => `id-${i}`);
      for (const id of ids) expect((await st.admit({ group: id, weight: 1, cost: 1 })).activeGroups).toBe(1); // '*new*'
      clock.advance(100);
      let active = 0;
      for (const id of ids) active = (await st.admit({ group: id, weight: 1, cost: 1 })).activeGroups;
      expect(active).toBe(101); // 100 graduates and '*new*'
      clock.advance(1000);
      for (const id of ids.slice(100)) active = (await st.admit({ group: id, weight: 1, cost: 1 })).activeGroups;
      expect(active).toBe(111); // 10 more in a second
      clock.advance(4000);
      for (const id of ids.slice(110)) active = (await st.admit({ group: id, weight: 1, cost: 1 })).activeGroups;
      expect(active).toBe(151); // the refused ones graduate later without a new probation
    });

    test('a flood of new ids that come back twice within a second leaves established tenants ≥ 97 % of their demand', async () => {
      // limit 500 (burst 25, reserve 5), 5 tenants at 20/s; from 1 s to 6 s, 300 new ids/s, each at +0, +300–600 ms
      // and +700–1000 ms (past probationMs, while its sighting is kept)
      const clock = new ManualClock();
      const s = spec({ limit: 500, windowMs: 1000, burst: 25, reserve: 5, idleMs: 10_000, epochMs: 250, probationMs: 250 });
      const st = bind(clock, s);
      const next = seededRandom(3);
      const sources: Source[] = [];
      for (let i = 0; i < 5; i++) sources.push({ group: `tenant-${i}`, weight: 1, times: poisson(next, 20, 0, 7000) });
      let n = 0;
      for (const t of poisson(next, 300, 1000, 6000)) {
        sources.push({ group: `new-${n++}`, weight: 1, times: [t, t + 300 + 300 * next(), t + 700 + 300 * next()] });
      }
      const r = await play(st, clock, sources, 1000);
      for (let i = 0; i < 5; i++) expect(r.ratio(`tenant-${i}`)).toBeGreaterThanOrEqual(0.97);
      // at most the budget's 100 + 10/s of the 1,500 new ids ever registered (5 tenants, '*new*')
      expect(r.activeMax).toBeLessThanOrEqual(5 + 1 + 100 + 10 * 7);
      expect(maxInAnyWindow(r.log, s.windowMs)).toBeLessThanOrEqual(s.limit);
    });

    test('a cost that fits beside the configured reserve passes as yellow (the reserve of ⌊b/2⌋ gives way to it)', async () => {
      const clock = new ManualClock();
      const st = bind(clock, spec({ limit: 100, windowMs: 1000, burst: 20, reserve: 4, probationMs: 0 }));
      for (const g of ['b', 'c', 'd']) await st.admit({ group: g, weight: 1, cost: 1 });
      expect((await st.admit({ group: 'a', weight: 1, cost: 16 })).colour).toBe('green');
      // the bucket refills to 20; a's guaranteed meter (a quarter of the rate) holds fewer than 16 units again
      clock.advance(300);
      const d = await st.admit({ group: 'a', weight: 1, cost: 16 });
      expect(d).toMatchObject({ allowed: true, colour: 'yellow' });
    });
  });
}
