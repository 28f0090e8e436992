/**
 * health(), the breaker and the first connection against a real redis-server that this test kills and
 * restarts (by pid): checks answer at once during the outage with ioredis defaults, service resumes by itself.
 */
import Redis from 'ioredis';
import { createLimiter, type Limiter } from '../../src/limiter/limiter';
import { isDegraded } from '../../src/limiter/outage/outage-policy';
import { RedisStore } from '../../src/redis/redis-store';
import { startRedis, type RedisServer } from '../helpers/redis-server';

let server: RedisServer;
const limiters: Limiter[] = [];
beforeAll(async () => {
  server = await startRedis();
});
afterAll(async () => {
  await Promise.all(limiters.map((l) => l.close()));
  await server?.stop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let seq = 0;

function make(client: Redis, lines: string[], extra: Record<string, unknown> = {}): Limiter {
  const limiter = createLimiter({
    store: new RedisStore({ client, prefix: 'health' }),
    name: `health-${++seq}`,
    limit: 100,
    windowMs: 1000,
    timeoutMs: 200,
    logger: {
      warn: (m) => {
        lines.push(m);
      },
    },
    ...extra,
  });
  limiters.push(limiter);
  return limiter;
}

async function timeUntil(predicate: () => Promise<boolean>, timeoutMs: number): Promise<number> {
  const started = Date.now();
  while (!(await predicate())) {
    if (Date.now() - started > timeoutMs) throw new Error(`condition not met within ${timeoutMs} ms`);
    await sleep(20);
  }
  return Date.now() - started;
}

test('Redis killed and restarted, ioredis defaults: health leaves up at once, checks answer in ms, up again within 2 s', async () => {
  // ioredis defaults: offline queue on, 20 retries per request, reconnect backoff of 50 ms per attempt.
  const client = server.client({ maxRetriesPerRequest: 20 });
  const lines: string[] = [];
  const limiter = make(client, lines);
  const events: string[] = [];
  limiter.on('degraded', () => events.push('degraded')).on('recovered', () => events.push('recovered'));
  expect((await limiter.check('a')).allowed).toBe(true);
  expect(await limiter.health()).toMatchObject({
    status: 'up',
    redis: { role: 'master', version: expect.stringMatching(/^\d+\./), maxmemoryPolicy: 'noeviction' },
  });

  await server.kill();
  const leftUp = await timeUntil(async () => (await limiter.health()).status !== 'up', 5000);
  expect(leftUp).toBeLessThan(1000);
  expect(await limiter.health()).toMatchObject({ status: 'down', lastError: expect.any(String) });

  await limiter.check('a'); // the failure that opens the breaker (it waits timeoutMs at most)
  const slowest = [];
  for (let i = 0; i < 50; i++) {
    const started = performance.now();
    const d = await limiter.check(`g${i % 5}`);
    slowest.push(performance.now() - started);
    // The 'local' fallback admits nothing for timeoutMs + windowMs after the opening (one limit with the store): a 503.
    expect(d).toMatchObject({ allowed: false, reason: 'store-error' });
    expect(isDegraded(d)).toBe(true);
  }
  // Generous bound: no check waits for the dead store (timeoutMs is 200).
  expect(Math.max(...slowest)).toBeLessThan(50);
  expect(events).toEqual(['degraded']);
  expect(lines.filter((l) => l.startsWith('WRN_BL_STORE_FAIL_LOCAL'))).toHaveLength(1);

  await sleep(1000);
  await server.restart();
  const backUp = await timeUntil(async () => (await limiter.health()).status === 'up', 5000);
  expect(backUp).toBeLessThan(2000);
  expect(events).toEqual(['degraded', 'recovered']);
  expect(lines.some((l) => l.startsWith('WRN_BL_STORE_RECOVERED'))).toBe(true);
  const d = await limiter.check('a');
  expect(d.allowed).toBe(true);
  expect(d.activeGroups).toBe(1); // the store decides again (Redis restarted empty)
}, 30_000);

describe('maxmemory-policy', () => {
  afterEach(async () => {
    const admin = server.client();
    await admin.config('SET', 'maxmemory', '0');
    await admin.config('SET', 'maxmemory-policy', 'noeviction');
  });

  test.each([
    ['allkeys-lru', '100mb', true],
    ['volatile-lru', '100mb', true],
    ['noeviction', '100mb', false],
    ['allkeys-lru', '0', false],
  ])('%s with maxmemory %s: warned once = %s', async (policy, maxmemory, warned) => {
    const admin = server.client();
    await admin.config('SET', 'maxmemory', maxmemory);
    await admin.config('SET', 'maxmemory-policy', policy);
    const client = server.client();
    await new Promise((resolve) => client.once('ready', resolve));
    const lines: string[] = [];
    const limiter = make(client, lines);
    expect((await limiter.health()).redis?.maxmemoryPolicy).toBe(policy);
    await limiter.health();
    const warnings = lines.filter((l) => l.startsWith('WRN_BL_MAXMEMORY_POLICY'));
    expect(warnings).toHaveLength(warned ? 1 : 0);
    if (warned) expect(warnings[0]).toContain(policy);
  });
});

test("the README's client options: no outage warning while the client makes its first connection", async () => {
  const lines: string[] = [];
  const client = new Redis(server.url, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
  try {
    expect(client.status).toBe('connecting');
    const limiter = make(client, lines);
    const decisions = await Promise.all(Array.from({ length: 5 }, () => limiter.check('a')));
    expect(decisions.every((d) => d.allowed && !isDegraded(d))).toBe(true);
    expect(decisions[4]!.remaining).toBeLessThan(decisions[0]!.remaining); // the store counted them
    expect(lines).toEqual([]);
  } finally {
    client.disconnect();
  }
});

test("health() on a replica is 'degraded', with the role", async () => {
  const replica = await startRedis(['--replicaof', '127.0.0.1', String(server.port)]);
  try {
    const client = replica.client();
    // This test is about the role, not speed: a fresh replica on a loaded machine may take longer than 200 ms.
    const limiter = make(client, [], { timeoutMs: 2000 });
    const health = await limiter.health();
    expect(health).toMatchObject({ status: 'degraded', redis: { role: 'slave' }, lastError: 'Redis is a slave' });
  } finally {
    await replica.stop();
  }
});
