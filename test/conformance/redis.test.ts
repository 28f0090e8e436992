import type { Redis } from 'ioredis';
import { allKeys } from '../../src/redis/keys';
import { RedisStore } from '../../src/redis/redis-store';
import type { Store } from '../../src/types';
import { startRedis } from '../helpers/redis-server';
import { describeAdmissionGuarantees } from './admission-guarantees-suite';
import { describeAdaptiveCases } from './adaptive-suite';
import { describeBurstyCases } from './bursty-suite';
import { describeConcurrencyCases } from './concurrency-suite';
import { describeDestroyCases } from './destroy-suite';
import { describeOldestWaitingCases } from './oldest-waiting-suite';
import { describeOverrideCases } from './overrides-suite';
import { describeJobPlanCases } from './job-plans-suite';
import { describePlanCases } from './plans-suite';
import { describeClassCases } from './classes-suite';
import { describePeekResetCases } from './peek-reset-suite';
import { describeProbationRuleCases } from './probation-rules-suite';
import { describeRuleCases } from './rules-suite';
import { describeSettleCases } from './settle-suite';
import { describeSmallLimitCases } from './small-limit-suite';
import { describeStore, type StoreHarness } from './store-suite';

/** Every key of the limiter: its value (DUMP) and absolute expiry, which any write would change. */
const snapshot = async (store: Store, name: string): Promise<unknown> => {
  const redis = store as RedisStore;
  const client = redis.client as unknown as Redis;
  const out: Record<string, unknown> = {};
  for (const key of allKeys(redis.keys(name))) {
    const dump = await client.dumpBuffer(key);
    out[key] = dump === null ? null : [dump.toString('hex'), await client.call('PEXPIRETIME', key)];
  }
  return out;
};

/** Hash fields and zset members of the limiter's admission keys (groups, seen). */
const entries = async (store: Store, name: string): Promise<number> => {
  const redis = store as RedisStore;
  const client = redis.client as unknown as Redis;
  const keys = redis.keys(name);
  return (await client.hlen(keys.groups)) + (await client.zcard(keys.seen));
};

const harness = async (): Promise<StoreHarness> => {
  const server = await startRedis();
  return {
    // Each handle is its own ioredis connection to the same server, like separate processes.
    make: (clock, handles = 1) => Array.from({ length: handles }, () => new RedisStore({ client: server.client(), clock })),
    close: () => server.stop(),
  };
};

describeStore('RedisStore', harness);
describeAdmissionGuarantees('RedisStore', harness);
describeSmallLimitCases('RedisStore', harness);
describeBurstyCases('RedisStore', harness);
describeOldestWaitingCases('RedisStore', harness);
describeRuleCases('RedisStore', harness);
describePlanCases('RedisStore', harness);
describeClassCases('RedisStore', harness);
describeJobPlanCases('RedisStore', harness);
describePeekResetCases('RedisStore', async () => ({ ...(await harness()), snapshot }));
describeConcurrencyCases('RedisStore', harness);
describeProbationRuleCases('RedisStore', async () => ({ ...(await harness()), entries }));
describeDestroyCases('RedisStore', harness);
describeSettleCases('RedisStore', harness);
describeAdaptiveCases('RedisStore', harness);
describeOverrideCases('RedisStore', harness);
