/**
 * A worker's acknowledgement the store failed to take (issue 19: "a failed acknowledgement is not retried, so its
 * job reruns when its lease ends"). A real Redis refuses the acknowledgement, then recovers: writes refused
 * (NOREPLICAS: min-replicas-to-write with no replica), or the server killed -9 by pid and restarted on its AOF
 * (appendfsync always). The Worker sends the acknowledgement again with the same token until it lands: the
 * failure is recorded once (attempts 1, no stall), the completion once, and neither job runs again.
 */
import type Redis from 'ioredis';
import { createLimiter, type Limiter } from '../../src/limiter/limiter';
import { Worker } from '../../src/queue/worker';
import { RedisStore } from '../../src/redis/redis-store';
import type { QueueStore } from '../../src/types';
import { startRedis, type RedisServer } from '../helpers/redis-server';
import { until } from './harness';

let server: RedisServer;
let admin: Redis;
beforeAll(async () => {
  server = await startRedis(['--appendonly', 'yes', '--appendfsync', 'always']);
  admin = server.client({ maxRetriesPerRequest: null });
  admin.on('error', () => undefined);
});
afterAll(async () => server.stop());

const silent = { warn: () => undefined, error: () => undefined };

/** The limiter's queue, each acknowledgement's outcome kept ('ok' or the error's code). */
function counted(queue: QueueStore): { queue: QueueStore; acks: string[] } {
  const acks: string[] = [];
  const keep = <T>(sent: Promise<T>): Promise<T> =>
    sent.then(
      (r) => (acks.push('ok'), r),
      (error: unknown) => {
        acks.push((error as { code?: string }).code ?? String(error));
        throw error;
      },
    );
  const own: Partial<QueueStore> = {
    fail: (...args) => keep(queue.fail(...args)),
    complete: (...args) => keep(queue.complete(...args)),
    completeAndClaim: (...args) => keep(queue.completeAndClaim(...args)),
  };
  // Every other call goes to the limiter's queue itself (its blocking connection is the one limiter.close() ends).
  const wrapped = new Proxy(queue, {
    get: (target, prop) => {
      const value: unknown = own[prop as keyof QueueStore] ?? Reflect.get(target, prop);
      return typeof value === 'function' && !(prop in own) ? value.bind(target) : value;
    },
  });
  return { queue: wrapped, acks };
}

const faults = {
  'writes refused (NOREPLICAS), then accepted': {
    refuse: async () => void (await admin.config('SET', 'min-replicas-to-write', '1')),
    recover: async () => void (await admin.config('SET', 'min-replicas-to-write', '0')),
  },
  'the server killed -9, then restarted on its AOF': {
    refuse: () => server.kill(),
    recover: () => server.restart(),
  },
};

describe.each(Object.entries(faults))('%s', (_label, fault) => {
  test.each(['fails', 'completes'] as const)(
    'a job that %s is acknowledged once, by the repeat',
    async (ending) => {
      const name = `ack-retry-${ending}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
      const client = server.client({ maxRetriesPerRequest: 1 });
      client.on('error', () => undefined);
      const limiter: Limiter = createLimiter({ store: new RedisStore({ client }), name, limit: 100, windowMs: 1000, logger: silent });
      const { queue, acks } = counted(limiter.queue);
      let runs = 0;
      const worker = new Worker({
        limiter: { queue },
        logger: silent,
        backoff: () => 60_000,
        handlers: {
          work: async () => {
            runs += 1;
            await fault.refuse();
            if (ending === 'fails') throw new Error('upstream down');
            return 'done';
          },
        },
      });
      worker.on('error', () => undefined);
      const ended: string[] = [];
      worker.on('retrying', () => void ended.push('retrying'));
      worker.on('completed', () => void ended.push('completed'));
      try {
        const job = await limiter.enqueue('acme', { type: 'work' });
        await limiter.queue.dispatch({ readyMax: 10, moveMax: 10, promoteMax: 10, scanMax: 10 });
        worker.start();
        await until('the store refused an acknowledgement', () => acks.length > 0);
        expect(acks[0]).not.toBe('ok');
        await fault.recover();
        await until('the acknowledgement landed', () => ended.length > 0, 30_000);
        expect(acks.at(-1)).toBe('ok');
        expect(ended).toEqual([ending === 'fails' ? 'retrying' : 'completed']);
        const info = await limiter.getJob(job.id);
        expect(info).toMatchObject(ending === 'fails' ? { state: 'delayed', attempts: 1, stalls: 0 } : { state: 'completed', stalls: 0 });
        expect(runs).toBe(1);
      } finally {
        await fault.recover().catch(() => undefined);
        await worker.close(1000);
        await limiter.destroy().catch(() => undefined);
        await limiter.close();
      }
    },
    60_000,
  );
});
