/**
 * Plans on every store, through the limiter (a plan's weight is resolved there, its rules in the store): weights
 * share in their ratio, a plan's rules merge with the limiter's by name, a group moving between plans keeps the
 * state of the rules both plans share, caps hold with checks of several plans in one turn from several
 * handles, and a plan's rule state outlives a silence whatever plan the last check had. Injected clock.
 */
import type { Decision } from '../../src/types';
import { ManualClock, maxInAnyWindow, seededRandom, slidingRule as sliding, useLimiters, type StoreHarness } from './store-suite';

export function describePlanCases(name: string, setup: () => Promise<StoreHarness>): void {
  describe(`plans: ${name}`, () => {
    /** `handles` limiters of one name on the clock (several processes on one Redis). */
    const limiters = useLimiters(setup, 'plans');

    test('two plans share the global limit in the ratio of their weights', async () => {
      const clock = new ManualClock();
      const [l] = limiters(clock, { limit: 100, windowMs: 1000, plans: { free: { weight: 1 }, pro: { weight: 3 } } });
      const admitted = { free: 0, pro: 0 };
      for (let t = 0; t < 400; t++) {
        const calls: Array<Promise<[string, Decision]>> = [];
        for (const plan of ['free', 'pro'] as const) {
          for (let i = 0; i < 3; i++) calls.push(l!.check(`${plan}-tenant`, { plan }).then((d) => [plan, d]));
        }
        for (const [plan, d] of await Promise.all(calls)) if (d.allowed && t >= 100) admitted[plan as 'free' | 'pro'] += 1;
        clock.advance(10);
      }
      // 3 s of both saturated: 300 units, 1 : 3
      expect(admitted.free + admitted.pro).toBeGreaterThan(270);
      expect(admitted.pro / admitted.free).toBeGreaterThan(2.5);
      expect(admitted.pro / admitted.free).toBeLessThan(3.5);
    });

    test("a plan's rule replaces the limiter's rule of its name, and another plan rule extends them", async () => {
      const clock = new ManualClock();
      const [l] = limiters(clock, {
        limit: 10_000,
        windowMs: 1000,
        tuning: { burst: 1000 },
        rules: [sliding('second', 5)],
        plans: { pro: { rules: [sliding('second', 10), sliding('minute', 15, 60_000)] } },
      });
      const own = await Promise.all(Array.from({ length: 7 }, () => l!.check('basic')));
      expect(own.map((d) => d.allowed)).toEqual([true, true, true, true, true, false, false]);
      expect(own[5]!.policy).toBe('second');
      expect(own[0]!.rules!.map((r) => [r.name, r.limit])).toEqual([['second', 5]]);

      const pro = await Promise.all(Array.from({ length: 12 }, () => l!.check('big', { plan: 'pro' })));
      expect(pro.filter((d) => d.allowed)).toHaveLength(10);
      expect(pro[11]!.policy).toBe('second');
      expect(pro[0]!.rules!.map((r) => [r.name, r.limit, r.remaining])).toEqual([
        ['second', 10, 9],
        ['minute', 15, 14],
      ]);
      clock.advance(1200);
      const later = await Promise.all(Array.from({ length: 7 }, () => l!.check('big', { plan: 'pro' })));
      // the added rule binds now: 10 + 5 = 15 in the minute
      expect(later.filter((d) => d.allowed)).toHaveLength(5);
      expect(later[6]!.policy).toBe('minute');
    });

    test("a peek under a plan reads that plan's rules and weight, and a peek without one the defaultPlan's", async () => {
      const clock = new ManualClock();
      const [l] = limiters(clock, {
        limit: 10_000,
        windowMs: 1000,
        tuning: { burst: 1000 },
        rules: [sliding('second', 5)],
        plans: { free: { weight: 1 }, pro: { weight: 4, rules: [sliding('second', 10), sliding('minute', 15, 60_000)] } },
        defaultPlan: 'free',
      });
      await Promise.all(Array.from({ length: 3 }, () => l!.check('g', { plan: 'pro' })));
      const pro = await l!.peek('g', { plan: 'pro' });
      expect(pro.rules!.map((r) => [r.name, r.limit, r.remaining])).toEqual([
        ['second', 10, 7],
        ['minute', 15, 12],
      ]);
      // the same group read under the default plan: its rule of the same name, algorithm and window is shared
      const free = await l!.peek('g');
      expect(free.rules!.map((r) => [r.name, r.limit, r.remaining])).toEqual([['second', 5, 2]]);
      // and the peek agrees with the check that follows under the same plan
      expect((await l!.check('g', { plan: 'pro' })).remaining).toBe(pro.remaining - 1);
      await expect(l!.peek('g', { plan: 'gold' })).rejects.toMatchObject({ code: 'ERR_BL_UNKNOWN_PLAN' });
    });

    test("each plan's concurrency caps its groups' requests in flight (Free 1, Pro 3, Enterprise 5), from several handles", async () => {
      const clock = new ManualClock();
      const handles = limiters(
        clock,
        {
          limit: 10_000,
          windowMs: 1000,
          tuning: { burst: 1000 },
          plans: { free: { concurrency: 1 }, pro: { weight: 3, concurrency: 3 }, enterprise: { weight: 5, concurrency: 5 } },
        },
        3,
      );
      const caps = { free: 1, pro: 3, enterprise: 5 } as const;
      const rnd = seededRandom(7);
      const held = new Map<string, Decision[]>();
      for (let step = 0; step < 60; step++) {
        const calls: Array<Promise<[string, Decision]>> = [];
        for (const plan of Object.keys(caps) as Array<keyof typeof caps>) {
          for (let i = 0; i < 6; i++) {
            const l = handles[Math.floor(rnd() * handles.length)]!;
            calls.push(l.check(`${plan}-tenant`, { plan }).then((d) => [plan, d]));
          }
        }
        for (const [plan, d] of await Promise.all(calls)) {
          if (d.allowed) held.set(plan, [...(held.get(plan) ?? []), d]);
          else expect(d.policy).toBe('concurrency');
        }
        for (const plan of Object.keys(caps) as Array<keyof typeof caps>) {
          const mine = held.get(plan) ?? [];
          expect(mine.length).toBeLessThanOrEqual(caps[plan]);
          // the first step fills every plan to its cap exactly
          if (step === 0) expect(mine.length).toBe(caps[plan]);
          // some requests finish: their slots come back
          const done = mine.filter(() => rnd() < 0.5);
          await Promise.all(done.map((d) => handles[0]!.release(d)));
          held.set(
            plan,
            mine.filter((d) => !done.includes(d)),
          );
        }
        clock.advance(5);
      }
    });

    test('a group moving between plans keeps the state of a rule both plans have', async () => {
      const clock = new ManualClock();
      const [l] = limiters(clock, {
        limit: 10_000,
        windowMs: 1000,
        tuning: { burst: 1000 },
        plans: { free: { rules: [sliding('second', 4)] }, pro: { rules: [sliding('second', 10)] } },
        defaultPlan: 'free',
      });
      const free = await Promise.all(Array.from({ length: 5 }, () => l!.check('g')));
      expect(free.map((d) => d.allowed)).toEqual([true, true, true, true, false]);
      // upgraded within the second: the 4 already spent count against pro's 10
      const pro = await Promise.all(Array.from({ length: 8 }, () => l!.check('g', { plan: 'pro' })));
      expect(pro.filter((d) => d.allowed)).toHaveLength(6);
      expect(pro[7]!.rules).toEqual([expect.objectContaining({ name: 'second', limit: 10, remaining: 0 })]);
      // back on free: 10 spent, over its 4
      const back = await l!.check('g', { plan: 'free' });
      expect(back).toMatchObject({ allowed: false, policy: 'second' });
      // checks of both plans in one turn are each decided under their own plan
      clock.advance(1200);
      const mixed = await Promise.all([
        ...Array.from({ length: 3 }, () => l!.check('h', { plan: 'free' })),
        ...Array.from({ length: 3 }, () => l!.check('k', { plan: 'pro' })),
        ...Array.from({ length: 3 }, () => l!.check('h', { plan: 'free' })),
      ]);
      expect(mixed.map((d) => d.allowed)).toEqual([true, true, true, true, true, true, true, false, false]);
      expect(mixed.map((d) => d.rules![0]!.limit)).toEqual([4, 4, 4, 10, 10, 10, 4, 4, 4]);
    });

    test("each plan's caps hold in every window, with checks of several plans in one turn from several handles", async () => {
      const clock = new ManualClock();
      const handles = limiters(
        clock,
        {
          limit: 100_000,
          windowMs: 1000,
          tuning: { burst: 5000 },
          rules: [sliding('second', 8)],
          plans: { free: { rules: [sliding('second', 5)] }, pro: { weight: 2, rules: [sliding('second', 12)] }, same: { weight: 4 } },
        },
        3,
      );
      const caps: Record<string, number> = { free: 5, pro: 12, same: 8, none: 8 };
      const log: Record<string, Array<{ at: number; cost: number }>> = { free: [], pro: [], same: [], none: [] };
      const rnd = seededRandom(17);
      let k = 0;
      for (let t = 0; t < 600; t++) {
        const calls: Array<Promise<[string, Decision]>> = [];
        for (const plan of Object.keys(caps)) {
          const n = Math.floor(rnd() * 4);
          for (let i = 0; i < n; i++) {
            const l = handles[k++ % handles.length]!;
            calls.push(l.check(`t-${plan}`, plan === 'none' ? {} : { plan }).then((d) => [plan, d]));
          }
        }
        for (const [plan, d] of await Promise.all(calls)) if (d.allowed) log[plan]!.push({ at: d.at, cost: 1 });
        clock.advance(1 + Math.floor(rnd() * 40));
      }
      for (const plan of Object.keys(caps)) {
        expect(maxInAnyWindow(log[plan]!, 1000)).toBeLessThanOrEqual(caps[plan]!);
        // ~12 s of traffic above every cap: the caps bind
        expect(log[plan]!.length).toBeGreaterThan(12 * caps[plan]! * 0.7);
      }
    });

    test("a plan's rule state outlives a silence after a check of a plan without that rule", async () => {
      const clock = new ManualClock();
      const [l] = limiters(clock, {
        limit: 1000,
        windowMs: 1000,
        tuning: { idleMs: 2000 },
        plans: { free: { weight: 1 }, pro: { rules: [sliding('hour', 3, 3_600_000)] } },
      });
      for (let i = 0; i < 3; i++) expect((await l!.check('p', { plan: 'pro' })).allowed).toBe(true);
      expect((await l!.check('p', { plan: 'pro' })).policy).toBe('hour');
      clock.advance(1000);
      expect((await l!.check('newcomer', { plan: 'free' })).allowed).toBe(true);
      // far past idleMs + windowMs + epochMs, well within the hour
      clock.advance(10 * 60_000);
      expect(await l!.check('p', { plan: 'pro' })).toMatchObject({ allowed: false, policy: 'hour' });
    });
  });
}
