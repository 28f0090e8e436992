/**
 * A 202 is a promise, through a Sentinel failover: one master, one replica and three sentinels, set up as the
 * docs/operations.md advises (AOF, min-replicas-to-write 1, ioredis failoverDetector), a limiter with durability
 * { replicas: 1 }. Requests are deferred while the replica falls behind (SIGSTOP for 1.5 s) and the master is
 * SIGKILLed mid-stream; the sentinels promote the replica and the old master comes back as its replica. Every
 * job a request was promised (a decision carrying a job) is on the new master afterwards: none lost. The
 * others were answered 503 and promised nothing. Without `durability` the same run promised 196 jobs and lost
 * 28 of them (those taken while the replica was behind).
 */
import { createLimiter } from '../../src/limiter/limiter';
import { RedisStore } from '../../src/redis/redis-store';
import { startSentinel, type SentinelSetup } from '../helpers/redis-server';
import { until } from '../queue/fixtures/queues';

let setup: SentinelSetup;
beforeAll(async () => {
  setup = await startSentinel();
  const master = setup.servers[0]!.client();
  await until('the replica is online', async () => /slave0:.*state=online/.test(await master.info('replication')), 15_000);
}, 30_000);
afterAll(async () => setup.stop());

test('a Sentinel failover mid-stream loses no confirmed (202) job', async () => {
  const client = setup.client({ maxRetriesPerRequest: 1 });
  client.on('error', () => undefined);
  const silent = { warn: () => undefined, error: () => undefined };
  // A budget of one request per 36 ms: nearly every request of the stream is deferred.
  const limiter = createLimiter({
    store: new RedisStore({ client }),
    name: `failover-${process.pid}`,
    limit: 100_000,
    tuning: { burst: 1 },
    windowMs: 3_600_000,
    maxBacklog: 100_000,
    onStoreError: 'deny',
    timeoutMs: 1000,
    durability: { replicas: 1, timeoutMs: 500 },
    logger: silent,
  });
  const promised: string[] = [];
  let refused = 0; // answered without a job: allowed now, or 503 while the job could not be confirmed
  let sent = 0;
  let running = true;
  // 60 KB per job: while the replica is paused, the replication stream soon fills the sockets' buffers, and
  // what the master takes then is on the master only (in a small stream the kernel would still deliver it).
  const filler = 'x'.repeat(60_000);
  const stream = (async () => {
    while (running) {
      const d = await limiter
        .check('tenant', { defer: { type: 'work', payload: { n: sent, filler }, idempotencyKey: `req-${sent++}` } })
        .catch(() => undefined);
      if (d?.job) promised.push(d.job.id);
      else refused += 1;
      await new Promise((r) => setTimeout(r, 5));
    }
  })();
  try {
    await until('some jobs promised', () => promised.length >= 50, 15_000);
    const oldMasterPort = setup.servers[0]!.port;
    // The replica falls behind (a slow replica, a congested link): what the master takes meanwhile is on the
    // master only. Without durability those jobs are promised all the same, and lost in the failover.
    const replicaPid = setup.servers[1]!.pid!;
    process.kill(replicaPid, 'SIGSTOP');
    const sentAtPause = sent;
    const killedAt = await (async () => {
      try {
        await new Promise((r) => setTimeout(r, 1500));
        await until('requests sent while the replica is behind', () => sent >= sentAtPause + 8, 30_000);
        await setup.servers[0]!.kill();
        return Date.now();
      } finally {
        process.kill(replicaPid, 'SIGCONT'); // a stopped server would not stop on SIGTERM either
      }
    })();
    console.log(
      `sentinel failover: replica paused at ${sentAtPause} sent; master killed at ${sent} sent, ${promised.length} promised, ${refused} refused`,
    );
    await until('the sentinels promoted the replica', async () => (await setup.masterPort()) !== oldMasterPort, 30_000);
    // The old master returns (as the new master's replica): min-replicas-to-write lets the new master take writes again.
    await setup.servers[0]!.restart();
    const before = promised.length;
    // The sentinels make the old master a replica about 8 s after it is back; under load it takes longer.
    await until('jobs are promised again after the failover', () => promised.length >= before + 50, 60_000);
    console.log(`sentinel failover: jobs promised again ${Date.now() - killedAt} ms after the master was killed`);
  } finally {
    running = false;
    await stream;
  }
  expect(refused).toBeGreaterThan(0);
  const missing: string[] = [];
  for (const id of promised) if ((await limiter.getJob(id)) === null) missing.push(id);
  console.log(
    `sentinel failover: ${sent} requests, ${promised.length} jobs promised, ${refused} refused (503), ${missing.length} promised jobs missing`,
  );
  expect(missing).toEqual([]);
  await limiter.close();
}, 150_000);
