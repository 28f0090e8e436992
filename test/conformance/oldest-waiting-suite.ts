/**
 * Conformance cases for the queue's oldest waiting job (counts().oldestWaitingMs, groupCounts(g).oldestWaitingMs):
 * a job waits from the time it is due until it starts; a job not yet due is not waiting. On an injected clock,
 * same harness as store-suite.ts.
 */
import type { EnqueueInput } from '../../src/types';
import type { LimiterStore } from '../../src/types';
import { ManualClock, spec, useHarness, type StoreHarness } from './store-suite';

const job = (group: string, delayMs = 0): EnqueueInput => ({
  group,
  weight: 1,
  cost: 1,
  type: 't',
  payload: '{}',
  maxBacklog: 100,
  delayMs,
  maxDeferMs: 1e9,
});
const MOVE = { readyMax: 100, moveMax: 100, promoteMax: 100, scanMax: 100 };

export function describeOldestWaitingCases(name: string, setup: () => Promise<StoreHarness>): void {
  describe(`oldest waiting job: ${name}`, () => {
    const bindAll = useHarness(setup);
    const bind = (clock: ManualClock): LimiterStore => bindAll(clock, spec())[0]!;
    const oldest = async (st: LimiterStore, group?: string): Promise<number> =>
      (group === undefined ? await st.queue.counts() : await st.queue.groupCounts(group)).oldestWaitingMs;

    test('the age grows with the clock, in every waiting state; a delayed job counts only once it is due', async () => {
      const clock = new ManualClock();
      const st = bind(clock);
      expect(await oldest(st)).toBe(0);
      await st.queue.enqueue(job('a'));
      await st.queue.enqueue(job('later', 5000));
      expect(await oldest(st)).toBe(0);
      clock.advance(100);
      expect(await oldest(st)).toBe(100);
      expect(await oldest(st, 'a')).toBe(100);
      expect(await oldest(st, 'later')).toBe(0); // due in 4.9 s: not waiting
      expect(await oldest(st, 'nobody')).toBe(0);
      await st.queue.dispatch(MOVE); // a: delayed → ready; still not started
      clock.advance(1000);
      expect(await oldest(st)).toBe(1100);
      clock.advance(4900); // later is due now
      expect(await oldest(st, 'later')).toBe(1000);
      expect(await oldest(st)).toBe(6000);
    });

    test('the age drops when the oldest job starts, and to 0 when every due job has started', async () => {
      const clock = new ManualClock();
      const st = bind(clock);
      await st.queue.enqueue(job('first'));
      clock.advance(300);
      await st.queue.enqueue(job('second'));
      clock.advance(200);
      expect(await oldest(st)).toBe(500);
      await st.queue.dispatch(MOVE);
      const started = await st.queue.claimMany(60_000, 1);
      expect(started.claimed.map((j) => j.group)).toEqual(['first']);
      expect(await oldest(st)).toBe(200);
      expect(await oldest(st, 'first')).toBe(0);
      expect(await oldest(st, 'second')).toBe(200);
      await st.queue.claimMany(60_000, 1);
      expect(await oldest(st)).toBe(0);
      expect(await st.queue.counts()).toMatchObject({ active: 2, oldestWaitingMs: 0 });
    });

    test('a retried job waits from its retry time, a stalled one from its reclaim; a cancelled one no more', async () => {
      const clock = new ManualClock();
      const st = bind(clock);
      await st.queue.enqueue(job('r'));
      await st.queue.dispatch(MOVE);
      const [run] = (await st.queue.claimMany(100, 1)).claimed;
      expect(await st.queue.fail(run!.id, run!.token, { kind: 'error', error: 'x', delayMs: 1000, maxAttempts: 5 })).toEqual({ state: 'retrying' });
      clock.advance(999);
      expect(await oldest(st)).toBe(0); // its retry is not due yet
      clock.advance(51);
      expect(await oldest(st, 'r')).toBe(50);
      await st.queue.dispatch(MOVE);
      await st.queue.claimMany(100, 1);
      clock.advance(150); // the lease (100 ms) expired: back to pending, waiting from the reclaim
      expect(await st.queue.reclaimExpired(5, 10)).toEqual({ requeued: 1, dead: 0 });
      clock.advance(30);
      expect(await oldest(st)).toBe(30);
      expect(await st.queue.cancel(run!.id)).toBe(true);
      expect(await oldest(st)).toBe(0);
      expect(await oldest(st, 'r')).toBe(0);
    });
  });
}
