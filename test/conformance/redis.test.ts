import { RedisStore } from '../../src/store/redis-store';
import { startRedis } from '../helpers/redis-server';
import { describeAdmissionGuarantees } from './admission-guarantees-suite';
import { describeConcurrencyCases } from './concurrency-suite';
import { describeOldestWaitingCases } from './oldest-waiting-suite';
import { describeRuleCases } from './rules-suite';
import { describeSmallLimitCases } from './small-limit-suite';
import { describeStore, type StoreHarness } from './store-suite';

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
describeOldestWaitingCases('RedisStore', harness);
describeRuleCases('RedisStore', harness);
describeConcurrencyCases('RedisStore', harness);
