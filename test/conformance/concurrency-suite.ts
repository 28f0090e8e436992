/**
 * Request concurrency on every store: at most `cap` slots of a group held, taken with the admission and
 * all-or-nothing both ways (over the cap spends nothing; a rate denial takes no slot), leases that expire on
 * the store clock (swept a bounded number per check), idempotent release, deferral of a request over the cap.
 * Same harness as store-suite.ts; all timing on the injected clock.
 */
import { CC_SWEEP } from '../../src/core/constants.generated';
import { resolveRules } from '../../src/limiter/rule-options';
import type { AdmitInput, Decision, LimiterSpec, LimiterStore } from '../../src/types';
import { ManualClock, spec, useHarness, type StoreHarness } from './store-suite';

const LEASE_MS = 5000;
const capped = (group: string, concurrency: number, cost = 1): AdmitInput => ({ group, weight: 1, cost, concurrency });
/** A global limit far above the caps: only concurrency binds. */
const roomy = (over: Partial<LimiterSpec> = {}): LimiterSpec =>
  spec({ limit: 100_000, windowMs: 1000, burst: 5000, reserve: 1, concurrencyLeaseMs: LEASE_MS, ...over });
const allowed = (ds: Decision[]): Decision[] => ds.filter((d) => d.allowed);
const release = (s: LimiterStore, d: Decision): Promise<boolean> => s.release!(d.concurrency!.lease!);

export function describeConcurrencyCases(name: string, setup: () => Promise<StoreHarness>): void {
  describe(`concurrency: ${name}`, () => {
    const bind = useHarness(setup);

    test.each([1, 3, 5])('a cap of %i is never exceeded, from several handles in one batch and one by one', async (cap) => {
      const clock = new ManualClock();
      const stores = bind(clock, roomy(), 3);
      const first = await Promise.all(Array.from({ length: 12 }, (_, i) => stores[i % 3]!.admit(capped('a', cap))));
      expect(allowed(first)).toHaveLength(cap);
      for (const d of allowed(first)) expect(d.concurrency!.lease).toEqual(expect.any(String));
      const denied = first.filter((d) => !d.allowed);
      for (const d of denied) {
        expect(d).toMatchObject({ reason: 'concurrency', policy: 'concurrency', concurrency: { limit: cap, inFlight: cap } });
        expect(d.concurrency!.lease).toBeUndefined();
      }
      // another group has its own slots; a check without a cap is not counted
      expect(allowed(await Promise.all([stores[0]!.admit(capped('b', cap)), stores[1]!.admit({ group: 'a', weight: 1, cost: 1 })]))).toHaveLength(2);
      // one released, one more in; never more than cap held
      expect(await release(stores[1]!, allowed(first)[0]!)).toBe(true);
      const again = [];
      for (let i = 0; i < 3; i++) again.push(await stores[i]!.admit(capped('a', cap)));
      expect(allowed(again)).toHaveLength(1);
      expect(allowed(again)[0]!.concurrency!.inFlight).toBe(cap);
    });

    test('release is idempotent: a second release frees nothing, and a decision from another group is not confused', async () => {
      const clock = new ManualClock();
      const [s] = bind(clock, roomy());
      const [x, y] = [await s!.admit(capped('g', 2)), await s!.admit(capped('g', 2))];
      expect([x!.allowed, y!.allowed]).toEqual([true, true]);
      expect(await release(s!, x!)).toBe(true);
      expect(await release(s!, x!)).toBe(false);
      expect(await s!.release!('not-a-lease')).toBe(false);
      // one slot free, not two
      const next = [await s!.admit(capped('g', 2)), await s!.admit(capped('g', 2))];
      expect(next.map((d) => d.allowed)).toEqual([true, false]);
      expect(next[1]!.concurrency!.inFlight).toBe(2);
    });

    test('a slot frees when its lease ends (a crashed holder leaks nothing); a late release is a no-op', async () => {
      const clock = new ManualClock();
      const [s] = bind(clock, roomy());
      const held = await s!.admit(capped('g', 1));
      expect(held.allowed).toBe(true);
      clock.advance(LEASE_MS - 1);
      expect((await s!.admit(capped('g', 1))).reason).toBe('concurrency');
      clock.advance(1);
      const after = await s!.admit(capped('g', 1));
      expect(after).toMatchObject({ allowed: true, concurrency: { limit: 1, inFlight: 1 } });
      // the expired lease's release must not free the new one
      expect(await release(s!, held)).toBe(false);
      expect((await s!.admit(capped('g', 1))).allowed).toBe(false);
    });

    test(`expired leases are swept at most ${CC_SWEEP} per check, oldest first, until none is left`, async () => {
      const clock = new ManualClock();
      const [s] = bind(clock, roomy());
      const n = 2 * CC_SWEEP + 5;
      for (let i = 0; i < n; i++) expect((await s!.admit(capped('g', 1000))).allowed).toBe(true);
      clock.advance(LEASE_MS);
      const seen = [];
      for (let i = 0; i < 4; i++) seen.push((await s!.admit(capped('g', 1000))).concurrency!.inFlight);
      // each check sweeps CC_SWEEP expired leases and takes one
      expect(seen).toEqual([n - CC_SWEEP + 1, n - 2 * CC_SWEEP + 2, 3, 4]);
    });

    test('a request over the cap spends nothing: not the global bucket, not a rule', async () => {
      const clock = new ManualClock();
      const rules = resolveRules([{ name: 'five', limit: 5, windowMs: 60_000, algorithm: 'fixed-window' }]);
      const [s] = bind(clock, spec({ limit: 4, windowMs: 60_000, burst: 4, reserve: 0, rules, concurrencyLeaseMs: 600_000 }));
      const held = await s!.admit(capped('g', 1));
      expect(held.allowed).toBe(true);
      expect(held.rules![0]!.remaining).toBe(4);
      for (let i = 0; i < 10; i++) expect((await s!.admit(capped('g', 1))).policy).toBe('concurrency');
      await release(s!, held);
      // the 10 turned away spent nothing: three more fit the global limit of 4, and the rule counts 4 in all
      const more = [];
      for (let i = 0; i < 4; i++) {
        const d = await s!.admit(capped('g', 1));
        more.push(d);
        if (d.allowed) await release(s!, d);
      }
      expect(more.map((d) => d.allowed)).toEqual([true, true, true, false]);
      expect(more[2]!.rules![0]!.remaining).toBe(1);
      expect(more[3]!.policy).toBe('global');
    });

    test('a request the rate denies takes no slot', async () => {
      const clock = new ManualClock();
      const [s] = bind(clock, spec({ limit: 2, windowMs: 1000, burst: 2, reserve: 0, concurrencyLeaseMs: 600_000 }));
      const spent = [await s!.admit({ group: 'g', weight: 1, cost: 1 }), await s!.admit({ group: 'g', weight: 1, cost: 1 })];
      expect(spent.every((d) => d.allowed)).toBe(true);
      const denied = await s!.admit(capped('g', 1));
      expect(denied).toMatchObject({ allowed: false, policy: 'global', reason: 'limit', concurrency: { limit: 1, inFlight: 0 } });
      clock.advance(1000);
      expect((await s!.admit(capped('g', 1))).allowed).toBe(true);
    });

    test('with defer, a request over the cap is deferred like one over the rate', async () => {
      const clock = new ManualClock();
      const [s] = bind(clock, roomy());
      const defer = { type: 't', payload: '{}', maxBacklog: 10, maxDeferMs: 600_000 };
      const held = await s!.admit({ ...capped('g', 1), defer });
      expect(held).toMatchObject({ allowed: true, concurrency: { inFlight: 1 } });
      expect(held.job).toBeUndefined();
      const over = await s!.admit({ ...capped('g', 1), defer });
      expect(over).toMatchObject({ allowed: false, reason: 'concurrency', policy: 'concurrency', job: { duplicate: false } });
      // batched deferring checks, some capped and some not
      const batch = await Promise.all([s!.admit({ ...capped('g', 1), defer }), s!.admit({ group: 'g', weight: 1, cost: 1, defer })]);
      expect(batch.map((d) => d.allowed)).toEqual([false, true]);
      expect(batch[0]!.job).toBeDefined();
    });
  });
}
