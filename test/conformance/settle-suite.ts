/**
 * Reserve, then settle (lua/settle.lua, src/core/settle.ts) on every store: a refund gives the unused units back to
 * the global bucket and the group, an overage is debt the group's next admissions wait for, a reservation settles
 * once (from any handle), lapses after its hold (counting at its estimate), and one settle reaches every rule that
 * spent, each as its algorithm allows. Same harness as store-suite.ts; all timing on the injected clock.
 */
import { resolveRules, type Rule } from '../../src/limiter/rule-options';
import type { AdmitInput, LimiterSpec, LimiterStore, SettleResult } from '../../src/types';
import { settleWalk, type WalkStep } from '../helpers/settle-walk';
import { ManualClock, seededRandom, spec, useHarnessOf, type StoreHarness } from './store-suite';

/** strict: T = 1000 / (100 − 20 + 1) ms per unit; no probation (the group is itself from its first check) */
const small = (over: Partial<LimiterSpec> = {}): LimiterSpec => spec({ limit: 100, windowMs: 1000, burst: 20, reserve: 2, probationMs: 0, ...over });
const T_MS = 1000 / 81;
const reserving = (group: string, cost: number, plan?: string): AdmitInput => ({ group, weight: 1, cost, reserve: true, ...(plan ? { plan } : {}) });
const plain = (group: string, cost: number): AdmitInput => ({ group, weight: 1, cost });
const settle = (s: LimiterStore, reservation: string, actual: number): Promise<SettleResult> => s.settle!({ reservation, actual });

/** Rules far below the global limit: only they bind. */
const ruled = (rules: Rule[]): LimiterSpec =>
  spec({ limit: 100_000, windowMs: 1000, burst: 5000, reserve: 1, probationMs: 0, rules: resolveRules(rules) });
const RULES: Rule[] = [
  // a bucket of 30 (limit / 20), refilled slowly: one unit per ~105 ms
  { name: 'tb', limit: 600, windowMs: 60_000, algorithm: 'token-bucket' },
  { name: 'sw', limit: 30, windowMs: 1000, algorithm: 'sliding-window' },
  { name: 'fw', limit: 30, windowMs: 1000, algorithm: 'fixed-window' },
];

const step = (over: Partial<WalkStep>): WalkStep => ({ dtMs: 0, group: 'a', cost: 1, actualPct: 100, plain: true, settleFirst: false, ...over });

export function describeSettleCases(name: string, setup: () => Promise<StoreHarness>): void {
  describe(`settle: ${name}`, () => {
    const { bind: bindAll, harness } = useHarnessOf(setup);
    const bind = (clock: ManualClock, s: LimiterSpec, handles?: number): LimiterStore[] => bindAll(clock, s, handles).stores;
    /** A store of the harness on the walk's clock. */
    const walker = (s: LimiterSpec, clock: () => number): LimiterStore => harness().make(clock)[0]!.bind(s);

    test('the bound: a refund after the bucket refilled while the units were reserved lifts no window over the limit', async () => {
      // 16 reserved at 0 and never used; the bucket refills while they are parked, a burst drains it, the refund
      // lands, and checks go on to the end of the window: [500, 1500) must hold at most limit = 100
      const steps = [
        step({ plain: false, cost: 16, actualPct: 0 }),
        step({ dtMs: 500 }),
        ...Array.from({ length: 24 }, () => step({})),
        step({ settleFirst: true }),
        ...Array.from({ length: 20 }, () => step({})),
        ...Array.from({ length: 90 }, () => step({ dtMs: 11 })),
      ];
      const result = await settleWalk({ spec: small(), inFlight: 1, steps }, walker);
      expect(result.refunds).toBe(1);
      expect(result.worst).toBeLessThanOrEqual(0);
    });

    test('the bound under random estimates and actual costs (seeded walks)', async () => {
      const rnd = seededRandom(23);
      const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
      let refunds = 0;
      let debts = 0;
      for (let run = 0; run < 8; run++) {
        const s = small({ limit: 40 + Math.floor(rnd() * 100), burst: 8 + Math.floor(rnd() * 20) });
        const steps = Array.from({ length: 120 }, () =>
          step({
            dtMs: pick([0, 0, 0, 3, 10, 40, 400]),
            group: pick(['a', 'a', 'b']),
            cost: 1 + Math.floor(rnd() * (s.burst - s.reserve)),
            actualPct: pick([0, 50, 100, 150, 300, -1]),
            plain: rnd() < 0.4,
            settleFirst: rnd() < 0.25,
          }),
        );
        const result = await settleWalk({ spec: s, inFlight: 1 + (run % 3), steps }, walker);
        expect(result.worst).toBeLessThanOrEqual(0);
        refunds += result.refunds;
        debts += result.debts;
      }
      // the walks did give back and charge
      expect(refunds).toBeGreaterThan(0);
      expect(debts).toBeGreaterThan(0);
    });

    test('a refund gives the unused units back at once: a check that did not fit before fits after', async () => {
      const clock = new ManualClock();
      const [s] = bind(clock, small());
      const r = await s!.admit(reserving('g', 16));
      expect(r.allowed).toBe(true);
      expect(r.reservation).toMatch(/^\d+-\d+$/);
      expect((await s!.admit(plain('g', 10))).allowed).toBe(false);
      expect(await settle(s!, r.reservation!, 4)).toEqual({ status: 'settled', refunded: 12, debt: 0 });
      expect((await s!.admit(plain('g', 10))).allowed).toBe(true);
    });

    test('a check without settle carries no reservation; a denied one reserves nothing', async () => {
      const clock = new ManualClock();
      const [s] = bind(clock, small());
      expect((await s!.admit(plain('g', 1))).reservation).toBeUndefined();
      expect((await s!.admit(reserving('g', 18))).allowed).toBe(true);
      const denied = await s!.admit(reserving('g', 10));
      expect(denied.allowed).toBe(false);
      expect(denied.reservation).toBeUndefined();
    });

    test('at most once: a second settle, from this handle or another, gives nothing back', async () => {
      const clock = new ManualClock();
      const [a, b] = bind(clock, small(), 2);
      const r = await a!.admit(reserving('g', 16));
      const both = await Promise.all([settle(a!, r.reservation!, 0), settle(b!, r.reservation!, 0)]);
      expect(both.map((x) => x.status).sort()).toEqual(['settled', 'settled-before']);
      expect(both.find((x) => x.status === 'settled-before')).toEqual({ status: 'settled-before', refunded: 0, debt: 0 });
      // one refund of 16: 4 + 16 = 20 units; a third settle adds none
      expect(await settle(b!, r.reservation!, 0)).toEqual({ status: 'settled-before', refunded: 0, debt: 0 });
      expect((await a!.admit(plain('g', 18))).allowed).toBe(true);
      expect((await a!.admit(plain('g', 3))).allowed).toBe(false);
    });

    test('with the adaptive limit: a reservation and the limit in force keep their own state (one groups hash)', async () => {
      const clock = new ManualClock();
      const adaptive = { min: 20, max: 200, increase: 5, decrease: 0.5, intervalMs: 1000 };
      const [s] = bind(clock, spec({ limit: 100, windowMs: 1000, burst: 10, reserve: 2, probationMs: 0, adaptive }));
      const r = await s!.admit(reserving('g', 4));
      expect(r.allowed).toBe(true);
      // the parked units are not the adaptive state: the report reads the configured limit and cuts it
      expect(await s!.report!({ outcome: 'throttled', retryAfterMs: 0 })).toEqual({ limit: 50, change: -1 });
      const settled = await settle(s!, r.reservation!, 1);
      expect(settled.status).toBe('settled');
      expect(settled.refunded).toBeLessThanOrEqual(3);
      // and settling wrote the parking state, not over the limit in force
      expect((await s!.report!({ outcome: 'read', retryAfterMs: 0 })).limit).toBe(50);
      expect((await s!.admit(reserving('g', 1))).allowed).toBe(true);
    });

    test('an unknown id settles nothing', async () => {
      const clock = new ManualClock();
      const [s] = bind(clock, small());
      expect(await settle(s!, '1-1', 0)).toEqual({ status: 'unknown', refunded: 0, debt: 0 });
    });

    test('an overage is debt: the global bucket and the group go below zero, and Retry-After counts it', async () => {
      const clock = new ManualClock();
      const [s] = bind(clock, small());
      const r = await s!.admit(reserving('g', 4));
      // 20 − 4 − 30 = −14 units
      expect(await settle(s!, r.reservation!, 34)).toEqual({ status: 'settled', refunded: 0, debt: 30 });
      const after = await s!.admit(plain('g', 1));
      expect(after.allowed).toBe(false);
      // 15 units to come back before one fits: (14 + 1) · T
      expect(after.retryAfterMs).toBeGreaterThanOrEqual(Math.floor(15 * T_MS));
      // the upstream took the units: another group waits too, until the bucket is back above zero
      expect((await s!.admit(plain('h', 1))).allowed).toBe(false);
      clock.advance(Math.ceil(15 * T_MS) + 1);
      expect((await s!.admit(plain('h', 1))).allowed).toBe(true);
    });

    test('reserved units are parked until settled: the bucket refills only to burst − parked', async () => {
      const clock = new ManualClock();
      const [s] = bind(clock, small());
      const r = await s!.admit(reserving('g', 16));
      clock.advance(900);
      // a long wait refills 4 units at most while 16 are parked
      expect((await s!.admit(plain('h', 5))).allowed).toBe(false);
      expect(await settle(s!, r.reservation!, 16)).toEqual({ status: 'settled', refunded: 0, debt: 0 });
      clock.advance(20 * T_MS);
      expect((await s!.admit(plain('h', 5))).allowed).toBe(true);
    });

    test('the refill parking held back comes back at settle: a reservation used in full costs its cost, no more', async () => {
      const clock = new ManualClock();
      const [s] = bind(clock, small());
      const r = await s!.admit(reserving('g', 16));
      // 900 ms refill the bucket many times over; with 16 parked it holds 4 and the refill of 16 is held back
      clock.advance(900);
      expect(await settle(s!, r.reservation!, 16)).toEqual({ status: 'settled', refunded: 0, debt: 0 });
      // as if 16 had been spent at 0 without a reservation: the bucket is full again, at once, and no fuller
      expect((await s!.admit(plain('h', 20))).allowed).toBe(true);
      expect((await s!.admit(plain('h', 1))).allowed).toBe(false);
    });

    test('a job enqueued with settle reserves its cost at its claim; its settle gives the unused units back', async () => {
      const clock = new ManualClock();
      const [s] = bind(clock, small());
      const job = (group: string, settle: boolean) =>
        s!.queue.enqueue({ group, weight: 1, cost: 8, type: 'work', payload: '{}', maxBacklog: 10, delayMs: 0, maxDeferMs: 60_000, settle });
      await job('g', true);
      await job('h', false);
      await s!.queue.dispatch({ readyMax: 10, moveMax: 10, promoteMax: 10, scanMax: 10 });
      const { claimed } = await s!.queue.claimMany(60_000, 10);
      expect(claimed.map((c) => [c.group, typeof c.reservation])).toEqual([
        ['g', 'string'],
        ['h', 'undefined'],
      ]);
      // 20 − 8 − 8 left; the job that settles used 2 of its 8
      expect((await s!.admit(plain('x', 5))).allowed).toBe(false);
      expect(await settle(s!, claimed[0]!.reservation!, 2)).toEqual({ status: 'settled', refunded: 6, debt: 0 });
      expect(await settle(s!, claimed[0]!.reservation!, 2)).toMatchObject({ status: 'settled-before', refunded: 0 });
      expect((await s!.admit(plain('x', 10))).allowed).toBe(true);
      expect((await s!.admit(plain('x', 1))).allowed).toBe(false);
    });

    test('a job that settles above its estimate charges the overage as debt to every rule that spent', async () => {
      const clock = new ManualClock();
      const [s] = bind(clock, ruled(RULES));
      await s!.queue.enqueue({
        group: 'g',
        weight: 1,
        cost: 5,
        type: 'work',
        payload: '{}',
        maxBacklog: 10,
        delayMs: 0,
        maxDeferMs: 60_000,
        settle: true,
      });
      await s!.queue.dispatch({ readyMax: 10, moveMax: 10, promoteMax: 10, scanMax: 10 });
      const [c] = (await s!.queue.claimMany(60_000, 10)).claimed;
      expect(await settle(s!, c!.reservation!, 30)).toEqual({ status: 'settled', refunded: 0, debt: 25 });
      // the sliding and fixed windows of 30 are spent: the group waits for them
      const d = await s!.admit(plain('g', 1));
      expect(d.allowed).toBe(false);
      expect(['tb', 'sw', 'fw']).toContain(d.policy);
    });

    test('a reservation lapses after the longest window: it counts at its estimate, settle answers unknown', async () => {
      const clock = new ManualClock();
      const [s] = bind(clock, small());
      const r = await s!.admit(reserving('g', 16));
      clock.advance(999);
      expect((await s!.admit(plain('h', 5))).allowed).toBe(false);
      clock.advance(1);
      // lapsed: its units are no longer parked (the bucket is full again) and nothing comes back
      expect(await settle(s!, r.reservation!, 0)).toEqual({ status: 'unknown', refunded: 0, debt: 0 });
      expect((await s!.admit(plain('h', 18))).allowed).toBe(true);
      expect((await s!.admit(plain('h', 3))).allowed).toBe(false);
    });

    test('lapsed records are swept: many reservations never settled leave nothing parked', async () => {
      const clock = new ManualClock();
      const [s] = bind(clock, small({ limit: 10_000, burst: 1000, reserve: 2 }));
      for (let i = 0; i < 25; i++) expect((await s!.admit(reserving(`g${i % 3}`, 1))).allowed).toBe(true);
      clock.advance(1000);
      for (let i = 0; i < 4; i++) await s!.admit(reserving('x', 1));
      expect((await s!.admit(plain('y', 990))).allowed).toBe(true);
    });

    test('one settle reaches every rule that spent: a refund at once gives all back, a debt charges all', async () => {
      const clock = new ManualClock();
      const [s] = bind(clock, ruled(RULES));
      const r = await s!.admit(reserving('g', 10));
      expect(r.rules!.map((x) => x.remaining)).toEqual([20, 20, 20]);
      expect(await settle(s!, r.reservation!, 0)).toMatchObject({ status: 'settled', refunded: 10 });
      expect((await s!.peek({ group: 'g', weight: 1 })).rules!.map((x) => x.remaining)).toEqual([30, 30, 30]);
      const r2 = await s!.admit(reserving('g', 10));
      expect(await settle(s!, r2.reservation!, 25)).toMatchObject({ status: 'settled', debt: 15 });
      expect((await s!.peek({ group: 'g', weight: 1 })).rules!.map((x) => x.remaining)).toEqual([5, 5, 5]);
      // the rule that waits longest names the denial
      const denied = await s!.admit(plain('g', 6));
      expect(denied.allowed).toBe(false);
    });

    test('a refund never gives back units of a window that has passed, nor a token bucket the group used since', async () => {
      const clock = new ManualClock(); // T0 is a whole second: fixed windows start on it
      const [s] = bind(clock, ruled(RULES));
      clock.advance(950);
      const r = await s!.admit(reserving('g', 10));
      // another check of the group since: the token bucket keeps the units spent
      clock.advance(1);
      await s!.admit(plain('g', 1));
      clock.advance(99); // the fixed window has rolled; the sliding window still holds the units (two sub-windows later)
      const before = (await s!.peek({ group: 'g', weight: 1 })).rules!.map((x) => x.remaining);
      expect(await settle(s!, r.reservation!, 0)).toMatchObject({ status: 'settled', refunded: 10 });
      const after = (await s!.peek({ group: 'g', weight: 1 })).rules!.map((x) => x.remaining);
      expect(after[0]).toBe(before[0]); // token bucket: touched since
      expect(after[1]).toBe(before[1]! + 10); // sliding: t1's sub-window is still in the window
      expect(after[2]).toBe(before[2]); // fixed: a new window, already whole
      clock.advance(60_000);
      const late = await s!.admit(reserving('g', 10));
      // the hold is the longest window (the token bucket's minute): then it lapses
      clock.advance(60_000);
      expect((await settle(s!, late.reservation!, 0)).status).toBe('unknown');
    });

    test('a reservation of a plan settles under that plan’s rules', async () => {
      const clock = new ManualClock();
      const base = ruled(RULES);
      const planRules = resolveRules([{ name: 'p', limit: 12, windowMs: 1000, algorithm: 'fixed-window' }]);
      const [s] = bind(clock, { ...base, plans: new Map([['pro', { name: 'pro', weight: undefined, rules: planRules, concurrency: undefined }]]) });
      const r = await s!.admit(reserving('g', 10, 'pro'));
      expect(r.reservation).toMatch(/^\d+-\d+\.pro$/);
      expect(await settle(s!, r.reservation!, 1)).toMatchObject({ status: 'settled', refunded: 9 });
      expect((await s!.peek({ group: 'g', weight: 1, plan: 'pro' })).rules!.map((x) => x.remaining)).toEqual([11]);
    });

    test('with a concurrency cap: the reservation rides on the admission that took the slot', async () => {
      const clock = new ManualClock();
      const [s] = bind(clock, small({ concurrencyLeaseMs: 5000 }));
      const r = await s!.admit({ ...reserving('g', 8), concurrency: 1 });
      expect(r.reservation).toEqual(expect.any(String));
      expect(r.concurrency!.lease).toEqual(expect.any(String));
      expect(await settle(s!, r.reservation!, 2)).toMatchObject({ status: 'settled', refunded: 6 });
    });
  });
}
