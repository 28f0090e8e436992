/** Runs the HTTP case table (cases.ts) for one framework: on MemoryStore, and the `redis` cases on RedisStore. */
import type Redis from 'ioredis';
import { MemoryStore } from '../../src/memory/memory-store';
import { RedisStore } from '../../src/redis/redis-store';
import { startRedis, type RedisServer } from '../helpers/redis-server';
import { CASES as BASE_CASES, FROZEN_NOW, type Harness } from './cases';
import { CONCURRENCY_CASES } from './concurrency-cases';
import { RULE_CASES } from './rule-cases';

const CASES = [...BASE_CASES, ...RULE_CASES, ...CONCURRENCY_CASES];

export function runCases(h: Harness): void {
  let seq = 0;
  const name = (label: string): string => `mw-${h.name}-${label}-${process.pid}-${++seq}`;
  const clock = (): number => FROZEN_NOW;

  describe(`${h.name} on MemoryStore`, () => {
    for (const c of CASES) test(c.title, () => c.run({ h, name, store: () => new MemoryStore({ clock }) }));
  });

  describe(`${h.name} on RedisStore`, () => {
    let server: RedisServer;
    let client: Redis;
    beforeAll(async () => {
      server = await startRedis();
      client = server.client({ enableOfflineQueue: false, maxRetriesPerRequest: 1 });
      if (client.status !== 'ready') await new Promise((resolve) => client.once('ready', resolve));
    });
    afterAll(async () => {
      client?.disconnect();
      await server?.stop();
    });
    for (const c of CASES.filter((x) => x.redis)) {
      test(c.title, () => c.run({ h, name, store: () => new RedisStore({ client, prefix: 'mwt', clock }) }));
    }
  });
}
