/**
 * peek (a group's state without spending or writing) and reset (forget one group) on every store: a peek
 * spends nothing, writes nothing (the store's own state compared before and after) and agrees with the check
 * that follows it; a reset lets a denied group in again, clears its rules and probation, gives its weight
 * back, keeps its deferred jobs and touches no other group. Same harness as store-suite.ts; injected clock.
 */
import { resolveRules } from '../../src/limiter/rule-options';
import type { AdmitInput, Decision, GroupStatus, LimiterSpec, LimiterStore, Store } from '../../src/types';
import { ManualClock, pastColdStart, seededRandom, spec, useHarnessOf, type StoreHarness } from './store-suite';

/** A store's whole state for one limiter (its Redis keys with their expiry, or the MemoryStore's maps). */
export type Snapshot = (store: Store, limiterName: string) => Promise<unknown>;

/** A spec with probation (the limiter's option; stores read it from the spec). */
const probation = (probationMs: number, over: Partial<LimiterSpec> = {}): LimiterSpec => spec({ ...over, probationMs } as Partial<LimiterSpec>);
const check = (group: string, cost = 1, weight = 1): AdmitInput => ({ group, weight, cost });
const peekOf = (group: string, weight = 1) => ({ group, weight });

/** What a check of cost 1 right after a peek must answer, from the peek. */
function expectAgreement(p: GroupStatus, d: Decision): void {
  expect({ allowed: d.allowed, group: d.group, limit: d.limit, guaranteed: d.guaranteed, active: d.activeGroups }).toEqual({
    allowed: p.allowed,
    group: p.group,
    limit: p.limit,
    guaranteed: p.guaranteed,
    active: p.activeGroups,
  });
  const spent = d.allowed ? 1 : 0;
  expect(d.remaining).toBe(p.remaining - spent);
  expect(d.colour).toBe(p.colour);
  expect(d.policy).toBe(p.policy);
  // a denied check also takes its group's next staggered slot: never sooner than the peek's plain wait
  if (!d.allowed) expect(d.retryAfterMs).toBeGreaterThanOrEqual(p.retryAfterMs);
  expect(d.rules?.map((r) => r.remaining)).toEqual(p.rules?.map((r) => r.remaining - spent));
}

export function describePeekResetCases(name: string, setup: () => Promise<StoreHarness & { snapshot: Snapshot }>): void {
  describe(`peek and reset: ${name}`, () => {
    const use = useHarnessOf(setup);
    const h = { snapshot: (store: Store, limiterName: string) => use.harness().snapshot(store, limiterName) };
    const bind = (clock: ManualClock, s: LimiterSpec): { store: Store; limiter: LimiterStore; name: string } => {
      const { stores, store } = use.bind(clock, s);
      return { store, limiter: stores[0]!, name: s.name };
    };

    test('a peek spends nothing: after any number of peeks, checks at that instant admit exactly `remaining`', async () => {
      const clock = new ManualClock();
      const { limiter } = bind(clock, spec({ burst: 10, reserve: 2 }));
      await limiter.admit(check('a', 3));
      const first = await limiter.peek(peekOf('a'));
      for (let i = 0; i < 20; i++) expect(await limiter.peek(peekOf('a'))).toEqual(first);
      expect(first.remaining).toBeGreaterThan(0);
      let admitted = 0;
      while ((await limiter.admit(check('a'))).allowed) admitted += 1;
      expect(admitted).toBe(first.remaining);
      expect(await limiter.peek(peekOf('a'))).toMatchObject({ allowed: false, remaining: 0, colour: 'red', policy: 'global' });
    });

    const longRule = () => resolveRules([{ name: 'slow', limit: 50, windowMs: 5000, algorithm: 'sliding-window' }]);
    test.each([
      ['probation', () => probation(50, { burst: 10, reserve: 2, idleMs: 400, epochMs: 100 })],
      ['a rule that outlives idleMs', () => spec({ burst: 10, reserve: 2, idleMs: 400, epochMs: 100, rules: longRule() })],
    ])('a peek writes nothing (%s): known and unknown groups, a lapsed epoch, idle groups due a trim', async (_name, specOf) => {
      const clock = new ManualClock();
      const { store, limiter, name } = bind(clock, specOf());
      const unknownBefore = await h.snapshot(store, name);
      expect(await limiter.peek(peekOf('nobody'))).toMatchObject({ allowed: true, group: 'nobody' });
      expect(await h.snapshot(store, name)).toEqual(unknownBefore); // a limiter never used stays unused
      for (const g of ['a', 'b', 'c']) await limiter.admit(check(g, 2));
      clock.advance(60);
      await limiter.admit(check('a')); // graduates from probation
      await limiter.admit(check('b', 1, 3));
      for (const gap of [0, 30, 150, 500, 5000]) {
        clock.advance(gap);
        const before = await h.snapshot(store, name);
        for (const g of ['a', 'b', 'c', 'new-1', 'new-2']) await limiter.peek(peekOf(g, 2));
        expect(await h.snapshot(store, name)).toEqual(before);
      }
    });

    test('a peek of unknown groups registers none of them: a check of a known group sees the same active groups', async () => {
      const clock = new ManualClock();
      const { limiter } = bind(clock, spec());
      const d0 = await limiter.admit(check('known'));
      for (let i = 0; i < 5; i++) await limiter.peek(peekOf(`stranger-${i}`, 4));
      const d1 = await limiter.admit(check('known'));
      expect(d1.activeGroups).toBe(d0.activeGroups);
      expect(d1.guaranteed).toBe(d0.guaranteed);
    });

    test('a peek agrees with the check that follows it, through random traffic, idle gaps, probation and weights', async () => {
      const clock = new ManualClock();
      const s = probation(40, { limit: 40, burst: 8, reserve: 1, idleMs: 600, epochMs: 100 });
      const { limiter } = bind(clock, s);
      const rnd = seededRandom(5);
      const groups = ['a', 'b', 'c', 'd', 'e'];
      let denied = 0;
      for (let i = 0; i < 400; i++) {
        const g = groups[Math.floor(rnd() * groups.length)]!;
        const w = 1 + Math.floor(rnd() * 3);
        for (let k = Math.floor(rnd() * 3); k > 0; k--)
          await limiter.admit(check(groups[Math.floor(rnd() * groups.length)]!, 1 + Math.floor(rnd() * 2)));
        const p = await limiter.peek(peekOf(g, w));
        const d = await limiter.admit(check(g, 1, w));
        expectAgreement(p, d);
        if (!d.allowed) denied += 1;
        clock.advance(rnd() < 0.05 ? 700 + Math.floor(rnd() * 2000) : Math.floor(rnd() * 15));
      }
      expect(denied).toBeGreaterThan(20); // both answers were compared
    });

    test("a peek in the call that would trim the newcomers' group agrees with the check (it counts that group anew)", async () => {
      const clock = new ManualClock();
      const { limiter } = bind(clock, probation(100, { idleMs: 400, epochMs: 100 }));
      await limiter.admit(check('x')); // sighted: decided in the newcomers' group
      clock.advance(150);
      await limiter.admit(check('x')); // graduated: a group of its own
      clock.advance(300); // the newcomers' group idle for 450 ms (> idleMs), x for 300 ms
      const p = await limiter.peek(peekOf('z'));
      expect(p.activeGroups).toBe(2);
      expectAgreement(p, await limiter.admit(check('z')));
    });

    test('a peek in the call that would trim the overflow group agrees with the check (maxGroups still full)', async () => {
      const clock = new ManualClock();
      const { limiter } = bind(clock, spec({ idleMs: 400, epochMs: 100, maxGroups: 1 }));
      await limiter.admit(check('a'));
      expect((await limiter.admit(check('b'))).group).toBe('*overflow*');
      clock.advance(300);
      await limiter.admit(check('a'));
      clock.advance(150); // the overflow group idle for 450 ms (> idleMs), a for 150 ms
      const p = await limiter.peek(peekOf('c'));
      expect(p.group).toBe('*overflow*');
      expectAgreement(p, await limiter.admit(check('c')));
    });

    test('with rules, a peek shows each rule before spending and agrees with the next check', async () => {
      const clock = new ManualClock();
      const rules = resolveRules([
        { name: 'per-second', limit: 3, windowMs: 1000, algorithm: 'sliding-window' },
        { name: 'per-minute', limit: 5, windowMs: 60_000, algorithm: 'fixed-window' },
        { name: 'smooth', limit: 4, windowMs: 2000 },
      ]);
      const { limiter } = bind(clock, spec({ limit: 1000, burst: 100, rules }));
      const fresh = await limiter.peek(peekOf('a'));
      expect(fresh.rules?.map((r) => [r.name, r.remaining])).toEqual([
        ['per-second', 3],
        ['per-minute', 5],
        ['smooth', 1], // a token bucket of burst max(1, ceil(4 / 20))
      ]);
      for (let i = 0; i < 12; i++) {
        const p = await limiter.peek(peekOf('a'));
        expectAgreement(p, await limiter.admit(check('a')));
        clock.advance(300);
      }
      expect((await limiter.peek(peekOf('a'))).policy).toBe('per-minute');
    });

    test('reset lets a denied group in again and leaves another group as it was', async () => {
      const clock = new ManualClock();
      const { limiter } = bind(clock, spec({ burst: 10, reserve: 2 }));
      await limiter.admit(check('b', 2));
      for (let i = 0; i < 20 && (await limiter.admit(check('a'))).allowed; i++);
      const b = await limiter.peek(peekOf('b'));
      expect(await limiter.reset('a')).toBe(true);
      expect((await limiter.peek(peekOf('b'))).remaining).toBe(b.remaining);
      expect(await limiter.admit(check('a'))).toMatchObject({ allowed: true });
      expect((await limiter.peek(peekOf('b'))).remaining).toBe(b.remaining - 1); // a's unit came from the global bucket
    });

    test("reset gives the group's weight back: the others' guaranteed share grows", async () => {
      const clock = new ManualClock();
      const { limiter } = bind(clock, spec({ limit: 100 }));
      await limiter.admit(check('heavy', 1, 3));
      expect((await limiter.admit(check('light'))).guaranteed).toBe(25);
      await limiter.reset('heavy');
      expect(await limiter.peek(peekOf('light'))).toMatchObject({ guaranteed: 100, activeGroups: 1 });
    });

    test("reset clears the group's rule state", async () => {
      const clock = new ManualClock();
      const rules = resolveRules([{ name: 'hourly', limit: 3, windowMs: 3_600_000, algorithm: 'fixed-window' }]);
      const { limiter } = bind(clock, spec({ limit: 1000, burst: 100, rules }));
      for (let i = 0; i < 3; i++) expect((await limiter.admit(check('a'))).allowed).toBe(true);
      expect(await limiter.admit(check('a'))).toMatchObject({ allowed: false, policy: 'hourly' });
      await limiter.admit(check('b'));
      await limiter.reset('a');
      const d = await limiter.admit(check('a'));
      expect(d.allowed).toBe(true);
      expect(d.rules?.[0]?.remaining).toBe(2);
      expect((await limiter.peek(peekOf('b'))).rules?.[0]?.remaining).toBe(2);
    });

    test('reset clears a probation sighting: the group starts its probation again', async () => {
      const clock = new ManualClock();
      const s = probation(100);
      const { limiter } = bind(clock, s);
      await pastColdStart(limiter, clock, s);
      const first = await limiter.admit(check('x')); // sighted; decided in the newcomers' group
      clock.advance(150);
      expect(await limiter.reset('x')).toBe(true);
      // sighted afresh, so still a newcomer: no group of its own joins the active ones
      expect((await limiter.admit(check('x'))).activeGroups).toBe(first.activeGroups);
      clock.advance(150);
      expect((await limiter.admit(check('x'))).activeGroups).toBe(first.activeGroups + 1); // graduated now
    });

    test('reset is idempotent and forgets nothing else: a second reset (or one of an unknown group) finds nothing', async () => {
      const clock = new ManualClock();
      const { store, limiter, name } = bind(clock, spec());
      expect(await limiter.reset('a')).toBe(false); // a limiter never used
      await limiter.admit(check('a'));
      await limiter.admit(check('b'));
      expect(await limiter.reset('a')).toBe(true);
      const after = await h.snapshot(store, name);
      expect(await limiter.reset('a')).toBe(false);
      expect(await limiter.reset('never-seen')).toBe(false);
      expect(await h.snapshot(store, name)).toEqual(after);
    });

    test("reset keeps the group's deferred jobs", async () => {
      const clock = new ManualClock();
      const { limiter } = bind(clock, spec({ burst: 10, reserve: 2 }));
      const defer = { type: 't', payload: '{}', maxBacklog: 10, maxDeferMs: 3_600_000 };
      let d: Decision;
      do d = await limiter.admit({ ...check('a'), defer });
      while (d.allowed);
      expect(d.job).toBeDefined();
      await limiter.reset('a');
      expect(await limiter.queue.getJob(d.job!.id)).toMatchObject({ group: 'a' });
      expect(await limiter.queue.groupCounts('a')).toMatchObject({ waiting: 1 });
    });
  });
}
