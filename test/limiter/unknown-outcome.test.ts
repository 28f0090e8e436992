/**
 * A deferral whose outcome is unknown is never guessed (DESIGN.md §9): on an injected clock and a fault store,
 * a timed-out deferring call is a 503 carrying its idempotency key (generated when the caller sent none), never
 * 429 and never allowed live; the 'local' fallback keeps one limit with the store across flapping episodes;
 * an episode logs at most two warnings.
 */
import express from 'express';
import request from 'supertest';
import { createLimiter } from '../../src/limiter/limiter';
import { bulkLimiter } from '../../src/middleware/express';
import { StoreError } from '../../src/errors';
import { MemoryStore } from '../../src/memory/memory-store';
import type { JobCounts, LimiterStore, Store, StoreErrorPolicy } from '../../src/types';
import { withScheduler } from '../../src/util/scheduler';
import { ManualScheduler, settle } from '../helpers/manual-scheduler';
import { FaultStore } from './fault-store';

let clock: ManualScheduler;
beforeEach(() => {
  clock = new ManualScheduler();
});

let seq = 0;
function make(policy: StoreErrorPolicy, limit = 10) {
  const store = new FaultStore();
  const lines: string[] = [];
  const limiter = createLimiter(
    withScheduler(
      {
        store,
        name: `unknown-${++seq}`,
        limit,
        tuning: { burst: limit },
        windowMs: 1000,
        onStoreError: policy,
        timeoutMs: 40,
        logger: { warn: (m: string) => void lines.push(m) },
      },
      clock,
    ),
  );
  return { store, limiter, lines };
}

const job = { type: 'report', payload: { n: 1 } };

describe.each<StoreErrorPolicy>(['allow', 'deny', 'local'])("onStoreError '%s'", (policy) => {
  test('a deferring call that times out is a store-error denial with the generated key: never allowed, never 429', async () => {
    const { store, limiter } = make(policy, 1);
    expect((await limiter.check('a')).allowed).toBe(true);
    // Denied and deferred: the group is remembered as denied, so its next deferral goes in one call, job included.
    expect((await limiter.check('a', { defer: job })).job).toBeDefined();
    store.mode = 'hang';
    const pending = limiter.check('a', { defer: job });
    // answered at timeoutMs on the limiter's clock, not later: the store never answers
    let answered = false;
    void pending.then(() => (answered = true));
    await clock.advance(39);
    await settle();
    expect(answered).toBe(false);
    await clock.advance(1);
    const d = await pending;
    expect(d).toMatchObject({ allowed: false, reason: 'store-error' });
    expect(d.idempotencyKey).toMatch(/^bl-[\w-]{16}$/);
    expect(d.retryAfterMs).toBeGreaterThanOrEqual(1000);
    // The one call sent carried the job and that key (scoped to its group), so a retry with it finds the job.
    const sent = store.calls.at(-1)!;
    expect(sent.defer?.idempotencyKey).toBe(`1:a:${d.idempotencyKey}`);
    await limiter.close();
  });

  test("the caller's own key comes back unchanged", async () => {
    const { store, limiter } = make(policy);
    store.mode = 'hang';
    const pending = limiter.check('a', { defer: { ...job, idempotencyKey: 'client-key-1' } });
    await clock.advance(40);
    expect(await pending).toMatchObject({ allowed: false, reason: 'store-error', idempotencyKey: 'client-key-1' });
    await limiter.close();
  });
});

test("a deferral the store certainly did not receive (offline queue off) may be let through by 'allow'", async () => {
  const { store, limiter } = make('allow');
  store.mode = 'throw';
  store.error = new Error("Stream isn't writeable and enableOfflineQueue options is false");
  expect(await limiter.check('a', { defer: job })).toMatchObject({ allowed: true });
  // While the breaker is open the store is not called at all: nothing can be written either.
  expect(await limiter.check('a', { defer: job })).toMatchObject({ allowed: true });
  await limiter.close();
});

test("the 'local' fallback never answers a check that could defer 429 on the store's behalf", async () => {
  const { store, limiter } = make('local', 2);
  store.mode = 'throw';
  store.error = new Error("Stream isn't writeable and enableOfflineQueue options is false");
  await limiter.check('a');
  await clock.advance(1040); // the fallback's budget starts a window after the opening
  const answers = [];
  for (let i = 0; i < 5; i++) answers.push(await limiter.check('a', { defer: job }));
  expect(answers.filter((d) => d.allowed)).toHaveLength(2);
  for (const d of answers.filter((a) => !a.allowed)) expect(d).toMatchObject({ reason: 'store-error', idempotencyKey: expect.any(String) });
  await limiter.close();
});

test('through the middleware: 503 + Retry-After + Idempotency-Key, and the key is the one the client sent', async () => {
  const { store, limiter } = make('local');
  const app = express();
  app.get('/r', bulkLimiter({ limiter, group: () => 'acme', defer: { type: 'report', statusUrl: (id) => `/jobs/${id}` } }), (_req, res) => {
    res.send('ran');
  });
  store.mode = 'throw'; // an error after the send: outcome unknown
  const generated = await request(app).get('/r');
  expect(generated.status).toBe(503);
  expect(Number(generated.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  expect(generated.headers['idempotency-key']).toMatch(/^bl-/);
  const own = await request(app).get('/r').set('Idempotency-Key', 'k-7');
  expect(own.status).toBe(503);
  expect(own.headers['idempotency-key']).toBe('k-7');
  await limiter.close();
});

test("one limit across store and 'local' fallback: a flapping store never lets more than limit through in any window", async () => {
  const limit = 10;
  const { store, limiter, lines } = make('local', limit);
  const admittedAt: number[] = [];
  // 40 rounds of 1..3 s: the store fails or answers, switching every few hundred ms; checks every 25 ms.
  let failing = false;
  for (let t = 0; t < 40_000; t += 25) {
    if (t % 700 === 0) {
      failing = !failing;
      store.mode = failing ? 'throw' : 'ok';
    }
    const d = await limiter.check(`g${t % 3}`);
    if (d.allowed) admittedAt.push(clock.now());
    await clock.advance(25);
  }
  let most = 0;
  for (let i = 0, j = 0; i < admittedAt.length; i++) {
    while (admittedAt[i]! - admittedAt[j]! >= 1000) j++;
    most = Math.max(most, i - j + 1);
  }
  expect(most).toBeLessThanOrEqual(limit);
  // The store answered most of the time: admissions went on.
  expect(admittedAt.length).toBeGreaterThan(limit * 10);
  // Flapping every 700 ms is one episode: one warning when it starts and one at its first recovery.
  expect(lines.length).toBeLessThanOrEqual(2);
  await settle();
  await limiter.close();
});

describe('enqueue whose outcome is unknown', () => {
  const queued = (c: JobCounts) => c.delayed + c.pending + c.ready;
  /** A MemoryStore whose queue writes the job, then answers as a lost connection would. */
  function writingThenFailing() {
    const store = new MemoryStore({ clock: () => 1_800_000_000_000 });
    let failNext = true;
    const faulty: Store = {
      bind(spec) {
        const inner = store.bind(spec);
        const queue = new Proxy(inner.queue, {
          get: (target, prop, receiver) => {
            const value: unknown = Reflect.get(target, prop, receiver);
            if (prop !== 'enqueue' || typeof value !== 'function') return typeof value === 'function' ? value.bind(target) : value;
            return async (...args: unknown[]) => {
              const written: unknown = await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
              if (!failNext) return written;
              failNext = false;
              throw new Error('Connection is closed.');
            };
          },
        });
        return { ...inner, queue } as LimiterStore;
      },
    };
    return faulty;
  }

  test.each([
    ['a generated key', undefined],
    ["the caller's key", 'report-2026-11'],
  ])('rejects with a StoreError carrying %s; enqueueing again with it lands on the job written', async (_label, key) => {
    const limiter = createLimiter({ store: writingThenFailing(), name: `enqueue-unknown-${++seq}`, limit: 10, logger: { warn: () => {} } });
    const options = { type: 'report', payload: { month: 11 }, ...(key === undefined ? {} : { idempotencyKey: key }) };
    const error = (await limiter.enqueue('acme', options).catch((e: unknown) => e)) as StoreError;
    expect(error).toBeInstanceOf(StoreError);
    expect(error.code).toBe('ERR_BL_STORE_FAILED');
    expect(error.idempotencyKey).toEqual(key ?? expect.stringMatching(/^bl-/));
    expect(error.message).toContain(JSON.stringify(error.idempotencyKey));
    expect(queued(await limiter.counts())).toBe(1); // it was written
    const again = await limiter.enqueue('acme', { ...options, idempotencyKey: error.idempotencyKey! });
    expect(again.duplicate).toBe(true);
    expect(queued(await limiter.counts())).toBe(1); // and only once
    await limiter.close();
  });
});
