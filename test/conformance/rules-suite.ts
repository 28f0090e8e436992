/**
 * Rules (per-group caps decided with the fair share, all-or-nothing) on every store: caps never exceeded in
 * any window, a denial by one policy spends in none, the policy that said no is named, rule state outlives
 * idle trimming. Same harness as store-suite.ts; all timing on the injected clock.
 */
import type { Rule } from '../../src/limiter/rule-options';
import { resolveRules } from '../../src/limiter/rule-options';
import type { AdmitInput, Decision, LimiterSpec, LimiterStore } from '../../src/types';
import { ManualClock, maxInAnyWindow, seededRandom, spec, useHarness, type StoreHarness } from './store-suite';

const input = (group: string, cost = 1): AdmitInput => ({ group, weight: 1, cost });
/** A global limit far above the rules: only the rules bind. */
const roomy = (rules: Rule[], over: Partial<LimiterSpec> = {}): LimiterSpec =>
  spec({ limit: 100_000, windowMs: 1000, burst: 5000, reserve: 1, idleMs: 2000, rules: resolveRules(rules), ...over });

const random = seededRandom;

const ruleOf = (d: Decision, name: string) => d.rules!.find((r) => r.name === name)!;

export function describeRuleCases(name: string, setup: () => Promise<StoreHarness>): void {
  describe(`rules: ${name}`, () => {
    const bind = useHarness(setup);

    /** Bursty random traffic of two groups from several handles; the admitted (at, cost) per group. */
    async function flood(stores: LimiterStore[], clock: ManualClock, ticks: number, seed: number, cost = 1) {
      const rnd = random(seed);
      const log: Record<string, Array<{ at: number; cost: number }>> = { a: [], b: [] };
      let k = 0;
      for (let t = 0; t < ticks; t++) {
        const calls: Array<Promise<Decision>> = [];
        for (const g of ['a', 'b']) {
          const n = Math.floor(rnd() * 4);
          for (let i = 0; i < n; i++) calls.push(stores[k++ % stores.length]!.admit(input(g, cost)));
        }
        for (const d of await Promise.all(calls)) if (d.allowed) log[d.group]!.push({ at: d.at, cost });
        clock.advance(1 + Math.floor(rnd() * 40));
      }
      return log;
    }

    test.each(['token-bucket', 'sliding-window'] as const)('a %s rule is never exceeded in any window, from several handles', async (algorithm) => {
      const clock = new ManualClock();
      const stores = bind(clock, roomy([{ name: 'r', limit: 20, windowMs: 1000, algorithm }]), 3);
      const log = await flood(stores, clock, 800, 7);
      for (const g of ['a', 'b']) {
        expect(maxInAnyWindow(log[g]!, 1000)).toBeLessThanOrEqual(20);
        // ~8 s of traffic well above the cap: the rule is used, not idle
        expect(log[g]!.length).toBeGreaterThan(algorithm === 'token-bucket' ? 8 * 19 * 0.8 : 8 * 20 * 0.8);
      }
    });

    test('a fixed-window rule holds per aligned window, cost > 1 included', async () => {
      const clock = new ManualClock();
      const stores = bind(clock, roomy([{ name: 'f', limit: 30, windowMs: 1000, algorithm: 'fixed-window' }]), 2);
      const log = await flood(stores, clock, 800, 11, 2);
      for (const g of ['a', 'b']) {
        const perWindow = new Map<number, number>();
        for (const e of log[g]!) perWindow.set(Math.floor(e.at / 1000), (perWindow.get(Math.floor(e.at / 1000)) ?? 0) + e.cost);
        expect(Math.max(...perWindow.values())).toBe(30);
      }
    });

    test('a sliding-window rule of N admits N back-to-back, then denies until the window has passed', async () => {
      const clock = new ManualClock();
      const [s] = bind(clock, roomy([{ name: 'ten', limit: 10, windowMs: 1000, algorithm: 'sliding-window' }]));
      const first = await Promise.all(Array.from({ length: 12 }, () => s!.admit(input('a'))));
      expect(first.map((d) => d.allowed)).toEqual([...Array(10).fill(true), false, false]);
      const denied = first[10]!;
      expect(denied.policy).toBe('ten');
      // strict side: free again after the window and at most one sub-window (100 ms) more
      expect(denied.retryAfterMs).toBeGreaterThanOrEqual(1000);
      expect(denied.retryAfterMs).toBeLessThanOrEqual(1100);
      clock.advance(denied.retryAfterMs - 1);
      expect((await s!.admit(input('a'))).allowed).toBe(false);
      clock.advance(1);
      const again = await Promise.all(Array.from({ length: 11 }, () => s!.admit(input('a'))));
      expect(again.filter((d) => d.allowed)).toHaveLength(10);
    });

    test('a request one rule denies spends nothing in the other rules or the global bucket', async () => {
      const clock = new ManualClock();
      const [s] = bind(
        clock,
        spec({
          limit: 100,
          windowMs: 1000,
          burst: 40,
          reserve: 1,
          rules: resolveRules([
            { name: 'small', limit: 3, windowMs: 1000, algorithm: 'sliding-window' },
            { name: 'big', limit: 50, windowMs: 60_000, algorithm: 'fixed-window' },
          ]),
        }),
      );
      let last: Decision | undefined;
      for (let i = 0; i < 3; i++) last = await s!.admit(input('a'));
      expect(last!.allowed).toBe(true);
      for (let i = 0; i < 5; i++) {
        const d = await s!.admit(input('a'));
        expect(d).toMatchObject({ allowed: false, policy: 'small', remaining: last!.remaining });
        expect(ruleOf(d, 'big').remaining).toBe(47);
      }
      // the global bucket is as it was: another group gets exactly what was left
      let other = 0;
      for (let i = 0; i < 100; i++) if ((await s!.admit(input(`o${i % 20}`))).allowed) other += 1;
      expect(other).toBe(40 - 3);
    });

    test('a request the global share denies spends nothing in the rules', async () => {
      const clock = new ManualClock();
      const [s] = bind(
        clock,
        spec({
          limit: 10,
          windowMs: 1000,
          burst: 5,
          reserve: 1,
          rules: resolveRules([{ name: 'hour', limit: 100, windowMs: 3_600_000, algorithm: 'sliding-window' }]),
        }),
      );
      const ds: Decision[] = [];
      for (let i = 0; i < 20; i++) ds.push(await s!.admit(input('a')));
      const allowed = ds.filter((d) => d.allowed).length;
      const denied = ds.filter((d) => !d.allowed);
      expect(denied.length).toBeGreaterThan(0);
      for (const d of denied) {
        expect(d.policy).toBe('global');
        expect(ruleOf(d, 'hour').remaining).toBe(100 - allowed);
      }
    });

    test('the retry time is the latest of the violated policies, and names the one that waits longest', async () => {
      const clock = new ManualClock();
      clock.ms = Math.ceil(clock.ms / 60_000) * 60_000 + 1000; // 1 s into an aligned minute
      const [s] = bind(
        clock,
        roomy([
          { name: 'second', limit: 2, windowMs: 1000, algorithm: 'fixed-window' },
          { name: 'minute', limit: 3, windowMs: 60_000, algorithm: 'fixed-window' },
        ]),
      );
      expect((await s!.admit(input('a'))).allowed).toBe(true);
      expect((await s!.admit(input('a'))).allowed).toBe(true);
      expect(await s!.admit(input('a'))).toMatchObject({ allowed: false, policy: 'second', retryAfterMs: 1000 });
      clock.advance(1000);
      expect((await s!.admit(input('a'))).allowed).toBe(true);
      // the second has room, the minute does not; with cost 2 both say no and the minute waits longer
      expect(await s!.admit(input('a'))).toMatchObject({ allowed: false, policy: 'minute', retryAfterMs: 58_000 });
      expect(await s!.admit(input('a', 2))).toMatchObject({ allowed: false, policy: 'minute' });
    });

    test('a rule longer than idleMs keeps the group through idle trimming (no over-admission)', async () => {
      const clock = new ManualClock();
      const [s] = bind(clock, roomy([{ name: 'min', limit: 5, windowMs: 60_000, algorithm: 'sliding-window' }], { idleMs: 1000 }));
      for (let i = 0; i < 5; i++) expect((await s!.admit(input('a'))).allowed).toBe(true);
      // other groups keep the limiter busy, so idle trimming runs while 'a' is away
      for (let t = 0; t < 30; t++) {
        clock.advance(1000);
        await s!.admit(input(`busy${t}`));
      }
      const d = await s!.admit(input('a'));
      expect(d).toMatchObject({ allowed: false, policy: 'min' });
      clock.advance(d.retryAfterMs);
      expect((await s!.admit(input('a'))).allowed).toBe(true);
    });

    test('jobs started by workers respect the rules (the claim goes through the same core), and wake when the rule frees', async () => {
      const clock = new ManualClock();
      clock.ms = Math.ceil(clock.ms / 1000) * 1000 + 200; // 200 ms into an aligned second
      const [s] = bind(clock, roomy([{ name: 'three', limit: 3, windowMs: 1000, algorithm: 'fixed-window' }]));
      const job = { weight: 1, cost: 1, type: 't', payload: '{}', maxBacklog: 100, delayMs: 0, maxDeferMs: 1e9 };
      for (let i = 0; i < 8; i++) await s!.queue.enqueue({ ...job, group: 'a' });
      for (let i = 0; i < 2; i++) await s!.queue.enqueue({ ...job, group: 'b' });
      expect((await s!.admit(input('a'))).allowed).toBe(true); // a live request takes one of a's three
      await s!.queue.dispatch({ readyMax: 100, moveMax: 100, promoteMax: 100, scanMax: 100 });
      const first = await s!.queue.claimMany(60_000, 100);
      const groups = (r: typeof first) =>
        r.claimed
          .map((c) => c.group)
          .sort()
          .join('');
      expect(groups(first)).toBe('aabb');
      // a's rule is full until the window ends: nothing more starts, and workers sleep until then
      expect(first.wakeMs).toBe(800);
      expect((await s!.queue.claimMany(60_000, 100)).claimed).toHaveLength(0);
      clock.advance(800);
      expect(groups(await s!.queue.claimMany(60_000, 100))).toBe('aaa');
    });

    test("allowed decisions carry each rule's state", async () => {
      const clock = new ManualClock();
      const [s] = bind(
        clock,
        roomy([
          { name: 'tb', limit: 100, windowMs: 1000 },
          { name: 'fw', limit: 7, windowMs: 1000, algorithm: 'fixed-window' },
        ]),
      );
      const d = await s!.admit(input('a', 2));
      expect(d.allowed).toBe(true);
      expect(d.policy).toBeUndefined();
      expect(d.rules).toEqual([
        { name: 'tb', limit: 100, windowMs: 1000, remaining: 3, resetMs: 21 },
        { name: 'fw', limit: 7, windowMs: 1000, remaining: 5, resetMs: 1000 - (clock.ms % 1000) },
      ]);
    });

    test('a fast token-bucket rule stays strict at the clock values stores really see (µs since 1970: fractions of a µs are rounded there)', async () => {
      const clock = new ManualClock();
      // 10,000 per ms: a unit every ~0.105 µs, below what a double resolves at ~1.7e15 µs; its burst is 500
      const [s] = bind(clock, roomy([{ name: 'fast', limit: 10_000, windowMs: 1 }]));
      let admitted = 0;
      for (let i = 0; i < 600; i++) if ((await s!.admit(input('a'))).allowed) admitted += 1;
      expect(admitted).toBe(500);
    });

    test("a sliding window's reset is when its newest sub-window holding units leaves, also from an empty newest one", async () => {
      const clock = new ManualClock();
      // on a whole second: sub-windows of 100 ms start here, and the fixed window too
      clock.advance(1000 - (clock.ms % 1000));
      const [s] = bind(
        clock,
        roomy([
          { name: 'sw', limit: 10, windowMs: 1000, algorithm: 'sliding-window' },
          { name: 'fw', limit: 3, windowMs: 1000, algorithm: 'fixed-window' },
        ]),
      );
      expect((await s!.admit(input('a', 3))).allowed).toBe(true);
      // two sub-windows later nothing was spent in the newest: the units of the first leave at 1,100 ms
      clock.advance(250);
      const d = await s!.admit(input('a'));
      expect(d).toMatchObject({ allowed: false, policy: 'fw', retryAfterMs: 750 });
      expect(d.rules).toEqual([
        { name: 'sw', limit: 10, windowMs: 1000, remaining: 7, resetMs: 850 },
        { name: 'fw', limit: 3, windowMs: 1000, remaining: 0, resetMs: 750 },
      ]);
    });
  });
}
