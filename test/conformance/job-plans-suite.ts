/**
 * Jobs of a plan on every store, through the limiter: a job records its plan (a deferring check's, or
 * `enqueue`'s `plan`, else `defaultPlan`), and the claim that starts it decides it under that plan's rules, so a
 * plan's tighter rule holds for its jobs too, and a group's plan-only rule state survives its jobs starting.
 * Injected clock; the queue is driven by hand (dispatch, claim), as a worker would.
 */
import type { Limiter, LimiterOptions } from '../../src/limiter/limiter';
import { ManualClock, maxInAnyWindow, slidingRule as sliding, useLimiters, type StoreHarness } from './store-suite';

const MOVE = { readyMax: 100, moveMax: 100, promoteMax: 100, scanMax: 100 };

export function describeJobPlanCases(name: string, setup: () => Promise<StoreHarness>): void {
  describe(`jobs of a plan: ${name}`, () => {
    const limiters = useLimiters(setup, 'job-plans');
    const limiter = (clock: ManualClock, options: Omit<LimiterOptions, 'store'>): Limiter => limiters(clock, options)[0]!;
    /** Dispatches and claims every few ms for `ms`: when each job started (store clock). */
    const drain = async (l: Limiter, clock: ManualClock, ms: number, stepMs = 20): Promise<Array<{ at: number; cost: number }>> => {
      const started: Array<{ at: number; cost: number }> = [];
      for (let t = 0; t < ms; t += stepMs) {
        await l.queue.dispatch(MOVE);
        for (const c of (await l.queue.claimMany(60_000, 100)).claimed) {
          started.push({ at: clock.ms, cost: 1 });
          await l.queue.complete(c.id, c.token, undefined, 0);
        }
        clock.advance(stepMs);
      }
      return started;
    };

    test("a deferred job of a plan whose rule is tighter than the limiter's starts no faster than that rule allows", async () => {
      const clock = new ManualClock();
      const l = limiter(clock, { limit: 1000, windowMs: 1000, tuning: { burst: 500 }, plans: { free: { rules: [sliding('second', 3)] } } });
      const live: Array<{ at: number; cost: number }> = [];
      let deferred = 0;
      for (let i = 0; i < 12; i++) {
        const d = await l.check('t', { plan: 'free', defer: { type: 'work' } });
        if (d.allowed) live.push({ at: clock.ms, cost: 1 });
        else if (d.job !== undefined) deferred += 1;
      }
      expect(live).toHaveLength(3);
      expect(deferred).toBe(9);
      const started = await drain(l, clock, 4000);
      // 9 jobs at 3 a second (the live three took the first second): all started within the 4 s, never faster
      expect(started).toHaveLength(9);
      expect(maxInAnyWindow([...live, ...started], 1000)).toBeLessThanOrEqual(3);
    });

    test("a job of a plan keeps the group's plan-only rule state: a live check after it starts sees what it spent", async () => {
      const clock = new ManualClock();
      const l = limiter(clock, {
        limit: 1000,
        windowMs: 1000,
        tuning: { burst: 500 },
        rules: [sliding('second', 100)],
        plans: { free: { rules: [sliding('minute', 6, 60_000)] } },
      });
      for (let i = 0; i < 2; i++) expect((await l.check('g', { plan: 'free' })).allowed).toBe(true);
      await l.enqueue('g', { type: 'work', plan: 'free' });
      expect(await drain(l, clock, 40)).toHaveLength(1);
      const d = await l.check('g', { plan: 'free' });
      expect(d.allowed).toBe(true);
      // two live checks, the job and this one: 6 − 4
      expect(d.rules!.find((r) => r.name === 'minute')!.remaining).toBe(2);
    });

    test('an enqueued job records its plan (or the defaultPlan), takes its weight and starts under its rules', async () => {
      const clock = new ManualClock();
      const l = limiter(clock, {
        limit: 1000,
        windowMs: 1000,
        tuning: { burst: 500 },
        plans: { free: { rules: [sliding('second', 2)] }, pro: { weight: 3 } },
        defaultPlan: 'pro',
      });
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push((await l.enqueue('f', { type: 'work', plan: 'free' })).id);
      const other = await l.enqueue('p', { type: 'work' });
      expect(await l.getJob(ids[0]!)).toMatchObject({ group: 'f', plan: 'free', state: 'delayed' });
      expect(await l.getJob(other.id)).toMatchObject({ group: 'p', plan: 'pro' });
      await l.queue.dispatch(MOVE);
      const first = await l.queue.claimMany(60_000, 100);
      // free's rule lets two of its five start now; pro (the default plan) has no rule of its own
      expect(first.claimed.map((c) => c.group).sort()).toEqual(['f', 'f', 'p']);
      clock.advance(1200); // past the window of the first two (a sliding window is strict)
      expect((await l.queue.claimMany(60_000, 100)).claimed.map((c) => c.group)).toEqual(['f', 'f']);
    });

    test('a plan name with spaces and a group that looks like a job member round-trip through the queue', async () => {
      const clock = new ManualClock();
      const l = limiter(clock, { limit: 1000, windowMs: 1000, tuning: { burst: 500 }, plans: { 'gold tier 2': { rules: [sliding('second', 1)] } } });
      const group = '7 1 1 0,3:abc g';
      const a = await l.enqueue(group, { type: 'work', plan: 'gold tier 2' });
      await l.enqueue(group, { type: 'work', plan: 'gold tier 2' });
      expect(await l.getJob(a.id)).toMatchObject({ group, plan: 'gold tier 2' });
      await l.queue.dispatch(MOVE);
      expect((await l.queue.claimMany(60_000, 100)).claimed.map((c) => [c.id, c.group])).toEqual([[a.id, group]]);
    });

    test('enqueue refuses a plan the limiter does not have (ConfigError ERR_BL_UNKNOWN_PLAN)', async () => {
      const clock = new ManualClock();
      const withPlans = limiter(clock, { limit: 10, windowMs: 1000, plans: { free: {} } });
      await expect(withPlans.enqueue('g', { type: 'work', plan: 'gold' })).rejects.toMatchObject({ code: 'ERR_BL_UNKNOWN_PLAN' });
      const without = limiter(clock, { limit: 10, windowMs: 1000 });
      await expect(without.enqueue('g', { type: 'work', plan: 'free' })).rejects.toMatchObject({ code: 'ERR_BL_UNKNOWN_PLAN' });
      expect(await withPlans.counts()).toMatchObject({ delayed: 0, pending: 0, ready: 0 });
    });
  });
}
