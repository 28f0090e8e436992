/**
 * A 202 is a promise, on Redis Cluster: 3 masters with a replica each, set up as docs/operations.md advises (AOF,
 * min-replicas-to-write 1), a limiter with durability { replicas: 1 }. Its deferrals go to the master of the
 * limiter's slot and are confirmed with WAIT there. Requests are deferred while that master's replica falls
 * behind (SIGSTOP for 1.5 s) and the master is SIGKILLed; the cluster promotes the replica, the old master
 * comes back as the new one's replica, and the limiter's durable connection follows. Every job a request was promised (a decision carrying a job) is
 * found afterwards: none lost. The others were answered without a job (503 while unconfirmed). Without
 * `durability` the same run promised 841 jobs and lost 334 of them (those taken while the replica was behind).
 * The durable connection also follows a manual failover (the old master closes it) and a slot moved to
 * another master (the old one answers MOVED).
 */
import { createLimiter, type Limiter } from '../../src/limiter/limiter';
import { limiterKeys } from '../../src/redis/keys';
import { RedisStore } from '../../src/redis/redis-store';
import { startCluster, type RedisCluster } from '../helpers/redis-cluster';

let cluster: RedisCluster;
beforeAll(async () => {
  cluster = await startCluster(3, { replicas: 1 });
}, 120_000);
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

/** A limiter on the cluster with durability { replicas: 1 }, and the slot of its keys. */
async function durableLimiter(name: string, limit = 100_000) {
  const client = cluster.client();
  client.on('error', () => undefined);
  const slot = Number(await client.cluster('KEYSLOT', limiterKeys('bl', name).jobs));
  const silent = { warn: () => undefined, error: () => undefined };
  // The stream's budget is one request per 36 ms: nearly every request is deferred.
  const limiter = createLimiter({
    store: new RedisStore({ client }),
    name,
    limit,
    tuning: { burst: 1 },
    windowMs: 3_600_000,
    maxBacklog: 100_000,
    onStoreError: 'deny',
    timeoutMs: 1000,
    durability: { replicas: 1, timeoutMs: 500 },
    logger: silent,
  });
  return { limiter, slot, client };
}

/** A durable limiter, and four clients deferring requests to it until stopped. */
async function durableStream(name: string) {
  const { limiter, slot } = await durableLimiter(name);
  const counts = { sent: 0, refused: 0 }; // refused: answered without a job (allowed now, or 503 while unconfirmed)
  const promised: string[] = [];
  let running = true;
  // 16 KB per job: while the replica is paused, the replication stream soon fills the sockets' buffers, and
  // what the master takes then is on the master only (in a small stream the kernel would still deliver it).
  const filler = 'x'.repeat(16_000);
  // Four clients, each sending its next request 5 ms after the last answer.
  const streams = Array.from({ length: 4 }, async () => {
    while (running) {
      const n = counts.sent++;
      const d = await limiter.check('tenant', { defer: { type: 'work', payload: { n, filler }, idempotencyKey: `req-${n}` } }).catch(() => undefined);
      if (d?.job) promised.push(d.job.id);
      else counts.refused += 1;
      await new Promise((r) => setTimeout(r, 5));
    }
  });
  return {
    limiter,
    slot,
    counts,
    promised,
    phase: (what: string): string => `${what}: ${counts.sent} sent, ${promised.length} promised, ${counts.refused} refused`,
    stop: async () => {
      running = false;
      await Promise.all(streams);
    },
    /** The promised jobs not found. */
    missing: async () => {
      const missing: string[] = [];
      for (const id of promised) if ((await findJob(limiter, id)) === null) missing.push(id);
      return missing;
    },
  };
}

test('a Cluster master killed mid-stream loses no confirmed (202) job', async () => {
  const run = await durableStream(`cluster-failover-${process.pid}`);
  const { slot, promised } = run;
  const oldMaster = (await cluster.masterOf(slot))!;
  expect(oldMaster).toBeDefined();
  let killedAt = 0;
  const phases: string[] = [];
  try {
    await until('some jobs promised', () => promised.length >= 100, 30_000);
    phases.push(run.phase('before the fault'));
    // The replica falls behind (a slow replica, a congested link): what the master takes meanwhile is on the
    // master only. Without durability those jobs are promised all the same, and lost in the failover.
    const replica = (await cluster.replicaOf(oldMaster))!;
    expect(replica).toBeDefined();
    cluster.pause(replica);
    const sentAtPause = run.counts.sent;
    phases.push(run.phase('replica paused'));
    try {
      await new Promise((r) => setTimeout(r, 1500));
      await until('requests sent while the replica is behind', () => run.counts.sent >= sentAtPause + 8, 30_000);
      killedAt = Date.now();
      await cluster.kill(oldMaster);
    } finally {
      cluster.resume(replica);
    }
    phases.push(run.phase('master killed'));
    await until('the cluster promoted the replica', async () => ![undefined, oldMaster].includes(await cluster.masterOf(slot)), 60_000, 200);
    phases.push(run.phase(`replica promoted after ${Date.now() - killedAt} ms`));
    // The old master returns as the new master's replica: min-replicas-to-write lets the new master take writes again.
    await cluster.restart(oldMaster);
    const before = promised.length;
    await until('jobs are promised again after the failover', () => promised.length >= before + 100, 90_000);
    phases.push(run.phase(`promising again ${Date.now() - killedAt} ms after the kill`));
  } finally {
    await run.stop();
    console.log(`cluster failover: ${phases.join('; ')}`);
  }
  expect(run.counts.refused).toBeGreaterThan(0);
  const missing = await run.missing();
  console.log(
    `cluster failover: ${run.counts.sent} requests, ${promised.length} jobs promised, ${run.counts.refused} refused (503 or allowed), ${missing.length} promised jobs missing`,
  );
  expect(missing).toEqual([]);
  await run.limiter.destroy();
  await run.limiter.close();
}, 240_000);

test('a manual failover (the old master stays up as a replica): the durable connection follows the slot to its new master', async () => {
  const run = await durableStream(`cluster-switch-${process.pid}`);
  const { slot, promised } = run;
  const phases: string[] = [];
  try {
    await until('some jobs promised', () => promised.length >= 50, 30_000);
    const oldMaster = (await cluster.masterOf(slot))!;
    const replica = (await cluster.replicaOf(oldMaster))!;
    expect(replica).toBeDefined();
    phases.push(run.phase('before the switch'));
    const switchedAt = Date.now();
    await cluster.promote(replica);
    await until('the replica took over', async () => (await cluster.masterOf(slot)) === replica, 60_000, 200);
    const before = promised.length;
    await until('jobs are promised again on the new master', () => promised.length >= before + 50, 60_000);
    phases.push(run.phase(`promising again ${Date.now() - switchedAt} ms after the switch`));
  } finally {
    await run.stop();
    console.log(`cluster manual failover: ${phases.join('; ')}`);
  }
  const missing = await run.missing();
  console.log(
    `cluster manual failover: ${run.counts.sent} requests, ${promised.length} jobs promised, ${run.counts.refused} refused, ${missing.length} promised jobs missing`,
  );
  expect(missing).toEqual([]);
  await run.limiter.destroy();
  await run.limiter.close();
}, 180_000);

test('a slot moved to another master: the durable connection follows the MOVED reply', async () => {
  const { limiter, slot } = await durableLimiter(`cluster-moved-${process.pid}`, 1000);
  let n = 0;
  const deferOne = async () => (await limiter.check('tenant', { defer: { type: 'work', payload: { n }, idempotencyKey: `m-${n++}` } })).job;
  const promised = async (what: string) => {
    let job: Awaited<ReturnType<typeof deferOne>>;
    await until(what, async () => (job = await deferOne()) !== undefined, 30_000, 50);
    return job!;
  };
  const first = await promised('a job promised');
  const from = (await cluster.masterOf(slot))!;
  let to: number | undefined; // another master (one with a replica)
  for (const port of cluster.ports) if (port !== from && (await cluster.replicaOf(port)) !== undefined) to = port;
  expect(to).toBeDefined();
  await cluster.moveSlot(slot, from, to!);
  expect(await cluster.masterOf(slot)).toBe(to);
  // The old master answers the next write MOVED (that request gets no job); the writes after it go to the new one.
  const second = await promised('a job promised on the new master');
  for (const job of [first, second]) expect(await findJob(limiter, job.id)).not.toBeNull();
  await limiter.destroy();
  await limiter.close();
}, 120_000);
