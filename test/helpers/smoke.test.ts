import { startCluster } from './redis-cluster';
import { startRedis } from './redis-server';

test('the helper starts a real redis-server and stops it by pid', async () => {
  const server = await startRedis();
  const c = server.client();
  expect(await c.ping()).toBe('PONG');
  const pid = server.pid;
  await server.stop();
  if (pid !== undefined) expect(() => process.kill(pid, 0)).toThrow();
});

test('the helper starts a 3-master cluster', async () => {
  const cluster = await startCluster(3);
  try {
    const c = cluster.client();
    await c.set('{x}a', '1');
    expect(await c.get('{x}a')).toBe('1');
    expect((await c.cluster('SLOTS')).length).toBe(3);
  } finally {
    await cluster.stop();
  }
}, 60000);
