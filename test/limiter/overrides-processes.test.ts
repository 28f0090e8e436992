/**
 * Overrides across processes on one redis-server: two limiters of one name, each on its own connection (as two
 * processes would be). An override set, replaced or deleted through one applies at the other's next check, and a
 * check costs the same one command (the admission script's call) with an override as without: the override is
 * read inside that call. Commands are counted with MONITOR, by the connection that sent them (the commands the
 * scripts run inside Redis show as `lua` and are not round trips).
 */
import type Redis from 'ioredis';
import { createLimiter, type Limiter } from '../../src/limiter/limiter';
import { RedisStore } from '../../src/redis/redis-store';
import { startRedis, type RedisServer } from '../helpers/redis-server';

let server: RedisServer;
beforeAll(async () => {
  server = await startRedis();
});
afterAll(() => server.stop());

const SILENT = { warn: () => undefined, error: () => undefined };

/** The client's own address as MONITOR names it (`127.0.0.1:<port>`). */
async function addressOf(client: Redis): Promise<string> {
  const info = String(await client.client('INFO'));
  return /\baddr=(\S+)/.exec(info)![1]!;
}

test("an override set by one process applies at the other's next check, with the same commands per check", async () => {
  const name = `overrides-processes-${process.pid}`;
  const clientA = server.client();
  const clientB = server.client();
  const options = { name, limit: 1000, windowMs: 1000, rules: [{ name: 'tenant', limit: 100, windowMs: 1000 }], logger: SILENT };
  const a: Limiter = createLimiter({ ...options, store: new RedisStore({ client: clientA }) });
  const b: Limiter = createLimiter({ ...options, store: new RedisStore({ client: clientB }) });
  const addressB = await addressOf(clientB);

  const monitor = await server.client().monitor();
  const sentByB: string[][] = [];
  monitor.on('monitor', (_time: string, args: string[], source: string) => {
    if (source.endsWith(addressB)) sentByB.push(args);
  });
  /** One check of b, alone in its turn: the decision and the commands its connection sent for it. */
  const checkB = async (group: string) => {
    sentByB.length = 0;
    const decision = await b.check(group);
    // MONITOR's stream lags the reply: a PING through b's connection marks the end of what the check sent
    await clientB.ping();
    await new Promise<void>((resolve) => {
      const poll = () => (sentByB.some((c) => c[0]?.toLowerCase() === 'ping') ? resolve() : setTimeout(poll, 5));
      poll();
    });
    return { decision, commands: sentByB.filter((c) => c[0]?.toLowerCase() !== 'ping').map((c) => c[0]!.toLowerCase()) };
  };

  // warm: the script is loaded (a first EVALSHA may answer NOSCRIPT and be sent again as EVAL)
  await checkB('tenant');
  const plain = await checkB('tenant');
  expect(plain.decision.allowed).toBe(true);
  expect(plain.commands).toEqual(['evalsha']);

  await a.setOverride('tenant', { blocked: true }, { reason: 'abuse' });
  const blocked = await checkB('tenant');
  expect(blocked.decision).toMatchObject({ allowed: false, reason: 'blocked', policy: 'blocked' });
  expect(blocked.commands).toEqual(plain.commands);

  await a.setOverride('tenant', { rules: [{ name: 'migration', limit: 5000, windowMs: 1000 }] }, { ttlMs: 60_000 });
  const burst = await checkB('tenant');
  expect(burst.decision.allowed).toBe(true);
  expect(burst.decision.rules?.map((r) => [r.name, r.limit])).toEqual([['migration', 5000]]);
  expect(burst.commands).toEqual(plain.commands);
  expect((await b.getOverride('tenant'))?.settings).toEqual({
    rules: [{ name: 'migration', limit: 5000, windowMs: 1000, algorithm: 'token-bucket' }],
  });

  await a.deleteOverride('tenant');
  const back = await checkB('tenant');
  expect(back.decision.rules?.map((r) => r.name)).toEqual(['tenant']);
  expect(back.commands).toEqual(plain.commands);

  monitor.disconnect();
  await a.destroy();
  await Promise.all([a.close(), b.close()]);
});

test('the override keys have a TTL like every key of the limiter, renewed by checks', async () => {
  const name = `overrides-expiry-${process.pid}`;
  const client = server.client();
  const limiter = createLimiter({ name, limit: 100, windowMs: 1000, logger: SILENT, store: new RedisStore({ client }) });
  await limiter.setOverride('a', { weight: 2 });
  await limiter.setOverride('b', { blocked: true }, { ttlMs: 60_000 });
  await limiter.check('a');
  const DAY = 86_400_000;
  for (const key of ['overrides', 'odue', 'oindex']) {
    const ttl = await client.pttl(`{bl:${name}}:${key}`);
    expect([key, ttl > 29 * DAY && ttl <= 30 * DAY]).toEqual([key, true]);
  }
  await limiter.destroy();
  await limiter.close();
});
