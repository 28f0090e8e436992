/**
 * Priority classes on every store, through the limiter (docs/algorithm.md §2.11): a class keeps its guaranteed
 * share under a flood in another class (where without classes the flood's many groups take most of it), an idle
 * class lends its share, the global limit holds in every window, and a decision says its class. Injected clock.
 */
import type { Decision } from '../../src/types';
import { ManualClock, maxInAnyWindow, seededRandom, useLimiters, type StoreHarness } from './store-suite';

/** Exponential gaps of a Poisson process of `perS` arrivals a second, from `random`. */
const gapMs = (random: () => number, perS: number): number => (-Math.log(1 - random()) / perS) * 1000;

interface Traffic {
  /** Critical tenants' demand and admissions, counted after the warm-up. */
  demand: number;
  admitted: number;
  /** Per critical tenant: [demand, admitted] after the warm-up. */
  tenants: Map<string, [number, number]>;
  /** The flood's admissions after the warm-up. */
  flood: number;
  /** Every admission (the strict bound). */
  all: Array<{ at: number; cost: number }>;
}

/**
 * `seconds` of traffic at limit 1000/s: `critical` tenants of `criticalPerS` Poisson demand in all (in the class
 * `criticalClass`, or none; weight 1), next to `floodGroups` groups of weight 10 sending `floodPerS` in all (no
 * class: 'default'),
 * every 5 ms; counted after the first second.
 */
async function run(
  check: (group: string, cls: string | undefined, weight: number) => Promise<Decision>,
  clock: ManualClock,
  o: { seconds: number; critical: number; criticalPerS: number; criticalClass: string | undefined; floodGroups: number; floodPerS: number },
): Promise<Traffic> {
  const random = seededRandom(22);
  const stepMs = 5;
  const t: Traffic = { demand: 0, admitted: 0, tenants: new Map(), flood: 0, all: [] };
  const next = Array.from({ length: o.critical }, () => gapMs(random, o.criticalPerS / o.critical));
  const floodPerStep = (o.floodPerS * stepMs) / 1000;
  for (let now = 0; now < o.seconds * 1000; now += stepMs) {
    const counted = now >= 1000;
    const calls: Array<Promise<void>> = [];
    for (let i = 0; i < o.critical; i++) {
      while (next[i]! < now + stepMs) {
        next[i] = next[i]! + gapMs(random, o.criticalPerS / o.critical);
        const tenant = `tenant-${i}`;
        calls.push(
          check(tenant, o.criticalClass, 1).then((d) => {
            if (d.allowed) t.all.push({ at: d.at, cost: 1 });
            if (!counted) return;
            const row = t.tenants.get(tenant) ?? [0, 0];
            row[0] += 1;
            t.demand += 1;
            if (d.allowed) {
              row[1] += 1;
              t.admitted += 1;
            }
            t.tenants.set(tenant, row);
          }),
        );
      }
    }
    for (let k = 0; k < floodPerStep; k++) {
      calls.push(
        check(`flood-${k % o.floodGroups}`, undefined, 10).then((d) => {
          if (!d.allowed) return;
          t.all.push({ at: d.at, cost: 1 });
          if (counted) t.flood += 1;
        }),
      );
    }
    await Promise.all(calls);
    clock.advance(stepMs);
  }
  return t;
}

export function describeClassCases(name: string, setup: () => Promise<StoreHarness>): void {
  describe(`classes: ${name}`, () => {
    const limiters = useLimiters(setup, 'classes');
    const base = { limit: 1000, windowMs: 1000, tuning: { probationMs: 0 } };
    const scenario = { seconds: 4, critical: 5, criticalPerS: 150, floodGroups: 50, floodPerS: 5000 };

    test("a flood of many heavy groups (weight 10) in one class cannot take another class's guarantee", async () => {
      const clock = new ManualClock();
      const [l] = limiters(clock, { ...base, classes: { critical: { share: 0.2 } } });
      const t = await run((group, cls, weight) => l!.check(group, cls === undefined ? { weight } : { weight, class: cls }), clock, {
        ...scenario,
        criticalClass: 'critical',
      });
      expect(t.demand).toBeGreaterThan(400);
      for (const [, [demand, admitted]] of t.tenants) expect(admitted / demand).toBeGreaterThanOrEqual(0.98);
      expect(maxInAnyWindow(t.all, 1000)).toBeLessThanOrEqual(1000);
    });

    test('without classes the same flood takes most of those tenants’ demand (what the classes protect)', async () => {
      const clock = new ManualClock();
      const [l] = limiters(clock, base);
      const t = await run((group, _cls, weight) => l!.check(group, { weight }), clock, { ...scenario, criticalClass: undefined });
      expect(t.admitted / t.demand).toBeLessThan(0.9);
    });

    test('an idle class lends its share: the other class uses the strict capacity', async () => {
      const clock = new ManualClock();
      const [l] = limiters(clock, { ...base, classes: { critical: { share: 0.2 } } });
      const t = await run((group, cls, weight) => l!.check(group, cls === undefined ? { weight } : { weight, class: cls }), clock, {
        ...scenario,
        critical: 0,
        criticalClass: 'critical',
      });
      // strict capacity: (limit − burst + 1) per window after the first (burst 50 by default at limit 1000)
      expect(t.flood).toBeGreaterThanOrEqual(0.97 * 951 * 3);
      expect(maxInAnyWindow(t.all, 1000)).toBeLessThanOrEqual(1000);
    });

    test('two classes both saturated get their shares (0.3 : 0.7), and every window holds the limit', async () => {
      const clock = new ManualClock();
      const [l] = limiters(clock, { ...base, classes: { a: { share: 0.3 }, b: { share: 0.7 } } });
      const admitted = { a: 0, b: 0 };
      const all: Array<{ at: number; cost: number }> = [];
      for (let now = 0; now < 4000; now += 5) {
        const calls: Array<Promise<void>> = [];
        for (const cls of ['a', 'b'] as const) {
          for (let k = 0; k < 20; k++) {
            calls.push(
              l!.check(`${cls}-${k % 4}`, { class: cls }).then((d) => {
                if (!d.allowed) return;
                all.push({ at: d.at, cost: 1 });
                if (now >= 1000) admitted[cls] += 1;
              }),
            );
          }
        }
        await Promise.all(calls);
        clock.advance(5);
      }
      const total = admitted.a + admitted.b;
      expect(total).toBeGreaterThanOrEqual(0.97 * 951 * 3);
      expect(admitted.a / total).toBeGreaterThan(0.27);
      expect(admitted.a / total).toBeLessThan(0.33);
      expect(maxInAnyWindow(all, 1000)).toBeLessThanOrEqual(1000);
    });

    /** A backlog of critical jobs (5 tenants) drained every 5 ms next to a flood of live checks in 'default'. */
    const jobsBesideFlood = async (jobClass: string | undefined): Promise<{ started: number; all: Array<{ at: number; cost: number }> }> => {
      const clock = new ManualClock();
      const [l] = limiters(clock, { ...base, maxBacklog: 10_000, classes: { critical: { share: 0.2 } } });
      for (let k = 0; k < 1000; k++)
        await l!.enqueue(`tenant-${k % 5}`, jobClass === undefined ? { type: 'work' } : { type: 'work', class: jobClass });
      let started = 0;
      const all: Array<{ at: number; cost: number }> = [];
      for (let now = 0; now < 4000; now += 5) {
        const flood = Array.from({ length: 25 }, (_, k) =>
          l!.check(`flood-${k % 50}`, { weight: 10 }).then((d) => {
            if (d.allowed) all.push({ at: d.at, cost: 1 });
          }),
        );
        await Promise.all(flood);
        await l!.queue.dispatch({ readyMax: 100, moveMax: 100, promoteMax: 200, scanMax: 200 });
        for (const job of (await l!.queue.claimMany(60_000, 100)).claimed) {
          all.push({ at: clock.ms, cost: 1 });
          if (now >= 1000) started += 1;
          await l!.queue.complete(job.id, job.token, undefined, 0);
        }
        clock.advance(5);
      }
      return { started, all };
    };

    test("jobs keep their class: a critical class's backlog starts at its share beside a flood in 'default'", async () => {
      const { started, all } = await jobsBesideFlood('critical');
      // the class's share of the strict capacity, 0.2 · 951/s, over the 3 s counted
      expect(started).toBeGreaterThanOrEqual(0.95 * 0.2 * 951 * 3);
      expect(maxInAnyWindow(all, 1000)).toBeLessThanOrEqual(1000);
    });

    test("the same backlog without its class competes in 'default' with the flood (what the job's class protects)", async () => {
      const { started } = await jobsBesideFlood(undefined);
      expect(started).toBeLessThan(0.5 * 0.2 * 951 * 3);
    });

    test("a job's class: enqueue's, its plan's, a deferring check's; one the limiter lacks is refused", async () => {
      const clock = new ManualClock();
      const [l] = limiters(clock, { ...base, classes: { critical: { share: 0.2 } }, plans: { pro: { class: 'critical' } } });
      const own = await l!.enqueue('t', { type: 'work', class: 'critical' });
      const ofPlan = await l!.enqueue('t', { type: 'work', plan: 'pro' });
      const plain = await l!.enqueue('t', { type: 'work' });
      expect((await l!.getJob(own.id))?.class).toBe('critical');
      expect((await l!.getJob(ofPlan.id))?.class).toBe('critical');
      expect((await l!.getJob(plain.id))?.class).toBeUndefined();
      await expect(l!.enqueue('t', { type: 'work', class: 'nope' })).rejects.toMatchObject({ code: 'ERR_BL_UNKNOWN_CLASS' });
      // a deferring check's denied request: its job keeps the check's class
      const tight = limiters(clock, { limit: 2, windowMs: 60_000, tuning: { probationMs: 0 }, classes: { critical: { share: 0.5 } } })[0]!;
      let job: string | undefined;
      for (let i = 0; i < 5 && job === undefined; i++) job = (await tight.check('u', { class: 'critical', defer: { type: 'work' } })).job?.id;
      expect(job).toBeDefined();
      expect((await tight.getJob(job!))?.class).toBe('critical');
    });

    test("a decision says its class: the check's, its plan's, else 'default'; a peek reads a class", async () => {
      const clock = new ManualClock();
      const [l] = limiters(clock, { ...base, classes: { critical: { share: 0.2 } }, plans: { pro: { class: 'critical' }, free: {} } });
      expect((await l!.check('a', { class: 'critical' })).class).toBe('critical');
      expect((await l!.check('a', { plan: 'pro' })).class).toBe('critical');
      expect((await l!.check('a', { plan: 'free' })).class).toBe('default');
      expect((await l!.check('a')).class).toBe('default');
      expect((await l!.check('a', { plan: 'pro', class: 'default' })).class).toBe('default');
      expect((await l!.peek('a', { class: 'critical' })).group).toBe('a');
      await expect(l!.check('a', { class: 'nope' })).rejects.toMatchObject({ code: 'ERR_BL_UNKNOWN_CLASS' });
    });
  });
}
