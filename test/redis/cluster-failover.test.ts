/**
 * A 202 is a promise, on Redis Cluster: 3 masters with a replica each, set up as the README advises (AOF,
 * min-replicas-to-write 1), a limiter with durability { replicas: 1 }. Its deferrals go to the master of the
 * limiter's slot and are confirmed with WAIT there. Requests are deferred while that master's replica falls
 * behind (SIGSTOP for 1.5 s) and the master is SIGKILLed; the cluster promotes the replica, the old master
 * comes back as the new one's replica, and the limiter's durable connection follows. Every job a request was promised (a decision carrying a job) is
 * found afterwards: none lost. The others were answered without a job (503 while unconfirmed). Without
 * `durability` the same run promised 841 jobs and lost 334 of them (those taken while the replica was behind).
 */
import { createLimiter, type Limiter } from '../../src/limiter';
import { limiterKeys } from '../../src/store/keys';
import { RedisStore } from '../../src/store/redis-store';
import { startCluster, type RedisCluster } from '../helpers/redis-cluster';

let cluster: RedisCluster;
beforeAll(async () => { cluster = await startCluster(3, { replicas: 1 }); }, 120_000);
afterAll(async () => cluster.stop());

/** Polls `predicate` every `everyMs` (redis-cli processes are not spawned in a tight loop). */
async function until(what: string, predicate: () => boolean | Promise<boolean>, timeoutMs: number, everyMs = 20): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** The job, asking again while the cluster client still finds its way to the new master. */
async function findJob(limiter: Limiter, id: string): Promise<unknown> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await limiter.getJob(id);
    } catch (error) {
      if (attempt >= 50) throw error;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

test('a Cluster master killed mid-stream loses no confirmed (202) job', async () => {
  const client = cluster.client();
  client.on('error', () => undefined);
  const name = `cluster-failover-${process.pid}`;
  const slot = Number(await client.cluster('KEYSLOT', limiterKeys('bl', name).jobs));
  const oldMaster = (await cluster.masterOf(slot))!;
  expect(oldMaster).toBeDefined();
  const silent = { warn: () => undefined, error: () => undefined };
  // A budget of one request per 36 ms: nearly every request of the stream is deferred.
  const limiter = createLimiter({
    store: new RedisStore({ client }), name, limit: 100_000, burst: 1, windowMs: 3_600_000, maxBacklog: 100_000,
    onStoreError: 'deny', timeoutMs: 1000, durability: { replicas: 1, timeoutMs: 500 }, logger: silent,
  });
  const promised: string[] = [];
  let refused = 0; // answered without a job: allowed now, or 503 while the job could not be confirmed
  let sent = 0;
  let running = true;
  // 16 KB per job: while the replica is paused, the replication stream soon fills the sockets' buffers, and
  // what the master takes then is on the master only (in a small stream the kernel would still deliver it).
  const filler = 'x'.repeat(16_000);
  // Four clients, each sending its next request 5 ms after the last answer.
  const streams = Array.from({ length: 4 }, async () => {
    while (running) {
      const n = sent++;
      const d = await limiter.check('tenant', { defer: { type: 'work', payload: { n, filler }, idempotencyKey: `req-${n}` } }).catch(() => undefined);
      if (d?.job) promised.push(d.job.id);
      else refused += 1;
      await new Promise((r) => setTimeout(r, 5));
    }
  });
  let killedAt = 0;
  const phase = (what: string): string => `${what}: ${sent} sent, ${promised.length} promised, ${refused} refused`;
  const phases: string[] = [];
  try {
    await until('some jobs promised', () => promised.length >= 100, 30_000);
    phases.push(phase('before the fault'));
    // The replica falls behind (a slow replica, a congested link): what the master takes meanwhile is on the
    // master only. Without durability those jobs are promised all the same, and lost in the failover.
    const replica = (await cluster.replicaOf(oldMaster))!;
    expect(replica).toBeDefined();
    cluster.pause(replica);
    const sentAtPause = sent;
    phases.push(phase('replica paused'));
    await new Promise((r) => setTimeout(r, 1500));
    await until('requests sent while the replica is behind', () => sent >= sentAtPause + 8, 30_000);
    killedAt = Date.now();
    await cluster.kill(oldMaster);
    cluster.resume(replica);
    phases.push(phase('master killed'));
    await until('the cluster promoted the replica', async () => ![undefined, oldMaster].includes(await cluster.masterOf(slot)), 60_000, 200);
    phases.push(phase(`replica promoted after ${Date.now() - killedAt} ms`));
    // The old master returns as the new master's replica: min-replicas-to-write lets the new master take writes again.
    await cluster.restart(oldMaster);
    const before = promised.length;
    await until('jobs are promised again after the failover', () => promised.length >= before + 100, 90_000);
    phases.push(phase(`promising again ${Date.now() - killedAt} ms after the kill`));
  } finally {
    running = false;
    await Promise.all(streams);
    console.log(`cluster failover: ${phases.join('; ')}`);
  }
  expect(refused).toBeGreaterThan(0);
  const missing: string[] = [];
  for (const id of promised) if ((await findJob(limiter, id)) === null) missing.push(id);
  console.log(`cluster failover: ${sent} requests, ${promised.length} jobs promised, ${refused} refused (503 or allowed), ${missing.length} promised jobs missing`);
  expect(missing).toEqual([]);
  await limiter.destroy();
  await limiter.close();
}, 240_000);
