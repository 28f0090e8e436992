/**
 * Per-group overrides (limiter.setOverride, lua/includes/overrides.lua, src/core/overrides.ts) on every store:
 * set, get, delete and paged lists; expiry on the store clock; a block (denied at once, nothing spent, nothing
 * deferred or reserved); the override's rules, plan, weight and concurrency replacing the check's; the cap on how
 * many a limiter holds; reserve then settle refunding the override's rules; and a change made through one handle
 * (process) applying at the other's next check. Same harness as store-suite.ts; all timing on the injected clock.
 */
import type { Limiter, LimiterOptions } from '../../src/limiter/limiter';
import { ManualClock, slidingRule, useLimiters, type StoreHarness } from './store-suite';

const base: Omit<LimiterOptions, 'store'> = { limit: 1000, windowMs: 1000, tuning: { burst: 200, reserve: 2, probationMs: 0 } };

/** Checks of `group` at this instant until one is denied (at most `max`): how many were allowed. */
async function admitted(limiter: Limiter, group: string, max = 100): Promise<number> {
  let n = 0;
  while (n < max && (await limiter.check(group)).allowed) n += 1;
  return n;
}

export function describeOverrideCases(name: string, setup: () => Promise<StoreHarness>): void {
  describe(`overrides: ${name}`, () => {
    const make = useLimiters(setup, 'ov');

    test('set, get, replace and delete; a group without one answers null', async () => {
      const clock = new ManualClock();
      const [limiter] = make(clock, base);
      expect(await limiter!.getOverride('a')).toBeNull();
      const set = await limiter!.setOverride('a', { weight: 3 }, { reason: 'upgrade' });
      expect(set).toEqual({ group: 'a', settings: { weight: 3 }, reason: 'upgrade', setAt: clock.ms });
      expect(await limiter!.getOverride('a')).toEqual(set);
      clock.advance(5);
      const replaced = await limiter!.setOverride('a', { blocked: true });
      expect(replaced).toEqual({ group: 'a', settings: { blocked: true }, setAt: clock.ms });
      expect(await limiter!.getOverride('a')).toEqual(replaced);
      expect(await limiter!.deleteOverride('a')).toBe(true);
      expect(await limiter!.deleteOverride('a')).toBe(false);
      expect(await limiter!.getOverride('a')).toBeNull();
      expect((await limiter!.check('a')).allowed).toBe(true);
    });

    test('listOverrides pages in the byte order of the groups, the cursor naming the next page', async () => {
      const clock = new ManualClock();
      const [limiter] = make(clock, base);
      const groups = ['b', 'a', 'é', 'a b', 'z', '群', 'B'];
      for (const g of groups) await limiter!.setOverride(g, { weight: 2 });
      const seen: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const page = await limiter!.listOverrides(cursor === undefined ? { count: 3 } : { cursor, count: 3 });
        expect(page.overrides.length).toBeLessThanOrEqual(3);
        seen.push(...page.overrides.map((o) => o.group));
        cursor = page.cursor;
        pages += 1;
      } while (cursor !== undefined);
      const bytes = [...groups].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)));
      expect(seen).toEqual(bytes);
      expect(pages).toBe(3);
      expect((await limiter!.listOverrides()).overrides.map((o) => o.settings)).toEqual(groups.map(() => ({ weight: 2 })));
    });

    test('ttlMs: the override ends by itself on the store clock; checks, get and list no longer see it', async () => {
      const clock = new ManualClock();
      const [limiter] = make(clock, base);
      const set = await limiter!.setOverride('a', { blocked: true }, { ttlMs: 1000 });
      expect(set.expiresAt).toBe(clock.ms + 1000);
      await limiter!.setOverride('b', { blocked: true });
      clock.advance(999);
      const d = await limiter!.check('a');
      expect(d).toMatchObject({ allowed: false, policy: 'blocked', retryAfterMs: 1 });
      clock.advance(1);
      expect((await limiter!.check('a')).allowed).toBe(true);
      expect(await limiter!.getOverride('a')).toBeNull();
      expect((await limiter!.listOverrides()).overrides.map((o) => o.group)).toEqual(['b']);
      expect((await limiter!.check('b')).allowed).toBe(false);
    });

    test('blocked: denied at once, nothing spent, never deferred, no reservation', async () => {
      const clock = new ManualClock();
      const [limiter] = make(clock, { ...base, limit: 20, tuning: { burst: 10, reserve: 1, probationMs: 0 } });
      await limiter!.setOverride('bad', { blocked: true });
      for (let i = 0; i < 30; i++) {
        const d = await limiter!.check('bad');
        expect(d).toMatchObject({ allowed: false, reason: 'blocked', policy: 'blocked', retryAfterMs: 1000 });
      }
      const deferred = await limiter!.check('bad', { defer: { type: 't', payload: { n: 1 } } });
      expect(deferred).toMatchObject({ allowed: false, reason: 'blocked' });
      expect(deferred.job).toBeUndefined();
      const reserving = await limiter!.check('bad', { settle: true });
      expect(reserving).toMatchObject({ allowed: false, reason: 'blocked' });
      expect(reserving.reservation).toBeUndefined();
      expect(await limiter!.counts()).toMatchObject({ delayed: 0, pending: 0, ready: 0 });
      // the whole bucket is still there for another group
      expect(await admitted(limiter!, 'good')).toBe(10);
      const peeked = await limiter!.peek('bad');
      expect(peeked).toMatchObject({ allowed: false, policy: 'blocked' });
    });

    test("rules: the override's replace the limiter's, named in the decision", async () => {
      const clock = new ManualClock();
      const [limiter] = make(clock, { ...base, rules: [slidingRule('tenant', 5)] });
      await limiter!.setOverride('migrating', { rules: [slidingRule('burst', 40)] }, { ttlMs: 60_000, reason: 'migration' });
      expect(await admitted(limiter!, 'plain')).toBe(5);
      expect(await admitted(limiter!, 'migrating')).toBe(40);
      const d = await limiter!.check('migrating');
      expect(d).toMatchObject({ allowed: false, policy: 'burst' });
      expect(d.rules?.map((r) => [r.name, r.limit, r.remaining])).toEqual([['burst', 40, 0]]);
      const p = await limiter!.peek('migrating');
      expect(p.rules?.map((r) => r.name)).toEqual(['burst']);
      // no rules at all
      await limiter!.setOverride('free', { rules: [] });
      expect(await admitted(limiter!, 'free', 60)).toBe(60);
      expect((await limiter!.check('free')).rules).toBeUndefined();
    });

    test("plan: the plan's weight and rules, whatever plan the check names", async () => {
      const clock = new ManualClock();
      const [limiter] = make(clock, {
        ...base,
        plans: { free: { rules: [slidingRule('day', 2)] }, pro: { weight: 5, rules: [slidingRule('day', 20)] } },
        defaultPlan: 'free',
      });
      await limiter!.setOverride('upgraded', { plan: 'pro' });
      expect(await admitted(limiter!, 'stays-free')).toBe(2);
      expect(await admitted(limiter!, 'upgraded')).toBe(20);
      clock.advance(2000);
      const d = await limiter!.check('upgraded', { plan: 'free', weight: 1 });
      expect(d.rules?.map((r) => [r.name, r.limit])).toEqual([['day', 20]]);
      const other = await limiter!.check('stays-free');
      // weight 5 of Σw 6: five sixths of the limit guaranteed
      expect(d.guaranteed).toBe(Math.floor((1000 * 5) / 6));
      expect(other.guaranteed).toBe(Math.floor(1000 / 6));
    });

    test("weight: the override's wins over the check's", async () => {
      const clock = new ManualClock();
      const [limiter] = make(clock, base);
      await limiter!.setOverride('big', { weight: 3 });
      await limiter!.check('small', { weight: 1 });
      const d = await limiter!.check('big', { weight: 1 });
      expect(d.guaranteed).toBe(750);
    });

    test('concurrency: replaces the cap of a check that takes a slot', async () => {
      const clock = new ManualClock();
      const [limiter] = make(clock, { ...base, concurrency: 5 });
      await limiter!.setOverride('one', { concurrency: 1 });
      const first = await limiter!.check('one');
      expect(first.concurrency).toMatchObject({ limit: 1, inFlight: 1 });
      const second = await limiter!.check('one');
      expect(second).toMatchObject({ allowed: false, policy: 'concurrency' });
      await limiter!.release(first);
      expect((await limiter!.check('one')).allowed).toBe(true);
    });

    test('the cap: one more than tuning.maxOverrides is refused with a coded error; a replacement is not one more', async () => {
      const clock = new ManualClock();
      const [limiter] = make(clock, { ...base, tuning: { ...base.tuning, maxOverrides: 2 } });
      await limiter!.setOverride('a', { weight: 2 });
      await limiter!.setOverride('b', { weight: 2 }, { ttlMs: 100 });
      await expect(limiter!.setOverride('c', { weight: 2 })).rejects.toMatchObject({ code: 'ERR_BL_TOO_MANY_OVERRIDES' });
      expect(await limiter!.getOverride('c')).toBeNull();
      await limiter!.setOverride('a', { weight: 4 });
      // an expired one makes room
      clock.advance(100);
      await limiter!.setOverride('c', { weight: 2 });
      expect((await limiter!.listOverrides()).overrides.map((o) => o.group)).toEqual(['a', 'c']);
    });

    test("reserve then settle: the override's rules are the ones spent, and the ones refunded", async () => {
      const clock = new ManualClock();
      const [limiter] = make(clock, { ...base, rules: [slidingRule('own', 100)] });
      await limiter!.setOverride('a', { rules: [slidingRule('tight', 10)] });
      const d = await limiter!.check('a', { cost: 8, settle: true });
      expect(d.allowed).toBe(true);
      expect(d.rules?.map((r) => [r.name, r.remaining])).toEqual([['tight', 2]]);
      // the override changes between reserve and settle: the refund goes to the rules the reservation spent
      await limiter!.setOverride('a', { rules: [slidingRule('other', 50)] });
      expect(await d.settle!(1)).toMatchObject({ status: 'settled' });
      await limiter!.setOverride('a', { rules: [slidingRule('tight', 10)] });
      expect((await limiter!.check('a')).rules?.map((r) => [r.name, r.remaining])).toEqual([['tight', 8]]);
      // a blocked group reserves nothing
      await limiter!.setOverride('a', { blocked: true });
      expect((await limiter!.check('a', { settle: true })).reservation).toBeUndefined();
    });

    test("a change through one process applies at the other's next check", async () => {
      const clock = new ManualClock();
      const [one, two] = make(clock, { ...base, rules: [slidingRule('tenant', 3)] }, 2);
      expect(await admitted(two!, 'x')).toBe(3);
      await one!.setOverride('x', { rules: [slidingRule('tenant', 6)] });
      expect(await admitted(two!, 'x')).toBe(3);
      await one!.setOverride('x', { blocked: true });
      expect(await two!.check('x')).toMatchObject({ policy: 'blocked' });
      await one!.deleteOverride('x');
      clock.advance(2000);
      expect(await admitted(two!, 'x')).toBe(3);
      expect(await two!.getOverride('x')).toBeNull();
    });

    test('an overridden group still defers (its weight and job cap go with the job)', async () => {
      const clock = new ManualClock();
      const [limiter] = make(clock, { ...base, limit: 10, tuning: { burst: 2, reserve: 1, probationMs: 0 } });
      await limiter!.setOverride('g', { weight: 4, groupConcurrency: 2 });
      let job;
      for (let i = 0; i < 10 && job === undefined; i++) job = (await limiter!.check('g', { defer: { type: 't', payload: i } })).job;
      expect(job).toBeDefined();
      expect(await limiter!.getJob(job!.id)).toMatchObject({ group: 'g', state: 'delayed' });
    });

    test("a claim: a blocked group's job does not start and waits in delayed (no place in ready); others start", async () => {
      const clock = new ManualClock();
      const [limiter] = make(clock, { ...base, limit: 1000, tuning: { burst: 100, reserve: 1, probationMs: 0 } });
      const l = limiter!;
      const g = await l.enqueue('g', { type: 't', payload: 1 });
      const h = await l.enqueue('h', { type: 't', payload: 2 });
      await l.setOverride('g', { blocked: true }, { ttlMs: 5000 });
      await l.queue.dispatch(MOVE);
      expect((await l.queue.claimMany(60_000, 10)).claimed.map((c) => c.id)).toEqual([h.id]);
      expect(await l.getJob(g.id)).toMatchObject({ state: 'delayed', runAt: clock.ms + 5000 });
      expect(await l.counts()).toMatchObject({ ready: 0, delayed: 1 });
      // unblocked: it starts once it is due again
      await l.deleteOverride('g');
      clock.advance(5000);
      await l.queue.dispatch(MOVE);
      expect((await l.queue.claimMany(60_000, 10)).claimed.map((c) => c.id)).toEqual([g.id]);
    });

    test("a claim decides a job under its group's override: its rules", async () => {
      const clock = new ManualClock();
      const [limiter] = make(clock, { ...base, rules: [slidingRule('tenant', 1)] });
      const l = limiter!;
      const jobs = [];
      for (let i = 0; i < 3; i++) jobs.push(await l.enqueue('g', { type: 't', payload: i }));
      await l.queue.dispatch(MOVE);
      expect((await l.queue.claimMany(60_000, 10)).claimed).toHaveLength(1);
      await l.setOverride('g', { rules: [slidingRule('more', 10)] });
      expect((await l.queue.claimMany(60_000, 10)).claimed).toHaveLength(2);
    });
  });
}

const MOVE = { readyMax: 100, moveMax: 100, promoteMax: 100, scanMax: 100 };
