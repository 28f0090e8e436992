/**
 * Conformance cases for `destroy()` and the bound store's queue: the queue is one object for the life of the
 * binding, and destroy leaves it as a fresh limiter's (no job, dead letter, idempotency key, job sequence or
 * dispatcher lease left), for this handle and for every other handle of the same limiter.
 */
import type { EnqueueInput } from '../../src/types';
import { ManualClock, spec, useHarness, type StoreHarness } from './store-suite';

const job = (group: string, over: Partial<EnqueueInput> = {}): EnqueueInput => ({
  group,
  weight: 1,
  cost: 1,
  type: 't',
  payload: '{}',
  maxBacklog: 100,
  delayMs: 0,
  maxDeferMs: 1e9,
  ...over,
});
const MOVE = { readyMax: 100, moveMax: 100, promoteMax: 100, scanMax: 100 };
const EMPTY = { delayed: 0, pending: 0, ready: 0, active: 0, completed: 0, dead: 0, oldestWaitingMs: 0 };

export function describeDestroyCases(name: string, setup: () => Promise<StoreHarness>): void {
  describe(`destroy and the bound queue: ${name}`, () => {
    const bind = useHarness(setup);

    test('destroy empties the queue in place: the same object, as a fresh limiter’s, on every handle', async () => {
      const clock = new ManualClock();
      const s = spec();
      const [st, other] = bind(clock, s, 2);
      const queue = st!.queue;
      // one job of each kind: dead, running, ready, delayed, keyed; and a dispatcher lease
      const dead = await queue.enqueue(job('a'));
      await queue.dispatch(MOVE);
      const [run] = (await queue.claimMany(60_000, 1)).claimed;
      expect(await queue.fail(run!.id, run!.token, { kind: 'error', error: 'x', delayMs: 0, maxAttempts: 1 })).toEqual({ state: 'dead' });
      await queue.enqueue(job('a'));
      await queue.dispatch(MOVE);
      await queue.claimMany(60_000, 1);
      await queue.enqueue(job('b'));
      await queue.enqueue(job('b', { delayMs: 5000 }));
      await queue.enqueue(job('c', { idempotencyKey: 'k' }));
      await queue.dispatch(MOVE);
      expect(await queue.acquireDispatcherLease('first', 60_000)).toBe(true);
      expect(await other!.queue.counts()).not.toEqual(EMPTY);

      await st!.destroy();

      expect(st!.queue).toBe(queue);
      for (const q of [queue, other!.queue]) {
        expect(await q.counts()).toEqual(EMPTY);
        expect(await q.groupCounts('a')).toMatchObject({ waiting: 0 });
        expect(await q.listDead(0, 10)).toEqual([]);
        expect(await q.getJob(dead.status === 'written' ? dead.id : '')).toBeNull();
      }
      expect(await queue.acquireDispatcherLease('second', 60_000)).toBe(true);
      // the job sequence starts over and the idempotency key is free: the same reply as a fresh limiter's
      const [fresh] = bind(clock, spec());
      const again = await other!.queue.enqueue(job('c', { idempotencyKey: 'k' }));
      expect(again).toEqual(await fresh!.queue.enqueue(job('c', { idempotencyKey: 'k' })));
      expect(again.status).toBe('written');
      await queue.dispatch(MOVE);
      expect((await queue.claimMany(60_000, 10)).claimed.map((c) => c.group)).toEqual(['c']);
    });
  });
}
