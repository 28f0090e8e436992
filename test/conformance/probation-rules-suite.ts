/**
 * Probation with rules and plans on every store: an id on probation is decided in the newcomers' shared group
 * for its share, but on its own rule state (fs_sighted). Its rule caps hold in every window across its probation
 * and its graduation (the state it spent carries over), a newcomer denied by the share or a rule spends nothing,
 * two newcomers never share rule state, and a flood of new ids keeps the state within maxGroups. Same harness
 * as store-suite.ts; all timing on the injected clock.
 */
import { resolvePlans } from '../../src/limiter/plan-options';
import { resolveRules, type Rule } from '../../src/limiter/rule-options';
import type { AdmitInput, Decision, LimiterSpec, Store } from '../../src/types';
import { ManualClock, maxInAnyWindow, pastColdStart, seededRandom, spec, useHarnessOf, type StoreHarness } from './store-suite';

/** How many entries (hash fields, zset members, map entries) the store keeps for one limiter. */
export type Entries = (store: Store, limiterName: string) => Promise<number>;

const NEW = '*new*';
/** A spec with probation and rules, the limiter's own or (`plan`) only a plan's. */
function probationSpec(probationMs: number, rules: Rule[], over: Partial<LimiterSpec> & { maxGroups?: number } = {}, plan = false): LimiterSpec {
  const resolved = resolveRules(rules);
  const s = spec({ limit: 100_000, windowMs: 1000, burst: 5000, reserve: 1, idleMs: 2000, ...over });
  const plans = resolvePlans({ pro: { rules } }, resolveRules([]), 1000)!;
  const out: LimiterSpec = plan ? { ...s, plans, probationMs } : { ...s, rules: resolved, probationMs };
  return out;
}
const checkOf =
  (plan: boolean) =>
  (group: string, cost = 1): AdmitInput => ({ group, weight: 1, cost, ...(plan ? { plan: 'pro' } : {}) });
const ruleOf = (d: Decision, name: string) => d.rules!.find((r) => r.name === name)!;

export function describeProbationRuleCases(name: string, setup: () => Promise<StoreHarness & { entries: Entries }>): void {
  describe(`probation with rules: ${name}`, () => {
    const use = useHarnessOf(setup);
    const h = { entries: (store: Store, limiterName: string) => use.harness().entries(store, limiterName) };
    const bind = use.bind;

    describe.each([
      ['the limiter rules', false],
      ['a plan rules', true],
    ] as const)('%s', (_label, plan) => {
      const check = checkOf(plan);

      test.each(['token-bucket', 'sliding-window', 'fixed-window'] as const)(
        'a %s rule holds in every window for an id across its probation and graduation, from several handles',
        async (algorithm) => {
          const clock = new ManualClock();
          const s = probationSpec(300, [{ name: 'r', limit: 10, windowMs: 1000, algorithm }], {}, plan);
          const { stores } = bind(clock, s, 3);
          await pastColdStart(stores[0]!, clock, s);
          const rnd = seededRandom(17);
          const admitted: Array<{ at: number; cost: number }> = [];
          const active: number[] = [];
          let k = 0;
          for (let t = 0; t < 200; t++) {
            const n = Math.floor(rnd() * 4);
            const ds = await Promise.all(Array.from({ length: n }, () => stores[k++ % stores.length]!.admit(check('a'))));
            for (const d of ds) {
              if (d.allowed) admitted.push({ at: d.at, cost: 1 });
              active.push(d.activeGroups);
            }
            clock.advance(1 + Math.floor(rnd() * 20));
          }
          // on probation ('*new*' only), then registered as itself
          expect(active[0]).toBe(1);
          expect(active.at(-1)).toBe(2);
          if (algorithm === 'fixed-window') {
            const perWindow = new Map<number, number>();
            for (const e of admitted) perWindow.set(Math.floor(e.at / 1000), (perWindow.get(Math.floor(e.at / 1000)) ?? 0) + 1);
            expect(Math.max(...perWindow.values())).toBe(10);
          } else {
            expect(maxInAnyWindow(admitted, 1000)).toBeLessThanOrEqual(10);
          }
          expect(admitted.length).toBeGreaterThan(10); // the rule was used on both sides of the graduation
        },
      );

      test('the rule state an id spent on probation carries over to its own group when it graduates', async () => {
        const clock = new ManualClock();
        const spec100 = probationSpec(100, [{ name: 'hour', limit: 5, windowMs: 3_600_000, algorithm: 'sliding-window' }], {}, plan);
        const { stores } = bind(clock, spec100);
        const s = stores[0]!;
        await pastColdStart(s, clock, spec100);
        for (let i = 0; i < 3; i++) expect(await s.admit(check('a'))).toMatchObject({ allowed: true, activeGroups: 1 });
        clock.advance(100);
        const graduated = await s.admit(check('a'));
        expect(graduated).toMatchObject({ allowed: true, activeGroups: 2 });
        expect(ruleOf(graduated, 'hour').remaining).toBe(1);
        expect(await s.admit(check('a'))).toMatchObject({ allowed: true });
        expect(await s.admit(check('a'))).toMatchObject({ allowed: false, policy: 'hour' });
      });

      test('two newcomers do not share rule state', async () => {
        const clock = new ManualClock();
        const spec1000 = probationSpec(1000, [{ name: 'few', limit: 3, windowMs: 60_000, algorithm: 'fixed-window' }], {}, plan);
        const { stores } = bind(clock, spec1000);
        const s = stores[0]!;
        await pastColdStart(s, clock, spec1000);
        const a = await Promise.all(Array.from({ length: 5 }, () => s.admit(check('a'))));
        expect(a.map((d) => d.allowed)).toEqual([true, true, true, false, false]);
        expect(a[3]).toMatchObject({ group: 'a', policy: 'few', activeGroups: 1 });
        // b shares a's share ('*new*') but not a's rule: its own 3, counted from its own first request
        const b = await Promise.all(Array.from({ length: 4 }, () => s.admit(check('b'))));
        expect(b.map((d) => d.allowed)).toEqual([true, true, true, false]);
        expect(b.map((d) => ruleOf(d, 'few').remaining)).toEqual([2, 1, 0, 0]);
        expect(b.every((d) => d.group === 'b' && d.activeGroups === 1)).toBe(true);
      });

      test('a newcomer denied by a rule spends nothing in the share; denied by the share, nothing in its rules', async () => {
        const clock = new ManualClock();
        const rules: Rule[] = [
          { name: 'small', limit: 2, windowMs: 60_000, algorithm: 'sliding-window' },
          { name: 'big', limit: 50, windowMs: 60_000, algorithm: 'fixed-window' },
        ];
        const spec60 = probationSpec(60_000, rules, { limit: 100, burst: 6, reserve: 1 }, plan);
        const { stores } = bind(clock, spec60);
        const s = stores[0]!;
        await pastColdStart(s, clock, spec60);
        const first = [await s.admit(check('a')), await s.admit(check('a'))];
        expect(first.map((d) => d.allowed)).toEqual([true, true]);
        for (let i = 0; i < 5; i++) {
          const d = await s.admit(check('a'));
          expect(d).toMatchObject({ allowed: false, policy: 'small', remaining: first[1]!.remaining });
          expect(ruleOf(d, 'big').remaining).toBe(48);
        }
        // the newcomers' share is as it was: the others on probation get exactly what was left of the burst
        const others: Decision[] = [];
        for (let i = 0; i < 20; i++) others.push(await s.admit(check(`o${i}`)));
        expect(others.filter((d) => d.allowed)).toHaveLength(6 - 2);
        // denied by the share: the rules of the denied newcomers spent nothing
        for (const d of others.filter((x) => !x.allowed)) {
          expect(d.policy).toBe('global');
          expect(ruleOf(d, 'small').remaining).toBe(2);
          expect(ruleOf(d, 'big').remaining).toBe(50);
        }
      });
    });

    test('a flood of new ids keeps the state within maxGroups; an id whose sighting the flood dropped starts its rules afresh', async () => {
      const clock = new ManualClock();
      const rules: Rule[] = [{ name: 'day', limit: 2, windowMs: 86_400_000, algorithm: 'fixed-window' }];
      const s = probationSpec(100, rules, { maxGroups: 10 });
      const { stores, store } = bind(clock, s);
      const st = stores[0]!;
      await pastColdStart(st, clock, s);
      await st.admit(checkOf(false)('tenant'));
      clock.advance(100);
      expect(await st.admit(checkOf(false)('tenant'))).toMatchObject({ activeGroups: 2 });
      const early = [await st.admit(checkOf(false)('early')), await st.admit(checkOf(false)('early')), await st.admit(checkOf(false)('early'))];
      expect(early.map((d) => d.allowed)).toEqual([true, true, false]);
      for (let i = 0; i < 300; i++) {
        await st.admit(checkOf(false)(`flood-${i}`));
        if (i % 10 === 0) clock.advance(1);
      }
      // meta, then the tenant and '*new*' (state and last-seen each), at most maxGroups sightings and their rule records
      expect(await h.entries(store, s.name)).toBeLessThanOrEqual(1 + 2 * 2 + 2 * 10);
      // the flood pushed out early's sighting and its rule record with it: its day limit is whole again
      const again = await st.admit(checkOf(false)('early'));
      expect(again).toMatchObject({ allowed: true, activeGroups: 2 });
      expect(ruleOf(again, 'day').remaining).toBe(1);
    });

    test('a peek of a newcomer reads its own rule record, and a peek of another newcomer its own (none yet)', async () => {
      const clock = new ManualClock();
      const { stores } = bind(clock, probationSpec(1000, [{ name: 'few', limit: 3, windowMs: 60_000, algorithm: 'sliding-window' }]));
      const st = stores[0]!;
      await st.admit(checkOf(false)('a'));
      await st.admit(checkOf(false)('a'));
      const a = await st.peek({ group: 'a', weight: 1 });
      expect(a).toMatchObject({ group: 'a', allowed: true, activeGroups: 1 });
      expect(ruleOf(a as Decision, 'few').remaining).toBe(1);
      expect(ruleOf((await st.peek({ group: 'b', weight: 1 })) as Decision, 'few').remaining).toBe(3);
      // the peeks spent nothing: a still has exactly one
      expect((await st.admit(checkOf(false)('a'))).allowed).toBe(true);
      expect(await st.admit(checkOf(false)('a'))).toMatchObject({ allowed: false, policy: 'few' });
    });

    test('a reset forgets a newcomer rule record with its sighting', async () => {
      const clock = new ManualClock();
      const { stores } = bind(clock, probationSpec(1000, [{ name: 'few', limit: 1, windowMs: 60_000 }]));
      const st = stores[0]!;
      expect((await st.admit(checkOf(false)('a'))).allowed).toBe(true);
      expect(await st.admit(checkOf(false)('a'))).toMatchObject({ allowed: false, policy: 'few' });
      expect(await st.reset('a')).toBe(true);
      const d = await st.admit(checkOf(false)('a'));
      expect(d.allowed).toBe(true);
      expect(d.group).not.toBe(NEW);
    });
  });
}
