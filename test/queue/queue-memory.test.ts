import { MemoryQueue } from '../../src/queue/memory-queue';
import { describeQueueStore } from './queue-store-suite';

describeQueueStore('MemoryQueue', async ({ clock, spec, maxDead }) => new MemoryQueue({ clock, spec, ...(maxDead ? { maxDead } : {}) }));

test('the dispatcher lease is free again after its ttl (memory clock)', async () => {
  let now = 1000;
  const q = new MemoryQueue({ clock: () => now, spec: { name: 'lease', limit: 10, windowMs: 1000, burst: 2, reserve: 1, idleMs: 60_000, epochMs: 250, sustained: false } });
  expect(await q.acquireDispatcherLease('a', 100)).toBe(true);
  expect(await q.acquireDispatcherLease('b', 100)).toBe(false);
  now += 100;
  expect(await q.acquireDispatcherLease('b', 100)).toBe(false); // a Redis key expires when now > its time, in ms
  now += 1;
  expect(await q.acquireDispatcherLease('b', 100)).toBe(true);
});
