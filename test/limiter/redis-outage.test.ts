/**
 * The outage policy against a real redis-server that is killed and restarted: no request hangs (offline
 * queue on or off), the policy answers while Redis is down, and the limiter recovers by itself.
 */
import type Redis from 'ioredis';
import { createLimiter } from '../../src/limiter/limiter';
import { RedisStore } from '../../src/redis/redis-store';
import { startRedis, type RedisServer } from '../helpers/redis-server';

let server: RedisServer;
const clients: Redis[] = [];

beforeAll(async () => {
  server = await startRedis();
});
afterAll(async () => {
  for (const c of clients) c.disconnect();
  await server?.stop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function waitFor(predicate: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(50);
  }
}

test.each([
  ['offline queue disabled (recommended)', { enableOfflineQueue: false, maxRetriesPerRequest: 1 }],
  ['ioredis defaults (offline queue on)', {}],
])('Redis killed and restarted, %s: deny answers within timeoutMs, then the store takes over again', async (_label, clientOptions) => {
  const client = server.client({ ...clientOptions, retryStrategy: () => 50 });
  clients.push(client);
  if (client.status !== 'ready') await new Promise((resolve) => client.once('ready', resolve));
  const lines: string[] = [];
  const limiter = createLimiter({
    store: new RedisStore({ client, prefix: 'outage' }),
    name: `redis-outage-${clients.length}`,
    limit: 100,
    windowMs: 1000,
    onStoreError: 'deny',
    timeoutMs: 200,
    logger: {
      warn: (m) => {
        lines.push(m);
      },
    },
  });
  expect((await limiter.check('a')).allowed).toBe(true);

  await server.kill();
  for (let i = 0; i < 3; i++) {
    const started = Date.now();
    const d = await limiter.check('a');
    expect(d).toMatchObject({ allowed: false, reason: 'store-error' });
    expect(Date.now() - started).toBeLessThan(1_000); // timeoutMs 200, generous bound
  }
  expect(lines.filter((l) => l.startsWith('WRN_BL_STORE_FAIL_CLOSED'))).toHaveLength(1);

  await server.restart();
  await waitFor(async () => (await limiter.check('a')).allowed);
  expect(lines.some((l) => l.startsWith('WRN_BL_STORE_RECOVERED'))).toBe(true);
  await limiter.destroy();
});

test("'local': a tenant blocked through another connection stays blocked on the fallback while Redis is down", async () => {
  const name = `redis-outage-blocked-${process.pid}`;
  const options = { name, limit: 100, windowMs: 200, logger: { warn: () => undefined } };
  // the operator's process, and this one: each its own connection
  const admin = createLimiter({ ...options, store: new RedisStore({ client: server.client(), prefix: 'outage' }) });
  const client = server.client({ enableOfflineQueue: false, maxRetriesPerRequest: 1, retryStrategy: () => 50 });
  clients.push(client);
  if (client.status !== 'ready') await new Promise((resolve) => client.once('ready', resolve));
  const limiter = createLimiter({ ...options, store: new RedisStore({ client, prefix: 'outage' }), onStoreError: 'local', timeoutMs: 100 });
  await admin.setOverride('abuser', { blocked: true }, { reason: 'abuse' });
  expect((await limiter.check('abuser')).policy).toBe('blocked');
  expect((await limiter.check('tenant')).allowed).toBe(true);

  await server.kill();
  // the fallback admits once timeoutMs + windowMs have passed since the failure
  await waitFor(async () => (await limiter.check('tenant')).allowed);
  for (let i = 0; i < 3; i++) expect(await limiter.check('abuser')).toMatchObject({ allowed: false, reason: 'blocked', policy: 'blocked' });

  const recovered = new Promise((resolve) => limiter.on('recovered', resolve));
  await server.restart();
  await recovered;
  await limiter.close();
  await admin.close();
});
