/**
 * A client ioredis ended unasked is reopened; one the user quit stays closed. The unasked end is made the way
 * ioredis's Sentinel failover detector makes it (its connector closed while the client is connecting), which
 * the Sentinel failover test meets only under load (see src/redis/reopen.ts).
 */
import Redis from 'ioredis';
import { createLimiter } from '../../src/limiter/limiter';
import { RedisStore } from '../../src/redis/redis-store';
import { startRedis, type RedisServer } from '../helpers/redis-server';
import { until } from '../queue/fixtures/queues';

let server: RedisServer;
beforeAll(async () => {
  server = await startRedis();
});
afterAll(async () => server.stop());

const silent = { warn: () => undefined, error: () => undefined };

function limiterOn(client: Redis, name: string) {
  return createLimiter({
    store: new RedisStore({ client }),
    name,
    limit: 1000,
    windowMs: 1000,
    onStoreError: 'deny',
    timeoutMs: 200,
    logger: silent,
  });
}

test('a client that ioredis ended while connecting is reopened, and the limiter decides again', async () => {
  const client = new Redis({ port: server.port, lazyConnect: true, maxRetriesPerRequest: 1 });
  client.on('error', () => undefined);
  const limiter = limiterOn(client, 'ended-unasked');
  // What the failover detector does: close the connector under a connecting client. ioredis then ends it.
  const connecting = client.connect().catch(() => undefined);
  (client as unknown as { connector: { disconnect(): void } }).connector.disconnect();
  await connecting;
  await until('ioredis ended the client', async () => client.status === 'end', 2_000);

  const first = await limiter.check('tenant');
  expect(first.reason).toBe('store-error');
  await until('the limiter decides again', async () => (await limiter.check('tenant')).reason !== 'store-error', 10_000);
  expect(client.status).toBe('ready');
  await limiter.close();
  client.disconnect();
});

test('a client the user quit stays closed: the limiter answers by onStoreError and never reopens it', async () => {
  const client = new Redis({ port: server.port, maxRetriesPerRequest: 1 });
  client.on('error', () => undefined);
  await until('connected', async () => client.status === 'ready', 5_000);
  const limiter = limiterOn(client, 'quit-by-user');
  expect((await limiter.check('tenant')).allowed).toBe(true);
  await client.quit();
  await until('the client ended', async () => client.status === 'end', 2_000);
  // The breaker's probe runs every 100 ms … 1 s meanwhile.
  for (let i = 0; i < 15; i++) {
    expect((await limiter.check('tenant')).reason).toBe('store-error');
    await new Promise((r) => setTimeout(r, 100));
  }
  expect(client.status).toBe('end');
  await limiter.close();
});
