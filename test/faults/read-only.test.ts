/**
 * Redis answers reads but refuses writes: NOREPLICAS (min-replicas-to-write with no replica online) or
 * READONLY (the server made a replica at runtime). On 27ceff3 each check's write failed, opened the breaker,
 * and the read probe (EXISTS) closed it again: about ten openings a second, each with its two warnings. Now
 * the breaker probes with a write while Redis refuses them: one warning when it opens, one when writes pass
 * again; checks get the `onStoreError` policy's answers meanwhile, enqueue fails fast with
 * ERR_BL_STORE_READONLY, and nothing is written.
 */
import type Redis from 'ioredis';
import { createLimiter, type Limiter } from '../../src/limiter/limiter';
import { RedisStore } from '../../src/redis/redis-store';
import { startRedis, type RedisServer } from '../helpers/redis-server';
import { burst, jobsByRequest, report, tally, until, type Answer } from './harness';

let server: RedisServer;
let other: RedisServer;
let admin: Redis;
beforeAll(async () => {
  server = await startRedis();
  other = await startRedis();
  admin = server.client();
});
afterAll(async () => {
  await server.stop();
  await other.stop();
});

const WINDOW_MS = 1000;
const LIMIT = 20;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const faults = {
  NOREPLICAS: {
    refuse: () => admin.config('SET', 'min-replicas-to-write', '1'),
    accept: () => admin.config('SET', 'min-replicas-to-write', '0'),
  },
  READONLY: {
    refuse: () => admin.replicaof('127.0.0.1', String(other.port)),
    accept: () => admin.replicaof('NO', 'ONE'),
  },
};

test.each(Object.keys(faults) as Array<keyof typeof faults>)(
  '%s: one warning per edge, enqueue fails fast, nothing written',
  async (fault) => {
    const name = `read-only-${fault}-${process.pid}`;
    const client = server.client({ maxRetriesPerRequest: 1 });
    const lines: string[] = [];
    const limiter: Limiter = createLimiter({
      store: new RedisStore({ client }),
      name,
      limit: LIMIT,
      windowMs: WINDOW_MS,
      timeoutMs: 1000,
      onStoreError: 'local',
      logger: { warn: (m) => void lines.push(m) },
    });
    try {
      expect((await limiter.check('a')).allowed).toBe(true);
      await faults[fault].refuse();
      // Two seconds of checks (deferrable and live) while Redis refuses writes: the breaker's probe runs ~10 times.
      const answers: Answer[] = [];
      for (let round = 0; round < 20; round++) {
        answers.push(...(await burst(limiter, [{ i: round, group: `g${round % 3}` }])));
        await limiter.check(`live${round % 3}`);
        await sleep(100);
      }
      const whileRefusing = lines.length;
      expect(whileRefusing).toBe(1);
      await expect(limiter.enqueue('a', { type: 'fault', payload: { i: -1 } })).rejects.toMatchObject({ code: 'ERR_BL_STORE_READONLY' });
      expect((await limiter.health()).lastError).toMatch(/NOREPLICAS|READONLY/);

      await faults[fault].accept();
      await until('the breaker closes', async () => (await limiter.health()).status === 'up');
      const t = tally(answers, await jobsByRequest(client, name), WINDOW_MS);
      report(`${fault}`, t, { warningsWhileRefusing: whileRefusing, warnings: lines.length });
      expect(lines[0]).toMatch(new RegExp(`^WRN_BL_STORE_FAIL_LOCAL.*${fault}`));
      expect(lines).toHaveLength(2);
      expect(lines[1]).toMatch(/^WRN_BL_STORE_RECOVERED/);
      expect(t.orphans).toBe(0);
      expect(t.mostPerWindow).toBeLessThanOrEqual(LIMIT);
      expect((await jobsByRequest(client, name)).size).toBe(0); // Redis refused every write
      // Writes pass again: a deferral is decided by the store.
      expect((await limiter.check('a', { defer: { type: 'fault', payload: { i: 99 } } })).reason).not.toBe('store-error');
    } finally {
      await faults[fault].accept();
      await limiter.destroy();
      await limiter.close();
    }
  },
  60_000,
);
