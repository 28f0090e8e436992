/**
 * describeDefer(name, makeStore): defer-on-admit through a bound LimiterStore (admission + queue in one
 * state), the same on both stores. Injected clock; one call decides and, when denied, writes the job.
 */
import type { AdmitInput, Clock, LimiterSpec, LimiterStore, Store } from '../../src/types';
import { SPEC_DEFAULTS } from '../helpers/spec';

const T0 = 1_700_000_000_000;
let seq = 0;
const spec = (): LimiterSpec => ({
  ...SPEC_DEFAULTS,
  name: `defer-${process.pid}-${++seq}`,
  limit: 10,
  windowMs: 1000,
  burst: 2,
  reserve: 1,
  idleMs: 60_000,
  epochMs: 250,
  sustained: false,
});

export function describeDefer(name: string, makeStore: (clock: Clock) => Store): void {
  describe(`defer on admit: ${name}`, () => {
    let now = T0;
    let limiter: LimiterStore;
    const input = (over: Partial<NonNullable<AdmitInput['defer']>> = {}, group = 'g'): AdmitInput => ({
      group,
      weight: 1,
      cost: 1,
      defer: { type: 'report', payload: JSON.stringify({ q: group }), maxBacklog: 100, maxDeferMs: 3_600_000, ...over },
    });
    const exhaust = async (group = 'g'): Promise<void> => {
      for (let i = 0; i < 10; i++) if (!(await limiter.admit({ group, weight: 1, cost: 1 })).allowed) return;
      throw new Error('never denied');
    };

    beforeEach(() => {
      now = T0;
      limiter = makeStore(() => now).bind(spec());
    });
    afterEach(async () => {
      await limiter.destroy();
      await limiter.close?.();
    });

    test('allowed requests write no job; a denied one is due at once, promised within one guaranteed interval', async () => {
      const first = await limiter.admit(input());
      expect(first.allowed).toBe(true);
      expect(first.job).toBeUndefined();
      await exhaust();
      const d = await limiter.admit(input());
      expect(d).toMatchObject({ allowed: false, reason: 'limit' });
      expect(d.job).toMatchObject({ duplicate: false });
      // alone in the limiter: guaranteed interval = T = W / (L − b + 1) = 1000 / 9 ms
      expect(d.job!.runAt).toBe(d.at + Math.ceil(1000 / 9));
      expect(await limiter.queue.getJob(d.job!.id)).toMatchObject({
        state: 'delayed',
        type: 'report',
        group: 'g',
        payload: { q: 'g' },
        runAt: d.job!.runAt,
      });
      expect(await limiter.queue.counts()).toMatchObject({ delayed: 1 });
    });

    test('deferred jobs of one group get distinct, increasing slots', async () => {
      await exhaust();
      const runAts: number[] = [];
      for (let i = 0; i < 5; i++) runAts.push((await limiter.admit(input())).job!.runAt);
      for (let i = 1; i < runAts.length; i++) expect(runAts[i]!).toBeGreaterThan(runAts[i - 1]!);
    });

    test('an idempotency key returns the same job as a duplicate, without deciding again', async () => {
      await exhaust();
      const a = await limiter.admit(input({ idempotencyKey: 'k1' }));
      now += 5000; // the limit has room again, yet the retried request must not run a second time
      const b = await limiter.admit(input({ idempotencyKey: 'k1' }));
      expect(b).toMatchObject({ allowed: false, job: { id: a.job!.id, runAt: a.job!.runAt, duplicate: true } });
      expect((await limiter.queue.counts()).delayed).toBe(1);
    });

    test('a full backlog and a slot beyond maxDeferMs are denied without a job', async () => {
      await exhaust();
      expect((await limiter.admit(input({ maxBacklog: 2 }))).job).toBeDefined();
      expect((await limiter.admit(input({ maxBacklog: 2 }))).job).toBeDefined();
      const full = await limiter.admit(input({ maxBacklog: 2 }));
      expect(full).toMatchObject({ allowed: false, reason: 'backlog-full' });
      expect(full.job).toBeUndefined();
      const far = await limiter.admit(input({ maxDeferMs: 1 }, 'g'));
      expect(far).toMatchObject({ allowed: false, reason: 'defer-horizon' });
      expect(far.job).toBeUndefined();
      expect((await limiter.queue.counts()).delayed).toBe(2);
    });

    test('a deferred job is moved to ready at once and starts when the budget allows, within its promise', async () => {
      await exhaust();
      const d = await limiter.admit(input());
      const opts = { readyMax: 10, moveMax: 10, promoteMax: 10, scanMax: 10 };
      // due at once: the move costs nothing, the start spends the budget, so the claim waits for it
      expect((await limiter.queue.dispatch(opts)).moved).toBe(1);
      const early = await limiter.queue.claimMany(1000, 1);
      expect(early.claimed).toEqual([]);
      expect(early.wakeMs).toBeGreaterThan(0);
      expect(early.wakeMs).toBeLessThanOrEqual(d.job!.runAt - now);
      expect((await limiter.queue.getJob(d.job!.id))?.state).toBe('ready');
      now += early.wakeMs;
      let c = null;
      for (let i = 0; i < 20 && !c; i++) {
        const r = await limiter.queue.claimMany(1000, 1);
        c = r.claimed[0] ?? null;
        if (!c) now += Math.max(1, r.wakeMs);
      }
      expect(c?.id).toBe(d.job!.id);
      expect(now).toBeLessThanOrEqual(d.job!.runAt);
      expect(await limiter.queue.complete(c!.id, c!.token, '"done"', 60_000)).toBe(true);
      expect(await limiter.queue.getJob(c!.id)).toMatchObject({ state: 'completed', result: 'done' });
    });

    test('the backlog slot is freed when the job completes', async () => {
      await exhaust();
      const d = await limiter.admit(input({ maxBacklog: 1 }));
      expect((await limiter.admit(input({ maxBacklog: 1 }))).reason).toBe('backlog-full');
      now = d.job!.runAt + 10_000;
      await limiter.queue.dispatch({ readyMax: 10, moveMax: 10, promoteMax: 10, scanMax: 10 });
      const c = (await limiter.queue.claim(1000))!;
      await limiter.queue.complete(c.id, c.token, undefined, 1000);
      await exhaust();
      expect((await limiter.admit(input({ maxBacklog: 1 }))).job).toBeDefined();
    });
  });
}
