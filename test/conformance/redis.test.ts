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
import { describeConfigDriftCases } from './config-drift-suite';
import { describePeekResetCases } from './peek-reset-suite';
import { describeProbationRuleCases } from './probation-rules-suite';
import { describeRuleCases } from './rules-suite';
import { describeSettleCases } from './settle-suite';
import { describeSmallLimitCases } from './small-limit-suite';
import { describeStore, type StoreHarness } from './store-suite';

/**
 * Every key of the limiter: its content and absolute expiry, which any write would change. A hash's fields
 * are read sorted, not DUMPed: a hash table's DUMP order moves with the incremental rehashing reads do.
 */
const snapshot = async (store: Store, name: string): Promise<unknown> => {
  const redis = store as RedisStore;
  const client = redis.client as unknown as Redis;
  const out: Record<string, unknown> = {};
  for (const key of allKeys(redis.keys(name))) {
    const type = await client.type(key);
    if (type === 'none') {
      out[key] = null;
      continue;
    }
    const content =
      type === 'hash'
        ? ((await client.callBuffer('HGETALL', key)) as Buffer[])
            .flatMap((b, i, all) => (i % 2 === 0 ? [`${b.toString('hex')}=${all[i + 1]!.toString('hex')}`] : []))
            .sort()
        : (await client.dumpBuffer(key))!.toString('hex');
    out[key] = [content, await client.call('PEXPIRETIME', key)];
  }
  return out;
};

/** Hash fields and zset members of the limiter's admission keys (groups, seen). */
const entries = async (store: Store, name: string): Promise<number> => {
  const redis = store as RedisStore;
  const client = redis.client as unknown as Redis;
  const keys = redis.keys(name);
  // not the config-drift fields (a fixed two at most: the stored fingerprint and the descriptions; byte 253)
  const drift = (await client.hexists(keys.groups, Buffer.from([0xfd]))) + (await client.hexists(keys.groups, Buffer.from([0xfd, 0xfd])));
  return (await client.hlen(keys.groups)) - drift + (await client.zcard(keys.seen));
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
describeConfigDriftCases('RedisStore', harness);
describeOverrideCases('RedisStore', harness);
