/**
 * Worker against both queue stores: handlers, retries with backoff, snoozes, dead letters, unknown types,
 * concurrency, lease renewal and loss, graceful close, and the ready → start wake-up.
 */
import { Dispatcher } from '../../src/queue/dispatcher';
import { RetryLaterError } from '../../src/queue/retry-later-error';
import { Worker, type JobHandler, type WorkerJob, type WorkerOptions } from '../../src/queue/worker';
import { ACK_ATTEMPTS } from '../../src/queue/job-run';
import { MemoryQueue } from '../../src/memory/memory-queue';
import type { QueueStore } from '../../src/types';
import { withScheduler } from '../../src/util/scheduler';
import { ManualScheduler, settle } from '../helpers/manual-scheduler';
import { delegating, enqueue, looseSpec, memoryBackend, redisBackend, until, type QueueKit } from './fixtures/queues';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const silent = { warn: () => undefined, error: () => undefined };

describe.each([memoryBackend(), redisBackend()])('Worker on $name', (backend) => {
  let kit: QueueKit;
  const stoppers: Array<() => Promise<void>> = [];

  beforeAll(() => backend.setup());
  afterAll(() => backend.teardown());
  beforeEach(() => {
    kit = backend.make();
  });
  afterEach(async () => {
    for (const stop of stoppers.splice(0).reverse()) await stop();
  });

  /** A dispatcher (fast polling) and a worker over the same queue. */
  const run = (handlers: Record<string, JobHandler>, options: Partial<WorkerOptions> = {}) => {
    const limiter = { queue: kit.queue };
    const dispatcher = new Dispatcher({ limiter, pollMs: 20, logger: silent });
    const worker = new Worker({ limiter, handlers, backoff: () => 0, idleWaitMs: 200, logger: silent, ...options });
    dispatcher.start();
    worker.start();
    stoppers.push(
      () => dispatcher.stop(),
      () => worker.close(300),
    );
    return { worker, dispatcher };
  };

  test('runs the handler with the parsed payload and keeps its result on the job', async () => {
    const id = await enqueue(kit.queue, { type: 'echo', group: 'tenant a', payload: JSON.stringify({ n: 7 }) });
    const seen: WorkerJob[] = [];
    const { worker } = run({ echo: async (job) => (seen.push(job), { doubled: (job.payload as { n: number }).n * 2 }) });
    const completed = new Promise<[WorkerJob, unknown]>((resolve) => worker.once('completed', (job, result) => resolve([job, result])));
    const [job, result] = await completed;
    expect(job).toEqual({ id, type: 'echo', group: 'tenant a', payload: { n: 7 }, attempts: 0, startedAt: expect.any(Number) });
    expect(result).toEqual({ doubled: 14 });
    expect(seen).toHaveLength(1);
    const info = await kit.queue.getJob(id);
    expect(info).toMatchObject({ state: 'completed', attempts: 0, result: { doubled: 14 } });
    // startedAt is the claim, on the store's clock: after the job was written, before it finished.
    expect(job.startedAt).toBeGreaterThanOrEqual(info!.createdAt);
    expect(job.startedAt).toBeLessThanOrEqual(info!.finishedAt!);
  });

  test('a throwing handler is retried with backoff, then dead after maxAttempts', async () => {
    const id = await enqueue(kit.queue, { type: 'flaky' });
    const attempts: number[] = [];
    const events: string[] = [];
    const { worker } = run(
      {
        flaky: async (job) => {
          attempts.push(job.attempts);
          throw new Error(`boom ${job.attempts}`);
        },
      },
      { maxAttempts: 3 },
    );
    worker.on('failed', () => events.push('failed'));
    worker.on('retrying', (_job, info) => events.push(`retrying:${info.kind}`));
    const dead = new Promise<unknown>((resolve) => worker.once('dead', (_job, error) => resolve(error)));
    expect(String(await dead)).toMatch(/boom 2/);
    expect(attempts).toEqual([0, 1, 2]);
    expect(events).toEqual(['failed', 'retrying:error', 'failed', 'retrying:error', 'failed']);
    expect(await kit.queue.getJob(id)).toMatchObject({ state: 'dead', attempts: 3, error: 'boom 2' });
  });

  test('the backoff delay is what the worker asks the store for', async () => {
    const id = await enqueue(kit.queue, { type: 'flaky' });
    const { worker } = run(
      {
        flaky: async () => {
          throw new Error('later');
        },
      },
      { backoff: (attempt) => attempt * 60_000 },
    );
    const retry = new Promise<number>((resolve) => worker.once('retrying', (_job, info) => resolve(info.delayMs)));
    expect(await retry).toBe(60_000);
    const info = await kit.queue.getJob(id);
    expect(info?.state).toBe('delayed');
    expect(info!.runAt - Date.now()).toBeGreaterThan(50_000);
  });

  test('RetryLaterError snoozes without counting an attempt, and has its own cap', async () => {
    const id = await enqueue(kit.queue, { type: 'upstream' });
    const runs: number[] = [];
    const { worker } = run(
      {
        upstream: async (job) => {
          runs.push(job.attempts);
          throw new RetryLaterError(0, 'upstream said 429');
        },
      },
      { maxSnoozes: 2 },
    );
    const failed = jest.fn();
    worker.on('failed', failed);
    const dead = new Promise<void>((resolve) => worker.once('dead', () => resolve()));
    await dead;
    expect(runs).toEqual([0, 0, 0]);
    expect(failed).not.toHaveBeenCalled();
    expect(await kit.queue.getJob(id)).toMatchObject({ state: 'dead', attempts: 0, snoozes: 3 });
  });

  test('a job of an unknown type fails with a clear error', async () => {
    const id = await enqueue(kit.queue, { type: 'nobody-handles-this' });
    const { worker } = run({ echo: async () => 1 }, { maxAttempts: 1 });
    const dead = new Promise<unknown>((resolve) => worker.once('dead', (_job, error) => resolve(error)));
    expect(await dead).toMatchObject({ code: 'ERR_BL_NO_HANDLER' });
    expect((await kit.queue.getJob(id))?.error).toMatch(/No handler for job type "nobody-handles-this".*known types: echo/);
  });

  test('never runs more than `concurrency` jobs at once, and runs that many', async () => {
    for (let i = 0; i < 9; i++) await enqueue(kit.queue, { type: 'slow' });
    let now = 0;
    let peak = 0;
    let done = 0;
    run(
      {
        slow: async () => {
          peak = Math.max(peak, ++now);
          await sleep(60);
          now -= 1;
          done += 1;
        },
      },
      { concurrency: 3 },
    );
    await until('9 jobs done', () => done === 9);
    expect(peak).toBe(3);
  });

  test('a lost lease aborts the handler signal and its late ack is refused', async () => {
    const id = await enqueue(kit.queue, { type: 'hang' });
    let signal: AbortSignal | undefined;
    const { worker } = run(
      {
        hang: (_job, s) =>
          new Promise((_resolve, reject) => {
            signal ??= s;
            s.addEventListener('abort', () => reject(s.reason));
          }),
      },
      { leaseMs: 300, maxStalls: 5 },
    );
    const errors: unknown[] = [];
    worker.on('error', (error) => errors.push(error));
    await until('the handler runs', () => signal !== undefined);
    kit.advance(10_000); // the store now sees the lease as expired
    expect(await kit.queue.reclaimExpired(5, 100)).toEqual({ requeued: 1, dead: 0 });
    await until('the handler is aborted', () => signal!.aborted);
    expect(signal!.reason).toMatchObject({ code: 'ERR_BL_LEASE_LOST' });
    await until('the loss is reported', () => errors.length > 0);
    expect(errors[0]).toMatchObject({ code: 'ERR_BL_LEASE_LOST' });
    // The job runs again (at-least-once); the stale run recorded nothing: no attempt, one stall.
    const info = await kit.queue.getJob(id);
    expect(info?.stalls).toBe(1);
    expect(info?.attempts).toBe(0);
  });

  test('a completion hands its slot to the next job in the same store call', async () => {
    for (let i = 0; i < 20; i++) await enqueue(kit.queue);
    await kit.queue.dispatch({ readyMax: 100, moveMax: 100, promoteMax: 100, scanMax: 100 });
    let claimedAlone = 0;
    let completeCalls = 0;
    const counting = delegating(kit.queue, {
      claimMany: async (...a: Parameters<typeof kit.queue.claimMany>) => {
        const result = await kit.queue.claimMany(...a);
        claimedAlone += result.claimed.length;
        return result;
      },
      completeAndClaim: (...a: Parameters<typeof kit.queue.completeAndClaim>) => {
        completeCalls += 1;
        return kit.queue.completeAndClaim(...a);
      },
    });
    const worker = new Worker({
      limiter: { queue: counting },
      handlers: { echo: async () => 'ok' },
      concurrency: 2,
      idleWaitMs: 200,
      logger: silent,
    });
    let done = 0;
    worker.on('completed', () => void (done += 1));
    worker.start();
    stoppers.push(() => worker.close(300));
    await until('20 done', () => done === 20);
    expect((await kit.queue.counts()).completed).toBe(20);
    expect(completeCalls).toBe(20);
    // The first claim takes two jobs (one per slot); every other job came with a completion. (Empty looks
    // for work at the end are not counted: how many there are depends on timing.)
    expect(claimedAlone).toBe(2);
  });

  test('a job made ready wakes a blocked worker at once (not at the next poll)', async () => {
    const limiter = { queue: kit.queue };
    const startedAt: number[] = [];
    const worker = new Worker({ limiter, handlers: { echo: async () => void startedAt.push(Date.now()) }, idleWaitMs: 5000, logger: silent });
    worker.start();
    stoppers.push(() => worker.close(1000));
    await sleep(100); // the worker is now blocked in waitForReady
    const latencies: number[] = [];
    for (let i = 0; i < 5; i++) {
      await enqueue(kit.queue, { type: 'echo' });
      await kit.queue.dispatch({ readyMax: 100, moveMax: 100, promoteMax: 100, scanMax: 100 });
      const readyAt = Date.now();
      await until('the job starts', () => startedAt.length === i + 1, 15_000);
      latencies.push(startedAt[i]! - readyAt);
      await sleep(20);
    }
    // Well below idleWaitMs (5 s): the wake-up came from the store, not from a poll.
    expect(Math.max(...latencies)).toBeLessThan(2500);
    console.log(`${backend.name}: ready → start latency ms ${latencies.join(', ')}`);
  });
});

/**
 * The worker's timing on a manual scheduler, with a MemoryQueue on the same clock: lease renewal and close()
 * bounds are exact, whatever the machine's load. (The stores' lease operations are tested on both stores in
 * queue-store-suite.ts.)
 */
describe('Worker timing on a manual scheduler', () => {
  let clock: ManualScheduler;
  let queue: MemoryQueue;
  const workers: Worker[] = [];
  beforeEach(() => {
    clock = new ManualScheduler();
    queue = new MemoryQueue({ spec: looseSpec('manual'), clock: () => clock.now() });
  });
  afterEach(async () => {
    const closing = Promise.all(workers.splice(0).map((w) => w.close(300)));
    await clock.advance(2000);
    await closing;
  });
  const start = (handlers: Record<string, JobHandler>, options: Partial<WorkerOptions> = {}, store: QueueStore = queue) => {
    const worker = new Worker(
      withScheduler({ limiter: { queue: store }, handlers, backoff: () => 0, idleWaitMs: 200, logger: silent, ...options }, clock),
    );
    workers.push(worker);
    return worker.start();
  };
  const ready = async (over: Parameters<typeof enqueue>[1] = {}): Promise<string> => {
    const id = await enqueue(queue, over);
    await queue.dispatch({ readyMax: 100, moveMax: 100, promoteMax: 100, scanMax: 100 });
    return id;
  };

  test('renews the lease of a long job every leaseMs / 3, so it is not reclaimed as a stall', async () => {
    const id = await ready({ type: 'long' });
    let running = false;
    let finished = false;
    const renewals: number[] = [];
    const counting = Object.assign(Object.create(queue) as MemoryQueue, {
      extendLease: (...args: Parameters<MemoryQueue['extendLease']>) => (renewals.push(clock.now()), queue.extendLease(...args)),
    });
    start(
      {
        long: async () => {
          running = true;
          await clock.sleep(1200);
          finished = true;
        },
      },
      { leaseMs: 300 },
      counting,
    );
    await clock.until('the job runs', () => running);
    const startedAt = clock.now();
    let reclaimed = 0;
    while (!finished) {
      reclaimed += (await queue.reclaimExpired(1, 100)).requeued;
      await clock.advance(25);
    }
    expect(await queue.getJob(id)).toMatchObject({ state: 'completed', stalls: 0 });
    expect(reclaimed).toBe(0);
    // Every 100 ms while the handler ran (1200 ms; the renewal due as it returned is not sent).
    expect(renewals.map((t) => t - startedAt)).toEqual(Array.from({ length: 11 }, (_, i) => (i + 1) * 100));
  });

  test('a job that finishes after its lease renewals failed is still acknowledged while its token holds', async () => {
    const id = await ready({ type: 'long' });
    let failures = 0;
    // The store is unreachable for the first renewals (past the lease deadline), then back; nobody reclaimed the job.
    const flaky = Object.assign(Object.create(queue) as MemoryQueue, {
      extendLease: async (...args: Parameters<MemoryQueue['extendLease']>) => {
        if (failures < 6) {
          failures += 1;
          throw new Error('store unreachable');
        }
        return queue.extendLease(...args);
      },
    });
    let aborted = false;
    start(
      {
        long: async (_job, s) => {
          await clock.sleep(450);
          aborted = s.aborted;
          return 'done';
        },
      },
      { leaseMs: 150 },
      flaky,
    );
    await clock.advance(500);
    // Renewals at 50, 100 and 150 ms failed; at 150 the lease deadline had passed unrenewed: no more renewals.
    expect(failures).toBe(3);
    expect(aborted).toBe(true); // the handler was told its lease could not be renewed
    expect(await queue.getJob(id)).toMatchObject({ state: 'completed', result: 'done', stalls: 0 });
  });

  /** `queue` whose `method` throws for its first `failures` calls (after running them when `landed`), each call's time kept. */
  const refusing = <M extends 'fail' | 'completeAndClaim'>(method: M, failures: number, landed = false) => {
    const calls: number[] = [];
    const store = Object.assign(Object.create(queue) as MemoryQueue, {
      [method]: async (...args: unknown[]) => {
        calls.push(clock.now());
        const call = (queue[method] as (...a: unknown[]) => Promise<unknown>).bind(queue);
        if (calls.length > failures) return call(...args);
        if (landed) await call(...args);
        throw new Error('store unreachable');
      },
    });
    return { store, calls };
  };

  test("a failure's acknowledgement the store refuses is sent again with the same token, doubling the pause, until it lands", async () => {
    const id = await ready({ type: 'boom' });
    const { store, calls } = refusing('fail', 3);
    const errors: unknown[] = [];
    const retrying: string[] = [];
    const worker = start({ boom: async () => Promise.reject(new Error('upstream down')) }, { backoff: () => 5000 }, store);
    worker.on('error', (error) => void errors.push(error));
    worker.on('retrying', (job) => void retrying.push(job.id));
    await clock.until('the acknowledgement lands', () => retrying.length > 0);
    expect(calls.map((t) => t - calls[0]!)).toEqual([0, 100, 300, 700]);
    expect(errors).toHaveLength(3); // each refusal reported, none as a lost lease
    expect(retrying).toEqual([id]);
    expect(await queue.getJob(id)).toMatchObject({ state: 'delayed', attempts: 1, stalls: 0, error: 'upstream down' });
  });

  test('a failure the store keeps refusing is sent ACK_ATTEMPTS times, then left to its lease', async () => {
    const id = await ready({ type: 'boom' });
    const { store, calls } = refusing('fail', Infinity);
    const lost: unknown[] = [];
    const worker = start({ boom: async () => Promise.reject(new Error('upstream down')) }, { leaseMs: 60_000 }, store);
    worker.on('error', (error) => void lost.push(error));
    await clock.until('the worker gives up', () => calls.length === ACK_ATTEMPTS && lost.length === ACK_ATTEMPTS + 1);
    // 100, 200, 400, 800, 1600, then 2000 ms apart: about 7 s in all, the job still held by the run's lease.
    expect(calls.at(-1)! - calls[0]!).toBe(7100);
    expect(lost.at(-1)).toMatchObject({ code: 'ERR_BL_LEASE_LOST' });
    expect(await queue.getJob(id)).toMatchObject({ state: 'active', attempts: 0 });
    await clock.advance(5000);
    expect(calls).toHaveLength(ACK_ATTEMPTS);
  });

  test('a completion that landed but whose answer was lost: the repeat is refused, and a read finds it completed', async () => {
    const id = await ready({ type: 'echo' });
    const { store, calls } = refusing('completeAndClaim', 1, true);
    const completed: string[] = [];
    const errors: unknown[] = [];
    const worker = start({ echo: async () => 'done' }, {}, store);
    worker.on('completed', (job) => void completed.push(job.id));
    worker.on('error', (error) => void errors.push(error));
    await clock.until('the completion is known', () => completed.length > 0);
    expect(calls).toHaveLength(1); // the repeat only completes (no second claim)
    expect(errors).toHaveLength(1);
    expect(await queue.getJob(id)).toMatchObject({ state: 'completed', result: 'done', stalls: 0 });
  });

  test('close() lets a running job finish within the timeout, and claims nothing more', async () => {
    const first = await ready({ type: 'slow' });
    let started = 0;
    const worker = start({
      slow: async () => {
        started += 1;
        await clock.sleep(150);
        return 'ok';
      },
    });
    await clock.until('the first job runs', () => started === 1);
    const second = await ready({ type: 'slow' });
    const closing = worker.close(5000);
    await clock.advance(150);
    await closing;
    expect((await queue.getJob(first))?.state).toBe('completed');
    await clock.advance(1000);
    expect(started).toBe(1);
    expect((await queue.getJob(second))?.state).toBe('ready');
  });

  test('close() past its timeout aborts the handler and hands the job back (a snooze, not an attempt)', async () => {
    const id = await ready({ type: 'stubborn' });
    let running = false;
    const worker = start({
      stubborn: (_job, s) =>
        new Promise((_resolve, reject) => {
          running = true;
          s.addEventListener('abort', () => reject(s.reason));
        }),
    });
    await clock.until('the job runs', () => running);
    let closed = false;
    void worker.close(50).then(() => void (closed = true));
    await clock.advance(49);
    expect(closed).toBe(false);
    expect((await queue.getJob(id))?.state).toBe('active');
    await clock.advance(1);
    expect(closed).toBe(true);
    expect(await queue.getJob(id)).toMatchObject({ state: 'delayed', attempts: 0, snoozes: 1 });
  });

  test('close(timeoutMs) is bounded even when a claim never resolves; a job it hands over late goes back', async () => {
    let release: (() => void) | undefined;
    let hungClaims = 0;
    const hung = Object.assign(Object.create(queue) as MemoryQueue, {
      claimMany: (leaseMs: number, max: number) => {
        hungClaims += 1;
        // Hangs until released, then really claims (a reply that arrives after close()).
        return new Promise<void>((resolve) => {
          release = resolve;
        }).then(() => queue.claimMany(leaseMs, max));
      },
    });
    const ran: string[] = [];
    const worker = start({ echo: async (job) => void ran.push(job.id) }, {}, hung);
    await clock.until('a claim hangs', () => hungClaims === 1);
    let closed = false;
    void worker.close(200).then(() => void (closed = true));
    await clock.advance(199);
    expect(closed).toBe(false);
    await clock.advance(1);
    expect(closed).toBe(true);
    const id = await ready();
    release!();
    await settle();
    // The late claim takes the job; the closed worker hands it back instead of running it.
    expect(ran).toEqual([]);
    expect(await queue.getJob(id)).toMatchObject({ state: 'delayed', attempts: 0, stalls: 0, snoozes: 1 });
  });

  test('close(timeoutMs) is bounded even when waitForReady and reclaim never resolve', async () => {
    let waits = 0;
    const hung = Object.assign(Object.create(queue) as MemoryQueue, {
      waitForReady: () => {
        waits += 1;
        return new Promise<void>(() => undefined);
      },
      reclaimExpired: () => new Promise<never>(() => undefined),
    });
    const worker = start({ echo: async () => 1 }, { idleWaitMs: 60_000, leaseMs: 30 }, hung);
    await clock.advance(100); // the pump is stuck in reclaimExpired (its first look for expired leases)
    let closed = false;
    void worker.close(200).then(() => void (closed = true));
    await clock.advance(199);
    expect(closed).toBe(false);
    await clock.advance(1);
    expect(closed).toBe(true);
    expect(waits).toBe(0);
  });
});

describe('Worker options', () => {
  const queue = memoryBackend().make().queue;
  test('bad options throw a coded ConfigError', () => {
    expect(() => new Worker({ limiter: {} as never, handlers: {} })).toThrow(/limiter/);
    expect(() => new Worker({ limiter: { queue }, handlers: { a: 'x' as never } })).toThrow(/handlers\["a"\]/);
    expect(() => new Worker({ limiter: { queue }, handlers: {}, concurrency: 0 })).toThrow(expect.objectContaining({ code: 'ERR_BL_CONCURRENCY' }));
    expect(() => new Worker({ limiter: { queue }, handlers: {}, leaseMs: 1.5 })).toThrow(/leaseMs/);
  });
});
