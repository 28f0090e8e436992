/** A real 3-master cluster: a limiter whose hash tag lands in a non-zero slot keeps all keys in that slot and works. */
import type { Cluster } from 'ioredis';
import { allKeys, limiterKeys } from '../../src/redis/keys';
import { RedisStore } from '../../src/redis/redis-store';
import { startCluster, type RedisCluster } from '../helpers/redis-cluster';
import { SPEC_DEFAULTS } from '../helpers/spec';

let cluster: RedisCluster;
let client: Cluster;
beforeAll(async () => {
  cluster = await startCluster(3);
  client = cluster.client();
}, 60_000);
afterAll(async () => {
  await cluster.stop();
});

test('all keys of a limiter share one non-zero slot, and admission works there', async () => {
  const name = 'cluster-api';
  const keys = allKeys(limiterKeys('bl', name));
  const slots = new Set<number>();
  for (const k of keys) slots.add(Number(await client.cluster('KEYSLOT', k)));
  expect(slots.size).toBe(1);
  const [slot] = [...slots];
  expect(slot).toBeGreaterThan(0);

  const limiter = new RedisStore({ client }).bind({
    ...SPEC_DEFAULTS,
    name,
    limit: 10,
    windowMs: 60_000,
    burst: 5,
    reserve: 1,
    idleMs: 60_000,
    epochMs: 15_000,
    sustained: false,
  });
  let allowed = 0;
  for (let i = 0; i < 8; i++) if ((await limiter.admit({ group: `g{${i}}`, weight: 1, cost: 1 })).allowed) allowed += 1;
  expect(allowed).toBe(5);
  const denied = await limiter.admit({ group: 'x', weight: 1, cost: 1 });
  expect(denied.allowed).toBe(false);
  expect(denied.retryAfterMs).toBeGreaterThan(0);
  await limiter.destroy();
  for (const k of keys) expect(await client.exists(k)).toBe(0);
}, 60_000);
