import { MemoryQueue } from '../../src/memory/memory-queue';
import { describeQueueStore } from './queue-store-suite';
import { SPEC_DEFAULTS } from '../helpers/spec';

describeQueueStore('MemoryQueue', async ({ clock, spec, maxDead }) => new MemoryQueue({ clock, spec, ...(maxDead ? { maxDead } : {}) }));

test('the dispatcher lease is free again after its ttl (memory clock)', async () => {
  let now = 1000;
  const q = new MemoryQueue({
    clock: () => now,
    spec: { ...SPEC_DEFAULTS, name: 'lease', limit: 10, windowMs: 1000, burst: 2, reserve: 1, idleMs: 60_000, epochMs: 250, sustained: false },
  });
  expect(await q.acquireDispatcherLease('a', 100)).toBe(true);
  expect(await q.acquireDispatcherLease('b', 100)).toBe(false);
  now += 100;
  expect(await q.acquireDispatcherLease('b', 100)).toBe(false); // a Redis key expires when now > its time, in ms
  now += 1;
  expect(await q.acquireDispatcherLease('b', 100)).toBe(true);
});

test("like lease.lua, only every 8th claim's completion trims expired completed records (an idempotency key names its job until then)", async () => {
  let now = 1000;
  const q = new MemoryQueue({
    clock: () => now,
    spec: { ...SPEC_DEFAULTS, name: 'trim', limit: 1000, windowMs: 1000, burst: 100, reserve: 1, idleMs: 60_000, epochMs: 250, sustained: false },
  });
  const job = (idempotencyKey?: string) =>
    q.enqueue({
      group: 'g',
      weight: 1,
      cost: 1,
      type: 't',
      payload: '{}',
      maxBacklog: 100,
      delayMs: 0,
      maxDeferMs: 1e9,
      ...(idempotencyKey ? { idempotencyKey } : {}),
    });
  const keyed = await job('k');
  for (let i = 0; i < 7; i++) await job();
  await q.dispatch({ readyMax: 100, moveMax: 100, promoteMax: 100, scanMax: 100 });
  const { claimed } = await q.claimMany(1000, 8);
  expect(claimed.map((c) => c.id)[0]).toBe(keyed.status === 'written' ? keyed.id : '');
  expect(await q.complete(claimed[0]!.id, claimed[0]!.token, undefined, 1)).toBe(true);
  now += 10;
  for (const c of claimed.slice(1, 7)) await q.complete(c.id, c.token, undefined, 1); // claims 2..7: no trim
  expect(await q.getJob(claimed[0]!.id)).toBeNull(); // its keep time is over ...
  expect((await job('k')).status).toBe('duplicate'); // ... but the record is not trimmed yet
  await q.complete(claimed[7]!.id, claimed[7]!.token, undefined, 1); // the 8th claim's completion trims
  expect((await job('k')).status).toBe('written');
});
