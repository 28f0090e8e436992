/**
 * describeQueueStore(name, make): the one conformance suite every QueueStore passes (MemoryQueue,
 * RedisQueue). Time is an injected clock the suite moves by hand; no speed assertions.
 */
import type { EnqueueInput, EnqueueResult } from '../../src/types';
import type { QueueStore } from '../../src/types';
import type { Clock, LimiterSpec } from '../../src/types';
import { SPEC_DEFAULTS } from '../helpers/spec';

export interface TestQueue extends QueueStore {
  enqueue(input: EnqueueInput): Promise<EnqueueResult>;
}

export interface QueueFactoryOptions {
  readonly clock: Clock;
  /** A budget far above what the suite uses: these tests are about the queue, not the limit. */
  readonly spec: LimiterSpec;
  readonly maxDead?: number;
}

export type MakeQueue = (options: QueueFactoryOptions) => Promise<TestQueue>;

const T0 = 1_700_000_000_000;
let specSeq = 0;
const looseSpec = (): LimiterSpec => ({
  ...SPEC_DEFAULTS,
  name: `queue-suite-${process.pid}-${++specSeq}`,
  limit: 1_000_000,
  windowMs: 1000,
  burst: 100_000,
  reserve: 1,
  idleMs: 600_000,
  epochMs: 250,
  sustained: false,
});
const LOOSE = { readyMax: 1000, moveMax: 1000, promoteMax: 1000, scanMax: 1000 };
const ERROR = (maxAttempts: number, delayMs = 1000) => ({ kind: 'error', error: 'boom', delayMs, maxAttempts }) as const;

export function describeQueueStore(name: string, make: MakeQueue): void {
  describe(`QueueStore conformance: ${name}`, () => {
    let now = T0;
    let q: TestQueue;
    const clock = () => now;
    const job = (over: Partial<EnqueueInput> = {}): EnqueueInput => ({
      group: 'g1',
      weight: 1,
      cost: 1,
      type: 'email',
      payload: JSON.stringify({ to: 'a@b.c', n: 1 }),
      maxBacklog: 1000,
      delayMs: 0,
      maxDeferMs: 3_600_000,
      ...over,
    });
    const add = async (over: Partial<EnqueueInput> = {}): Promise<string> => {
      const r = await q.enqueue(job(over));
      if (r.status !== 'written') throw new Error(`expected written, got ${r.status}`);
      return r.id;
    };
    /** Enqueues one job due now, dispatches it and claims it. */
    const claimOne = async (leaseMs = 10_000, over: Partial<EnqueueInput> = {}) => {
      const id = await add(over);
      await q.dispatch(LOOSE);
      const claimed = await q.claim(leaseMs);
      expect(claimed?.id).toBe(id);
      return claimed!;
    };

    beforeEach(async () => {
      now = T0;
      q = await make({ clock, spec: looseSpec() });
    });

    test('a job goes delayed → pending/ready → active → completed, with its payload and result', async () => {
      const id = await add({ delayMs: 5000, group: 'tenant a' });
      expect(await q.getJob(id)).toMatchObject({ id, state: 'delayed', runAt: T0 + 5000, attempts: 0, group: 'tenant a', type: 'email' });
      expect((await q.dispatch(LOOSE)).moved).toBe(0);
      expect(await q.claim(1000)).toBeNull();
      now += 5000;
      const d = await q.dispatch(LOOSE);
      expect(d).toMatchObject({ moved: 1, promoted: 1, readyFull: false });
      expect((await q.getJob(id))?.state).toBe('ready');
      const c = await q.claim(30_000);
      expect(c).toMatchObject({ id, type: 'email', group: 'tenant a', attempts: 0, leaseUntil: now + 30_000 });
      expect(JSON.parse(c!.payload)).toEqual({ to: 'a@b.c', n: 1 });
      expect((await q.getJob(id))?.state).toBe('active');
      expect(await q.complete(id, c!.token, JSON.stringify({ ok: [1, 2] }), 60_000)).toBe(true);
      expect(await q.getJob(id)).toMatchObject({ state: 'completed', result: { ok: [1, 2] }, finishedAt: now, payload: { to: 'a@b.c', n: 1 } });
      expect(await q.counts()).toEqual({ delayed: 0, pending: 0, ready: 0, active: 0, completed: 1, dead: 0, oldestWaitingMs: 0 });
    });

    test('claim on an empty ready list is null; unknown ids are null or false', async () => {
      expect(await q.claim(1000)).toBeNull();
      expect(await q.getJob('nope')).toBeNull();
      expect(await q.complete('nope', 'x', undefined, 1000)).toBe(false);
      expect(await q.fail('nope', 'x', ERROR(3))).toEqual({ state: 'stale' });
      expect(await q.extendLease('nope', 'x', 1000)).toBe(false);
      expect(await q.retryDead('nope')).toBe(false);
      expect(await q.removeDead('nope')).toBe(false);
    });

    test('a stale or wrong token changes nothing', async () => {
      const c = await claimOne();
      expect(await q.complete(c.id, `${c.token}x`, undefined, 1000)).toBe(false);
      expect(await q.fail(c.id, 'other', ERROR(3))).toEqual({ state: 'stale' });
      expect(await q.extendLease(c.id, 'other', 1000)).toBe(false);
      expect((await q.getJob(c.id))?.state).toBe('active');
      expect(await q.complete(c.id, c.token, undefined, 1000)).toBe(true);
      expect(await q.complete(c.id, c.token, undefined, 1000)).toBe(false);
      expect(await q.fail(c.id, c.token, ERROR(3))).toEqual({ state: 'stale' });
    });

    test('claimMany takes up to max jobs in ready order, each under its own lease and token', async () => {
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push(await add());
      await q.dispatch(LOOSE);
      const { claimed: batch } = await q.claimMany(2000, 3);
      expect(batch.map((c) => c.id)).toEqual(ids.slice(0, 3));
      expect(new Set(batch.map((c) => c.token)).size).toBe(3);
      for (const c of batch) expect(c).toMatchObject({ leaseUntil: now + 2000, attempts: 0, type: 'email' });
      expect((await q.claimMany(2000, 10)).claimed.map((c) => c.id)).toEqual(ids.slice(3));
      expect(await q.claimMany(2000, 10)).toEqual({ claimed: [], wakeMs: -1 });
      expect(await q.counts()).toMatchObject({ ready: 0, active: 5 });
      // Each lease is fenced on its own.
      expect(await q.complete(batch[0]!.id, batch[1]!.token, undefined, 1000)).toBe(false);
      expect(await q.complete(batch[0]!.id, batch[0]!.token, undefined, 1000)).toBe(true);
      now += 2001;
      expect(await q.reclaimExpired(3, 100)).toEqual({ requeued: 4, dead: 0 });
    });

    test('claimMany clamps max to at least one', async () => {
      await add();
      await add();
      await q.dispatch(LOOSE);
      expect((await q.claimMany(1000, 0)).claimed).toHaveLength(1);
      expect((await q.claimMany(1000, Number.NaN)).claimed).toHaveLength(1);
    });

    test('completeAndClaim acknowledges and claims the next job with a new lease and token, in one call', async () => {
      const c = await claimOne(1000);
      const next = await add({ group: 'g2', payload: '{"n":2}' });
      await q.dispatch(LOOSE);
      now += 10;
      const r = await q.completeAndClaim(c.id, c.token, '"done"', 60_000, 5000, 1);
      expect(r.completed).toBe(true);
      expect(r.claimed).toHaveLength(1);
      expect(r.claimed[0]).toMatchObject({ id: next, group: 'g2', payload: '{"n":2}', attempts: 0, leaseUntil: now + 5000 });
      expect(r.claimed[0]!.token).not.toBe(c.token);
      expect(await q.getJob(c.id)).toMatchObject({ state: 'completed', result: 'done', finishedAt: now });
      expect((await q.getJob(next))?.state).toBe('active');
      // The new lease is fenced like any claim: a wrong token is refused, the right one accepted.
      expect(await q.extendLease(next, c.token, 1000)).toBe(false);
      expect(await q.extendLease(next, r.claimed[0]!.token, 1000)).toBe(true);
      // Nothing ready: the completion still happens, the claim part is empty.
      const last = await q.completeAndClaim(next, r.claimed[0]!.token, undefined, 0, 5000, 1);
      expect(last).toEqual({ completed: true, claimed: [], wakeMs: -1 });
      expect(await q.getJob(next)).toBeNull();
      expect(await q.counts()).toMatchObject({ ready: 0, active: 0, completed: 1 });
    });

    test('completeAndClaim with a stale token changes nothing of that job, and still claims', async () => {
      const c = await claimOne(1000);
      now += 1001;
      expect(await q.reclaimExpired(3, 100)).toEqual({ requeued: 1, dead: 0 });
      await q.dispatch(LOOSE);
      // The stale holder acknowledges: refused, but it takes the next ready job, which is its old job again.
      const r = await q.completeAndClaim(c.id, c.token, '"late"', 60_000, 1000, 1);
      expect(r.completed).toBe(false);
      expect(r.claimed.map((j) => j.id)).toEqual([c.id]);
      expect(r.claimed[0]!.token).not.toBe(c.token);
      expect(await q.getJob(c.id)).toMatchObject({ state: 'active', stalls: 1 });
      expect((await q.getJob(c.id))?.result).toBeUndefined();
      expect(await q.complete(c.id, c.token, undefined, 1000)).toBe(false);
      expect(await q.complete(c.id, r.claimed[0]!.token, undefined, 1000)).toBe(true);
      // An unknown job: stale, and nothing to claim.
      expect(await q.completeAndClaim('nope', 'x', undefined, 1000, 1000, 5)).toEqual({ completed: false, claimed: [], wakeMs: -1 });
    });

    test('an error retries after delayMs with attempts + 1, then dies at maxAttempts', async () => {
      const c = await claimOne();
      expect(await q.fail(c.id, c.token, ERROR(2, 2000))).toEqual({ state: 'retrying' });
      expect(await q.getJob(c.id)).toMatchObject({ state: 'delayed', attempts: 1, runAt: now + 2000, error: 'boom' });
      now += 2000;
      await q.dispatch(LOOSE);
      const again = await q.claim(1000);
      expect(again).toMatchObject({ id: c.id, attempts: 1 });
      expect(again!.token).not.toBe(c.token);
      expect(await q.fail(c.id, again!.token, { kind: 'error', error: 'final', delayMs: 10, maxAttempts: 2 })).toEqual({ state: 'dead' });
      expect(await q.getJob(c.id)).toMatchObject({ state: 'dead', attempts: 2, error: 'final', finishedAt: now });
      expect((await q.listDead(0, 10)).map((j) => j.id)).toEqual([c.id]);
      // The dead job no longer counts against the group's backlog.
      expect((await q.enqueue(job({ maxBacklog: 1 }))).status).toBe('written');
    });

    test('a snooze is not an attempt and has its own cap', async () => {
      let c = await claimOne();
      expect(await q.fail(c.id, c.token, { kind: 'snooze', delayMs: 500, maxSnoozes: 1 })).toEqual({ state: 'snoozed' });
      expect(await q.getJob(c.id)).toMatchObject({ state: 'delayed', attempts: 0, snoozes: 1, runAt: now + 500 });
      now += 500;
      await q.dispatch(LOOSE);
      c = (await q.claim(1000))!;
      expect(await q.fail(c.id, c.token, { kind: 'snooze', delayMs: 500, maxSnoozes: 1 })).toEqual({ state: 'dead' });
      expect(await q.getJob(c.id)).toMatchObject({ state: 'dead', attempts: 0, snoozes: 2 });
    });

    test('an expired lease is reclaimed to pending as a stall; the old holder is fenced off; stalls → dead', async () => {
      const c = await claimOne(1000);
      expect(await q.reclaimExpired(1, 100)).toEqual({ requeued: 0, dead: 0 });
      now += 1001;
      expect(await q.reclaimExpired(1, 100)).toEqual({ requeued: 1, dead: 0 });
      expect(await q.getJob(c.id)).toMatchObject({ state: 'pending', stalls: 1, attempts: 0 });
      expect(await q.complete(c.id, c.token, undefined, 1000)).toBe(false);
      await q.dispatch(LOOSE);
      const again = (await q.claim(1000))!;
      expect(again.id).toBe(c.id);
      now += 1001;
      expect(await q.reclaimExpired(1, 100)).toEqual({ requeued: 0, dead: 1 });
      expect(await q.getJob(c.id)).toMatchObject({ state: 'dead', stalls: 2 });
      expect(await q.extendLease(c.id, again.token, 1000)).toBe(false);
    });

    test('extendLease moves the deadline for the holder', async () => {
      const c = await claimOne(1000);
      now += 800;
      expect(await q.extendLease(c.id, c.token, 1000)).toBe(true);
      now += 800;
      expect(await q.reclaimExpired(1, 100)).toEqual({ requeued: 0, dead: 0 });
      now += 201;
      expect(await q.reclaimExpired(1, 100)).toEqual({ requeued: 1, dead: 0 });
    });

    test('reclaim handles at most `max` leases per call', async () => {
      for (let i = 0; i < 5; i++) await claimOne(1000);
      now += 1001;
      expect((await q.reclaimExpired(3, 2)).requeued).toBe(2);
      expect((await q.reclaimExpired(3, 100)).requeued).toBe(3);
    });

    test('completed records are kept keepMs, then trimmed; keepMs 0 keeps nothing', async () => {
      const a = await claimOne();
      await q.complete(a.id, a.token, undefined, 5000);
      const b = await claimOne();
      await q.complete(b.id, b.token, '"r"', 0);
      expect(await q.getJob(b.id)).toBeNull();
      now += 4999;
      expect((await q.getJob(a.id))?.state).toBe('completed');
      now += 1;
      expect(await q.getJob(a.id)).toBeNull();
      expect((await q.counts()).completed).toBe(0);
    });

    test('counts always add up to the jobs written (minus trimmed)', async () => {
      const ids: string[] = [];
      for (let i = 0; i < 12; i++) ids.push(await add({ group: `g${i % 3}`, delayMs: i < 2 ? 60_000 : 0 }));
      await q.dispatch({ readyMax: 6, moveMax: 100, promoteMax: 100, scanMax: 100 });
      const c1 = (await q.claim(1000))!;
      const c2 = (await q.claim(1000))!;
      const c3 = (await q.claim(1000))!;
      await q.complete(c1.id, c1.token, undefined, 60_000);
      await q.fail(c2.id, c2.token, ERROR(1));
      const { oldestWaitingMs: _age, ...n } = await q.counts();
      expect(n).toEqual({ delayed: 2, pending: 4, ready: 3, active: 1, completed: 1, dead: 1 });
      expect(Object.values(n).reduce((s, x) => s + x, 0)).toBe(12);
      expect((await q.getJob(c3.id))?.state).toBe('active');
    });

    test('an idempotency key returns the existing job, and is freed with its record', async () => {
      const first = await q.enqueue(job({ idempotencyKey: 'req-1', delayMs: 100 }));
      const again = await q.enqueue(job({ idempotencyKey: 'req-1', delayMs: 9999 }));
      expect(first.status).toBe('written');
      expect(again).toEqual({ status: 'duplicate', id: (first as { id: string }).id, runAt: T0 + 100 });
      expect((await q.counts()).delayed).toBe(1);
      now += 100;
      await q.dispatch(LOOSE);
      const c = (await q.claim(1000))!;
      await q.complete(c.id, c.token, undefined, 0);
      const third = await q.enqueue(job({ idempotencyKey: 'req-1' }));
      expect(third.status).toBe('written');
      expect((third as { id: string }).id).not.toBe(c.id);
    });

    test('maxBacklog per group and maxDeferMs are enforced', async () => {
      await add({ group: 'x', maxBacklog: 2 });
      await add({ group: 'x', maxBacklog: 2 });
      expect(await q.enqueue(job({ group: 'x', maxBacklog: 2 }))).toEqual({ status: 'backlog-full' });
      expect((await q.enqueue(job({ group: 'y', maxBacklog: 2 }))).status).toBe('written');
      expect(await q.enqueue(job({ group: 'y', delayMs: 1001, maxDeferMs: 1000 }))).toEqual({ status: 'defer-horizon' });
      await q.dispatch(LOOSE);
      const c = (await q.claim(1000))!;
      expect(c.group).toBe('x');
      await q.complete(c.id, c.token, undefined, 1000);
      expect((await q.enqueue(job({ group: 'x', maxBacklog: 2 }))).status).toBe('written');
    });

    /** Three jobs that die 10 ms apart (one attempt each); their ids in order of death. */
    const killThree = async (): Promise<string[]> => {
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) {
        const c = await claimOne();
        now += 10;
        await q.fail(c.id, c.token, ERROR(1));
        ids.push(c.id);
      }
      return ids;
    };

    test('dead letters: listed newest first, retried with a fresh start, removed', async () => {
      const ids = await killThree();
      expect((await q.listDead(0, 10)).map((j) => j.id)).toEqual([...ids].reverse());
      expect((await q.listDead(1, 1)).map((j) => j.id)).toEqual([ids[1]]);
      expect(await q.listDead(5, 10)).toEqual([]);
      expect(await q.retryDead(ids[0]!)).toBe(true);
      expect(await q.retryDead(ids[0]!)).toBe(false);
      expect(await q.getJob(ids[0]!)).toMatchObject({ state: 'delayed', attempts: 0, runAt: now });
      expect(await q.removeDead(ids[1]!)).toBe(true);
      expect(await q.getJob(ids[1]!)).toBeNull();
      expect((await q.counts()).dead).toBe(1);
      await q.dispatch(LOOSE);
      const c = (await q.claim(1000))!;
      expect(c.id).toBe(ids[0]);
      expect(await q.complete(c.id, c.token, undefined, 1000)).toBe(true);
    });

    test('listDead floors and clamps its page, and refuses a page that is not a number', async () => {
      const ids = await killThree();
      const newestFirst = [...ids].reverse();
      expect((await q.listDead(-5, 2)).map((j) => j.id)).toEqual(newestFirst.slice(0, 2));
      expect((await q.listDead(1.9, 1.9)).map((j) => j.id)).toEqual([newestFirst[1]]);
      expect((await q.listDead(0, 0)).map((j) => j.id)).toEqual([newestFirst[0]]);
      expect((await q.listDead(0, -3)).map((j) => j.id)).toEqual([newestFirst[0]]);
      expect((await q.listDead(0, 1e9)).map((j) => j.id)).toEqual(newestFirst);
      await expect(q.listDead(Number.NaN, 10)).rejects.toMatchObject({ code: 'ERR_BL_DEAD_PAGE' });
      await expect(q.listDead(0, Number.NaN)).rejects.toMatchObject({ code: 'ERR_BL_DEAD_PAGE' });
      await expect(q.listDead(Infinity, 10)).rejects.toMatchObject({ code: 'ERR_BL_DEAD_PAGE' });
      await expect(q.listDead('1' as never, 10)).rejects.toMatchObject({ code: 'ERR_BL_DEAD_PAGE' });
    });

    test('dead records are capped at maxDead, oldest dropped', async () => {
      q = await make({ clock, spec: looseSpec(), maxDead: 2 });
      const ids: string[] = [];
      for (let i = 0; i < 4; i++) {
        const c = await claimOne();
        now += 10;
        await q.fail(c.id, c.token, ERROR(1));
        ids.push(c.id);
      }
      expect((await q.listDead(0, 10)).map((j) => j.id)).toEqual([ids[3], ids[2]]);
      expect(await q.getJob(ids[0]!)).toBeNull();
      expect((await q.counts()).dead).toBe(2);
    });

    test('dispatch never fills ready beyond readyMax and says when to call again', async () => {
      for (let i = 0; i < 10; i++) await add();
      await add({ delayMs: 700 });
      const d1 = await q.dispatch({ readyMax: 3, moveMax: 100, promoteMax: 100, scanMax: 100 });
      expect(d1).toMatchObject({ moved: 3, promoted: 10, readyFull: true });
      expect((await q.counts()).ready).toBe(3);
      const d2 = await q.dispatch({ readyMax: 3, moveMax: 100, promoteMax: 100, scanMax: 100 });
      expect(d2).toMatchObject({ moved: 0, readyFull: true });
      for (let i = 0; i < 3; i++) await q.claim(1000);
      const d3 = await q.dispatch({ readyMax: 100, moveMax: 100, promoteMax: 100, scanMax: 100 });
      expect(d3).toMatchObject({ moved: 7, readyFull: false, wakeMs: 700 });
      const d4 = await q.dispatch(LOOSE);
      expect(d4).toMatchObject({ moved: 0, promoted: 0, wakeMs: 700 });
      now += 700;
      expect(await q.dispatch(LOOSE)).toMatchObject({ moved: 1, wakeMs: -1 });
    });

    test('group concurrency: a capped group has at most `cap` jobs ready or running; the rest wait held, others pass', async () => {
      const a: string[] = [];
      for (let i = 0; i < 5; i++) a.push(await add({ group: 'capped', groupConcurrency: 2 }));
      const b: string[] = [];
      for (let i = 0; i < 3; i++) b.push(await add({ group: 'free' }));
      expect(await q.dispatch(LOOSE)).toMatchObject({ moved: 5, promoted: 8 });
      expect(await q.counts()).toMatchObject({ pending: 3, ready: 5 });
      expect((await q.getJob(a[2]!))?.state).toBe('pending');
      // Nothing more moves while the two slots are taken, however often the dispatcher runs.
      expect((await q.dispatch(LOOSE)).moved).toBe(0);
      const { claimed } = await q.claimMany(1000, 10);
      expect(claimed.map((c) => c.id).sort()).toEqual([...a.slice(0, 2), ...b].sort());
      // A completion frees a slot: the oldest held job of the group goes to ready in the same call.
      const first = claimed.find((c) => c.id === a[0])!;
      expect(await q.complete(first.id, first.token, undefined, 1000)).toBe(true);
      expect((await q.getJob(a[2]!))?.state).toBe('ready');
      expect(await q.counts()).toMatchObject({ pending: 2, ready: 1, active: 4 });
      // A failure frees one too (the job goes back to delayed, and counts again once it moves).
      const second = claimed.find((c) => c.id === a[1])!;
      expect(await q.fail(second.id, second.token, ERROR(3, 0))).toEqual({ state: 'retrying' });
      expect((await q.getJob(a[3]!))?.state).toBe('ready');
      // So does an expired lease (a crashed worker).
      const third = (await q.claimMany(1000, 10)).claimed;
      expect(third.map((c) => c.id).sort()).toEqual([a[2], a[3]].sort());
      now += 1001;
      expect(await q.reclaimExpired(3, 100)).toMatchObject({ requeued: 5 });
      // The last held one took a reclaimed slot; the requeued and the retried ones: never more than 2 at once.
      await q.dispatch(LOOSE);
      const states = await Promise.all(a.slice(1).map(async (id) => (await q.getJob(id))?.state));
      expect(states.filter((s) => s === 'ready')).toHaveLength(2);
      expect(await q.counts()).toMatchObject({ ready: 2 + 3, pending: 2, delayed: 0 });
    });

    test('group concurrency: a capped group piled up at the head of pending does not hold up a later group', async () => {
      // The slow group's jobs and a busy group's get interleaved tags; the busy ones move and advance the
      // virtual time, so a group arriving later is tagged behind all 29 slow jobs still waiting.
      for (let i = 0; i < 30; i++) {
        await add({ group: 'slow', groupConcurrency: 1 });
        await add({ group: 'busy' });
      }
      expect((await q.dispatch(LOOSE)).moved).toBe(31);
      expect((await q.claimMany(1000, 100)).claimed).toHaveLength(31);
      now += 10;
      const late = await add({ group: 'late' });
      // A scan of 8 per call: the slow group's 29 waiting jobs are moved out of the way (held), not rescanned.
      const small = { readyMax: 100, moveMax: 100, promoteMax: 100, scanMax: 8 };
      let moved = 0;
      for (let i = 0; i < 6 && moved === 0; i++) moved = (await q.dispatch(small)).moved;
      expect((await q.getJob(late))?.state).toBe('ready');
      expect(await q.counts()).toMatchObject({ ready: 1, active: 31, pending: 29 });
    });

    test('hostile group ids and payloads round-trip', async () => {
      const group = 'a b\n{x}:y 😀 \u0000 end';
      const payload = JSON.stringify({ s: 'quote " backslash \\ slash / ☃', arr: [], obj: {}, n: 1.5 });
      const c = await claimOne(1000, { group, payload, weight: 3, cost: 2 });
      expect(c.group).toBe(group);
      expect(c.payload).toBe(payload);
      expect((await q.getJob(c.id))?.group).toBe(group);
    });

    test('hostile group ids survive the whole lease: renewal, completion with a result, the backlog freed', async () => {
      const group = 'a b\n{x}:y 😀 \u0000 end ';
      const c = await claimOne(1000, { group, maxBacklog: 1 });
      expect(await q.enqueue(job({ group, maxBacklog: 1 }))).toEqual({ status: 'backlog-full' });
      expect(await q.extendLease(c.id, c.token, 5000)).toBe(true);
      const result = JSON.stringify({ s: 'quote " backslash \\ slash / ☃ "state":"waiting"', n: [1] });
      expect(await q.complete(c.id, c.token, result, 60_000)).toBe(true);
      expect(await q.getJob(c.id)).toMatchObject({ state: 'completed', group, result: JSON.parse(result) as unknown, finishedAt: now });
      expect((await q.enqueue(job({ group, maxBacklog: 1 }))).status).toBe('written');
    });

    test('a job that failed once, then completes: its error is dropped, its attempts kept', async () => {
      const c = await claimOne();
      expect(await q.fail(c.id, c.token, ERROR(3, 0))).toEqual({ state: 'retrying' });
      await q.dispatch(LOOSE);
      const again = (await q.claim(1000))!;
      expect(again).toMatchObject({ id: c.id, attempts: 1 });
      expect(await q.getJob(c.id)).toMatchObject({ state: 'active', error: 'boom' });
      now += 5;
      expect(await q.complete(again.id, again.token, '7', 60_000)).toBe(true);
      const info = await q.getJob(c.id);
      expect(info).toMatchObject({ state: 'completed', attempts: 1, result: 7, finishedAt: now });
      expect(info?.error).toBeUndefined();
    });

    test('a payload that looks like record fields does not confuse the store', async () => {
      const payload = JSON.stringify({ state: 'waiting', '"state":"waiting"': '"error":"x"', idem: 'k', result: 1 });
      const c = await claimOne(1000, { payload, idempotencyKey: 'tricky' });
      expect(c.payload).toBe(payload);
      expect(await q.complete(c.id, c.token, undefined, 0)).toBe(true);
      expect(await q.getJob(c.id)).toBeNull();
      expect((await q.enqueue(job({ idempotencyKey: 'tricky' }))).status).toBe('written');
    });

    test('the dispatcher lease: one owner at a time, renewable, free after its ttl', async () => {
      expect(await q.acquireDispatcherLease('a', 5000)).toBe(true);
      expect(await q.acquireDispatcherLease('b', 5000)).toBe(false);
      expect(await q.acquireDispatcherLease('a', 5000)).toBe(true);
    });

    test('waitForReady resolves after its timeout when nothing comes, and early when a job is moved', async () => {
      const started = Date.now();
      await q.waitForReady(150);
      expect(Date.now() - started).toBeGreaterThanOrEqual(100);
      await add();
      const waiting = q.waitForReady(20_000);
      await new Promise((r) => setTimeout(r, 50));
      await q.dispatch(LOOSE);
      const t = Date.now();
      await waiting;
      expect(Date.now() - t).toBeLessThan(10_000);
    });
  });
}
