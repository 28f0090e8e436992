/**
 * Fair when demand is bursty and identities are cheap (docs/algorithm.md §2.4, §2.9): a tenant whose arrivals run
 * near its share keeps its demand next to backlogged borrowers (the within-share meter's priority inside the
 * reserve), the graduation budget bounds how many new ids register, a flood of new ids that come back leaves the
 * established tenants their demand, and a costly request that fits beside the configured reserve still passes as
 * yellow. The global bound holds throughout. Same harness as store-suite.ts; all timing on the injected clock,
 * arrivals seeded.
 */
import type { LimiterSpec, LimiterStore } from '../../src/types';
import { ManualClock, maxInAnyWindow, pastColdStart, seededRandom, spec, useHarness, useLimiters, type StoreHarness } from './store-suite';

interface Source {
  readonly group: string;
  readonly weight: number;
  /** the class it is decided in (absent: 'default') */
  readonly cls?: string;
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

/**
 * Plays every source's arrivals in time order; per group, demand and admitted from `fromMs` on. `tickMs`: a client's
 * event-loop turn, every arrival decided at the next multiple of it (all of a turn at one store time, in due order).
 */
async function play(st: LimiterStore, clock: ManualClock, sources: Source[], fromMs: number, tickMs = 0) {
  const at = (t: number) => (tickMs > 0 ? Math.ceil(t / tickMs) * tickMs : t);
  const arrivals = sources.flatMap((s) => s.times.map((t) => ({ t: at(t), s })));
  arrivals.sort((a, b) => a.t - b.t);
  const start = clock.ms;
  const demand = new Map<string, number>();
  const admitted = new Map<string, number>();
  const log: Array<{ at: number; cost: number }> = [];
  let activeMax = 0;
  for (const { t, s } of arrivals) {
    clock.ms = start + t;
    const d = await st.admit(
      s.cls === undefined ? { group: s.group, weight: s.weight, cost: 1 } : { group: s.group, weight: s.weight, cost: 1, class: s.cls },
    );
    if (d.allowed) log.push({ at: d.at, cost: 1 });
    if (d.activeGroups > activeMax) activeMax = d.activeGroups;
    if (t < fromMs) continue;
    demand.set(s.group, (demand.get(s.group) ?? 0) + 1);
    if (d.allowed) admitted.set(s.group, (admitted.get(s.group) ?? 0) + 1);
  }
  const ratio = (g: string) => (admitted.get(g) ?? 0) / demand.get(g)!;
  return { log, ratio, demand: (g: string) => demand.get(g) ?? 0, activeMax };
}

export function describeBurstyCases(name: string, setup: () => Promise<StoreHarness>): void {
  describe(`bursty demand and cheap identities: ${name}`, () => {
    const bindAll = useHarness(setup);
    const bind = (clock: ManualClock, s: LimiterSpec): LimiterStore => bindAll(clock, s)[0]!;
    const limiters = useLimiters(setup, 'bursty');

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

    test('tenants at their share in bunches of 5 keep ≥ 97 % of their demand next to backlogged borrowers (bench s9)', async () => {
      // limit 1000, burst 50, reserve 10: 2 borrowers at 1500/s; 10 tenants at 30/s in bunches of 5 requests at once
      // and 10 at 12/s in bunches of 3 (every other at weight 2); Σw = 27, 951/27 ≈ 35.2/s per weight. A bunched
      // tenant near its share leaves its within-share meter's top quarter now and then, and a bunch empties its small
      // demand meter: it is still below the water level (the borrowers sit at 270/s) and must come before borrowers
      // lagging behind their caps. Arrivals decided in 1 ms turns, as a client's event loop sends them.
      const clock = new ManualClock();
      const s = spec({ limit: 1000, windowMs: 1000, burst: 50, reserve: 10, idleMs: 10_000, epochMs: 250, probationMs: 250 });
      const st = bind(clock, s);
      const next = seededRandom(1);
      const sources: Source[] = [];
      for (let i = 0; i < 2; i++) sources.push({ group: `borrower-${i}`, weight: 1, times: poisson(next, 1500, 0, 16_000) });
      for (let i = 0; i < 10; i++) sources.push({ group: `bunch5-${i}`, weight: 1, times: poisson(next, 30, 0, 16_000, 5) });
      for (let i = 0; i < 10; i++) sources.push({ group: `bunch3-${i}`, weight: i % 2 ? 2 : 1, times: poisson(next, 12, 0, 16_000, 3) });
      const r = await play(st, clock, sources, 1000, 1);
      for (let i = 0; i < 10; i++) {
        // the under-share tenants: demand at most the weighted share over the 15 s counted
        if (r.demand(`bunch5-${i}`) <= 35.2 * 15) expect(r.ratio(`bunch5-${i}`)).toBeGreaterThanOrEqual(0.97);
        expect(r.ratio(`bunch3-${i}`)).toBeGreaterThanOrEqual(0.97);
      }
      expect(maxInAnyWindow(r.log, s.windowMs)).toBeLessThanOrEqual(s.limit);
    });

    test('100 tenants starting at once: those below their share lose almost nothing while borrowers spend their start credit (bench s8)', async () => {
      // limit 1000, burst 50, reserve 10: 100 Zipf tenants, 3000/s in all, every 10th at weight 3 (Σw = 120: 951/120
      // ≈ 7.9/s per weight), all new at once. Every new group's within-share meter starts full, so for the first seconds
      // the borrowers' green, like the light tenants', counted as within its share; the borrowers furthest above their
      // shares drain their meters first and give way to the tenants below theirs. Arrivals decided in 1 ms turns.
      const clock = new ManualClock();
      const s = spec({ limit: 1000, windowMs: 1000, burst: 50, reserve: 10, idleMs: 10_000, epochMs: 250, probationMs: 250 });
      const st = bind(clock, s);
      const next = seededRandom(11);
      const h = Array.from({ length: 100 }, (_, i) => 1 / (i + 1)).reduce((a, b) => a + b, 0);
      const sources: Source[] = [];
      const under: string[] = [];
      for (let i = 0; i < 100; i++) {
        const weight = i % 10 === 9 ? 3 : 1;
        const rate = 3000 / (i + 1) / h;
        sources.push({ group: `z-${i}`, weight, times: poisson(next, rate, 0, 4000) });
        if (rate <= (951 * weight) / 120) under.push(`z-${i}`);
      }
      const r = await play(st, clock, sources, 1000, 1);
      const lost = under.reduce((sum, g) => sum + r.demand(g) - Math.round(r.ratio(g) * r.demand(g)), 0);
      // over 3 s, of about 800 requests of the 35 tenants below their shares
      expect(lost).toBeLessThanOrEqual(3);
      expect(maxInAnyWindow(r.log, s.windowMs)).toBeLessThanOrEqual(s.limit);
    });

    test('a class below its share: each of its tenants keeps ≥ 98 % of its demand next to a flood in another class (bench c1)', async () => {
      // limit 1000, burst 50, reserve 10, a class 'critical' of share 0.2 (190/s): 6 tenants at 25/s, Poisson, next to
      // 50 groups of weight 10 at 100/s each in 'default'. The critical tenants sit far above the limiter's water level
      // (Σw = 506: 1.9/s per weight), but their class runs below its share: that is below the water level too.
      const clock = new ManualClock();
      const classes = new Map([
        ['critical', 0.2],
        ['default', 0.8],
      ]);
      const s = spec({ limit: 1000, windowMs: 1000, burst: 50, reserve: 10, idleMs: 10_000, epochMs: 250, probationMs: 250, classes });
      const st = bind(clock, s);
      const next = seededRandom(5);
      const sources: Source[] = [];
      for (let i = 0; i < 6; i++) sources.push({ group: `critical-${i}`, weight: 1, cls: 'critical', times: poisson(next, 25, 0, 6000) });
      for (let i = 0; i < 50; i++) sources.push({ group: `flood-${i}`, weight: 10, times: poisson(next, 100, 0, 6000) });
      const r = await play(st, clock, sources, 1000);
      for (let i = 0; i < 6; i++) expect(r.ratio(`critical-${i}`)).toBeGreaterThanOrEqual(0.98);
      expect(maxInAnyWindow(r.log, s.windowMs)).toBeLessThanOrEqual(s.limit);
    });

    test('a paying tenant next to a flooder at limit 100 gets ≥ 95 % of its max-min share, the flooder ≤ 110 % (bench s10)', async () => {
      // limit 100, burst 8, reserve 2 (strict capacity 93/s): a flooder at 200/s, a paying tenant of weight 3 at 60/s
      // and 6 light tenants at 5/s, Poisson. Max-min: the light tenants their demand, the rest 1 : 3. The paying
      // tenant arrives a little above its cap, at random moments; the flooder is there whenever the bucket refills.
      // Held to the flooder's floors, the paying tenant got ~0.94 of its share: a borrower whose arrivals run under
      // twice its cap borrows a step lower (its flood meter, docs/algorithm.md §2.4).
      const clock = new ManualClock();
      const s = spec({ limit: 100, windowMs: 1000, burst: 8, reserve: 2, idleMs: 10_000, epochMs: 250, probationMs: 250 });
      const st = bind(clock, s);
      const next = seededRandom(10);
      const sources: Source[] = [
        { group: 'flooder', weight: 1, times: poisson(next, 200, 0, 22_000) },
        { group: 'paying', weight: 3, times: poisson(next, 60, 0, 22_000) },
      ];
      for (let i = 0; i < 6; i++) sources.push({ group: `light-${i}`, weight: 1, times: poisson(next, 5, 0, 22_000) });
      const r = await play(st, clock, sources, 2000);
      const admitted = (g: string) => r.ratio(g) * r.demand(g);
      let rest = 93 * 20;
      for (let i = 0; i < 6; i++) {
        expect(r.ratio(`light-${i}`)).toBeGreaterThanOrEqual(0.97);
        rest -= r.demand(`light-${i}`);
      }
      // both are backlogged at the split (the paying tenant's demand is above 3/4 of the rest)
      expect(r.demand('paying')).toBeGreaterThan((rest * 3) / 4);
      expect(admitted('paying') / ((rest * 3) / 4)).toBeGreaterThanOrEqual(0.95);
      expect(admitted('flooder') / (rest / 4)).toBeLessThanOrEqual(1.1);
      expect(maxInAnyWindow(r.log, s.windowMs)).toBeLessThanOrEqual(s.limit);
    });

    test('cold start: a dispatcher polling before the first request does not start the first epoch', async () => {
      // A service starts its dispatcher, which polls the limiter's state, before traffic arrives: the first epoch
      // (new ids registered at once) is the first request's, not the first poll's (docs/algorithm.md §2.9)
      const clock = new ManualClock();
      const [l] = limiters(clock, { limit: 100, windowMs: 1000, tuning: { epochMs: 250, probationMs: 500 } });
      for (let t = 0; t < 2000; t += 100) {
        await l!.queue.dispatch({ readyMax: 10, moveMax: 10, promoteMax: 10, scanMax: 10 });
        clock.advance(100);
      }
      expect((await l!.check('a')).activeGroups).toBe(1);
      clock.advance(100);
      expect((await l!.check('b')).activeGroups).toBe(2);
      expect((await l!.check('c', { weight: 3 })).guaranteed).toBe(60); // registered: 3 of Σw 5
      clock.advance(150);
      // the first epoch is over (250 ms after a's request): d waits on probation in '*new*'
      expect((await l!.check('d')).activeGroups).toBe(4);
      expect((await l!.check('e')).activeGroups).toBe(4);
    });

    test('the graduation budget: 100 new ids register at once, then 10 per second; the others stay on probation and keep their sighting', async () => {
      const clock = new ManualClock();
      const s = spec({ limit: 100_000, windowMs: 1000, burst: 5000, reserve: 1, idleMs: 600_000, probationMs: 100, maxGroups: 10_000 });
      const st = bind(clock, s);
      await pastColdStart(st, clock, s);
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
      const s = spec({ limit: 100, windowMs: 1000, burst: 20, reserve: 4, probationMs: 0 });
      const st = bind(clock, s);
      // past the first epoch, whose level is the guarantees' (a's cap would be a quarter of the limit)
      await pastColdStart(st, clock, s);
      for (const g of ['b', 'c', 'd']) await st.admit({ group: g, weight: 1, cost: 1 });
      expect((await st.admit({ group: 'a', weight: 1, cost: 16 })).colour).toBe('green');
      // the bucket refills to 20; a's guaranteed meter (a quarter of the rate) holds fewer than 16 units again
      clock.advance(300);
      const d = await st.admit({ group: 'a', weight: 1, cost: 16 });
      expect(d).toMatchObject({ allowed: true, colour: 'yellow' });
    });
  });
}
