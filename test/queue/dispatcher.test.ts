/**
 * Dispatcher against both queue stores: moves jobs within readyMax, one busy dispatcher and idle spares
 * with take-over, reclaim of expired leases; and (with a wrapper that scripts replies or faults around a
 * real MemoryQueue) that it sleeps exactly wakeMs, never spins, and survives store errors.
 */
import { Dispatcher, type DispatcherOptions } from '../../src/queue/dispatcher';
import { reportClaimed } from '../../src/queue/claim-signal';
import { MemoryQueue } from '../../src/memory/memory-queue';
import { Worker } from '../../src/queue/worker';
import type { DispatchOptions, DispatchResult, QueueStore } from '../../src/types';
import { withScheduler } from '../../src/util/scheduler';
import { ManualScheduler, settle } from '../helpers/manual-scheduler';
import { enqueue, looseSpec, memoryBackend, redisBackend, until, type QueueKit } from './fixtures/queues';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const silent = { warn: () => undefined, error: () => undefined };

describe.each([memoryBackend(), redisBackend()])('Dispatcher on $name', (backend) => {
  let kit: QueueKit;
  const dispatchers: Dispatcher[] = [];
  const make = (options: Partial<ConstructorParameters<typeof Dispatcher>[0]> = {}) => {
    const d = new Dispatcher({ limiter: { queue: kit.queue }, pollMs: 20, logger: silent, ...options });
    dispatchers.push(d);
    return d;
  };

  beforeAll(() => backend.setup());
  afterAll(() => backend.teardown());
  beforeEach(() => {
    kit = backend.make();
  });
  afterEach(async () => {
    await Promise.all(dispatchers.splice(0).map((d) => d.stop()));
  });

  test('moves due jobs to ready, never beyond readyMax, and more as workers take them', async () => {
    for (let i = 0; i < 30; i++) await enqueue(kit.queue);
    const d = make({ readyMax: 10, moveMax: 4 });
    const moved: number[] = [];
    d.on('dispatched', (r) => moved.push(r.moved));
    d.start();
    await until('ready is full', async () => (await kit.queue.counts()).ready === 10);
    await sleep(100);
    expect((await kit.queue.counts()).ready).toBe(10);
    expect(Math.max(...moved)).toBeLessThanOrEqual(4);
    for (let i = 0; i < 10; i++) await kit.queue.claim(60_000);
    await until('ready refilled', async () => (await kit.queue.counts()).ready === 10);
    const counts = await kit.queue.counts();
    expect(counts.ready + counts.pending + counts.delayed + counts.active).toBe(30);
  });

  test('a full ready list emptied by another process is refilled within ms, not once per pollMs', async () => {
    for (let i = 0; i < 300; i++) await enqueue(kit.queue);
    // pollMs 5 s: refilling only at the poll would take 30 × 5 s for 300 jobs through a 10-job ready list.
    make({ readyMax: 10, pollMs: 5000 }).start();
    const started = Date.now();
    let claimed = 0;
    while (claimed < 300 && Date.now() - started < 20_000) {
      // Plain store calls, as a worker of another process would make: no in-process wake-up.
      const batch = (await kit.queue.claimMany(60_000, 10)).claimed;
      claimed += batch.length;
      if (batch.length === 0) await sleep(2);
    }
    expect(claimed).toBe(300);
    expect(Date.now() - started).toBeLessThan(15_000); // about 30 × ≤ 100 ms
  }, 30_000);

  test('claims by a Worker of this process wake the dispatcher as soon as half a batch of room is free', async () => {
    for (let i = 0; i < 200; i++) await enqueue(kit.queue);
    const d = make({ readyMax: 20, moveMax: 20, pollMs: 60_000 });
    let moves = 0;
    d.on('dispatched', () => void (moves += 1));
    d.start();
    await until('ready is full', async () => (await kit.queue.counts()).ready === 20);
    const worker = new Worker({
      limiter: { queue: kit.queue },
      handlers: { echo: () => undefined },
      concurrency: 5,
      logger: silent,
      idleWaitMs: 200,
    });
    worker.start();
    try {
      await until('all 200 done', async () => (await kit.queue.counts()).completed === 200, 20_000);
    } finally {
      await worker.close(1000);
    }
    // Refilled in batches of about half the list (10 claims per wake-up), not one dispatch per claim.
    expect(moves).toBeLessThanOrEqual(100);
  }, 30_000);

  test('a job deferred into the future is moved when due, not before', async () => {
    const id = await enqueue(kit.queue, { delayMs: 300 });
    make().start();
    await sleep(100);
    expect((await kit.queue.getJob(id))?.state).toBe('delayed');
    await until('ready', async () => (await kit.queue.getJob(id))?.state === 'ready', 5000);
  });

  test('one dispatcher is busy, the spare stays idle and takes over when the busy one stops', async () => {
    const a = make({ leaseMs: 300 });
    const b = make({ leaseMs: 300 });
    a.start();
    await until('a leads', () => a.isLeader);
    b.start();
    await sleep(400);
    expect(a.isLeader).toBe(true);
    expect(b.isLeader).toBe(false);
    const stoppedAt = Date.now();
    await a.stop();
    await until('b takes over', () => b.isLeader, 5000);
    // The bound in docs/reference.md (Dispatcher leaseMs): leaseMs × 7/6 after the busy one's last renewal (plus scheduling slack).
    expect(Date.now() - stoppedAt).toBeLessThan(300 * (7 / 6) + 500);
    const id = await enqueue(kit.queue);
    await until('b moves work', async () => (await kit.queue.getJob(id))?.state === 'ready', 5000);
  });

  test('returns jobs of a crashed worker (expired lease) to the queue, then to dead after maxStalls', async () => {
    const id = await enqueue(kit.queue);
    await kit.queue.dispatch({ readyMax: 10, moveMax: 10, promoteMax: 10, scanMax: 10 });
    expect((await kit.queue.claim(100))?.id).toBe(id);
    const d = make({ reclaimIntervalMs: 20, maxStalls: 1 });
    const reclaimed: Array<{ requeued: number; dead: number }> = [];
    d.on('reclaimed', (r) => reclaimed.push(r));
    d.start();
    await until('requeued', async () => (await kit.queue.getJob(id))?.state === 'ready');
    expect(await kit.queue.getJob(id)).toMatchObject({ stalls: 1, attempts: 0 });
    expect((await kit.queue.claim(100))?.id).toBe(id); // crashes again
    await until('dead', async () => (await kit.queue.getJob(id))?.state === 'dead');
    expect(reclaimed).toEqual([
      { requeued: 1, dead: 0 },
      { requeued: 0, dead: 1 },
    ]);
  });
});

/** The lease on a manual scheduler, with a MemoryQueue on the same clock: the take-over bound, exactly. */
describe('Dispatcher lease on a manual scheduler', () => {
  test("a spare takes over within leaseMs × 7/6 of the busy one's last renewal, and not before its lease ran out", async () => {
    const clock = new ManualScheduler();
    const queue = new MemoryQueue({ spec: looseSpec('lease'), clock: () => clock.now() });
    const granted: Array<{ owner: string; at: number }> = [];
    const recording = Object.assign(Object.create(queue) as MemoryQueue, {
      acquireDispatcherLease: async (owner: string, ttlMs: number) => {
        const ok = await queue.acquireDispatcherLease(owner, ttlMs);
        if (ok) granted.push({ owner, at: clock.now() });
        return ok;
      },
    });
    const make = () => new Dispatcher(withScheduler({ limiter: { queue: recording }, leaseMs: 300, pollMs: 20, logger: silent }, clock));
    const a = make().start();
    await clock.advance(10); // b's tries are out of step with a's renewals
    const b = make().start();
    await clock.advance(390);
    expect([a.isLeader, b.isLeader]).toEqual([true, false]);
    // Renewed every leaseMs / 3.
    expect(granted.map((g) => (g.owner === a.id ? g.at - granted[0]!.at : -1))).toEqual([0, 100, 200, 300, 400]);
    await a.stop();
    await clock.until('b takes over', () => b.isLeader, 5000);
    const lastRenewal = granted.filter((g) => g.owner === a.id).pop()!.at;
    const takenAt = granted.find((g) => g.owner === b.id)!.at;
    expect(takenAt - lastRenewal).toBeGreaterThan(300);
    expect(takenAt - lastRenewal).toBeLessThanOrEqual(300 * (7 / 6));
    await b.stop();
  });
});

/** A real MemoryQueue whose dispatch() replies or faults are scripted, to watch the loop's timing on `clock`. */
function scripted(clock: ManualScheduler, replies: Array<Partial<DispatchResult> | Error>): { queue: QueueStore; calls: number[] } {
  const real = memoryBackend().make().queue;
  const calls: number[] = [];
  const queue = Object.create(real) as QueueStore;
  queue.dispatch = async (options: DispatchOptions) => {
    calls.push(clock.now());
    const next = replies.shift();
    if (next instanceof Error) throw next;
    if (next === undefined) return real.dispatch(options);
    return { moved: 0, promoted: 0, wakeMs: -1, readyFull: false, ...next };
  };
  return { queue, calls };
}

const gapsOf = (calls: number[]): number[] => calls.slice(1).map((t, i) => t - calls[i]!);

/** The loop on a manual scheduler: time moves only when the test advances it, so the gaps are exact. */
describe('Dispatcher loop timing', () => {
  const started: Dispatcher[] = [];
  let clock: ManualScheduler;
  beforeEach(() => {
    clock = new ManualScheduler();
  });
  afterEach(async () => {
    await Promise.all(started.splice(0).map((d) => d.stop()));
  });
  const start = (queue: QueueStore, options: Omit<DispatcherOptions, 'limiter'>) => {
    const d = new Dispatcher(withScheduler({ limiter: { queue }, reclaimIntervalMs: 60_000, leaseMs: 60_000, logger: silent, ...options }, clock));
    started.push(d);
    d.start();
    return d;
  };

  test('sleeps exactly wakeMs: 0 → at once, > 0 → that long, -1 → pollMs; a full ready list far less than pollMs', async () => {
    const { queue, calls } = scripted(clock, [{ wakeMs: 0 }, { wakeMs: 300 }, { wakeMs: -1 }, { wakeMs: -1, readyFull: true }]);
    start(queue, { pollMs: 600 });
    await clock.until('5 calls', () => calls.length >= 5);
    // wakeMs 0, wakeMs 300, -1 (pollMs), then ready full: the shortest full-list sleep (workers may empty it any moment).
    expect(gapsOf(calls)).toEqual([0, 300, 600, 5]);
  });

  test('on a ready list that stays full it backs off (no spinning), but looks again far sooner than pollMs', async () => {
    const { queue, calls } = scripted(
      clock,
      Array.from({ length: 1000 }, () => ({ wakeMs: -1, readyFull: true })),
    );
    start(queue, { pollMs: 10_000 });
    await clock.advance(1500);
    // 5, 10, 20, 40, 80, then every 100 ms; pollMs would allow one call.
    expect(gapsOf(calls)).toEqual([5, 10, 20, 40, 80, ...Array<number>(13).fill(100)]);
  });

  test('claims reported by this process wake it from a full-list sleep once half a batch is free', async () => {
    const { queue, calls } = scripted(
      clock,
      Array.from({ length: 1000 }, () => ({ wakeMs: -1, readyFull: true })),
    );
    start(queue, { readyMax: 20, moveMax: 20, pollMs: 10_000 });
    await clock.advance(400); // backed off to its longest full-list sleep (100 ms)
    const before = calls.length;
    for (let i = 0; i < 20; i++) {
      reportClaimed(queue, 4);
      await settle();
      expect(calls.length).toBe(before + i); // 4 claims: less than half a batch, it sleeps on
      reportClaimed(queue, 6); // 10 claims: half of readyMax 20
      await settle();
      expect(calls.length).toBe(before + i + 1);
    }
    // 20 wake-ups with no time passing: each came from the claims, none from a timer.
    expect(clock.now()).toBe(1_800_000_000_400);
  });

  test('stop(timeoutMs) returns in time even when a store call never resolves', async () => {
    const { queue, calls } = scripted(clock, []);
    const hung = Object.create(queue) as QueueStore;
    hung.dispatch = (options) => (calls.length >= 1 ? new Promise(() => undefined) : queue.dispatch(options));
    const d = start(hung, { pollMs: 20 });
    await clock.until('dispatch hangs', () => calls.length >= 1);
    await clock.advance(50);
    let stopped = false;
    void d.stop(200).then(() => void (stopped = true));
    await clock.advance(199);
    expect(stopped).toBe(false);
    await clock.advance(1);
    expect(stopped).toBe(true);
    expect(d.isLeader).toBe(false);
  });

  test('never spins on an empty queue', async () => {
    const { queue, calls } = scripted(clock, []);
    start(queue, { pollMs: 50 });
    await clock.advance(500);
    // Once per pollMs: at 0, 50, …, 500.
    expect(gapsOf(calls)).toEqual(Array<number>(10).fill(50));
  });

  test('store errors are emitted and retried with backoff; the loop goes on', async () => {
    const { queue, calls } = scripted(clock, [new Error('down 1'), new Error('down 2'), new Error('down 3'), { moved: 1, wakeMs: -1 }]);
    const d = start(queue, { pollMs: 50 });
    const errors: unknown[] = [];
    d.on('error', (e) => errors.push(e));
    await clock.until('recovered', () => calls.length >= 5);
    expect(errors.map(String)).toEqual(['Error: down 1', 'Error: down 2', 'Error: down 3']);
    // Backoff: at least 10 ms after each failure, at most 100 ms × 2^(n − 1) after the nth (full jitter).
    const gaps = gapsOf(calls);
    gaps.slice(0, 3).forEach((gap, i) => {
      expect(gap).toBeGreaterThanOrEqual(10);
      expect(gap).toBeLessThanOrEqual(100 * 2 ** i);
    });
  });

  test('with no error listener, errors go to the logger instead of crashing', async () => {
    const { queue, calls } = scripted(clock, [new Error('down')]);
    const logged: string[] = [];
    start(queue, { pollMs: 20, logger: { warn: (m) => logged.push(m) } });
    await clock.until('a second call', () => calls.length >= 2);
    expect(logged[0]).toMatch(/dispatcher: Error: down/);
  });

  test('bad options throw a coded ConfigError', () => {
    const { queue } = scripted(clock, []);
    expect(() => new Dispatcher({ limiter: { queue }, readyMax: 0 })).toThrow(expect.objectContaining({ code: 'ERR_BL_READY_MAX' }));
    expect(() => new Dispatcher({ limiter: { queue }, pollMs: -5 })).toThrow(/pollMs/);
    expect(() => new Dispatcher({ limiter: null as never })).toThrow(/limiter/);
  });
});
