'use strict';
/**
 * The oldest waiting job's read cost against the backlog (not part of `npm run bench`; run after
 * `npm run build`: `node bench/oldest-waiting.js`). Fills one limiter with N jobs over 1,000 groups (a tenth
 * of them delayed an hour), moves some to ready, then times limiter.counts() and counts({ group }) on
 * RedisStore (round trip, and the server's µs per script from INFO commandstats) and on MemoryStore.
 * Also the memory of the two index keys (since, gsince) on Redis.
 */
const { requireCore } = require('./lib/package');
const { startRedis, resetStats } = require('./lib/redis');

/** The server's µs per EVALSHA (the script, commands inside it included) since the last reset. */
async function scriptUs(client) {
  const m = /cmdstat_evalsha:calls=(\d+),usec=(\d+)/.exec(await client.info('commandstats'));
  return m ? Number(m[2]) / Number(m[1]) : NaN;
}

const SIZES = (process.env.SIZES || '1000,100000').split(',').map(Number);
const READS = 500;

async function fill(limiter, from, to) {
  const inFlight = 200;
  let next = from;
  async function lane() {
    while (next < to) {
      const i = next++;
      await limiter.enqueue(`g${i % 1000}`, { type: 't', payload: { i }, delayMs: i % 10 === 0 ? 3_600_000 : 0 });
    }
  }
  await Promise.all(Array.from({ length: inFlight }, lane));
}

async function timeReads(read) {
  const samples = [];
  for (let i = 0; i < READS; i++) {
    const t0 = process.hrtime.bigint();
    await read(i);
    samples.push(Number(process.hrtime.bigint() - t0) / 1000);
  }
  samples.sort((a, b) => a - b);
  return samples[Math.floor(samples.length / 2)];
}

async function measure(name, limiter, client) {
  let filled = 0;
  for (const n of SIZES) {
    if (client) await resetStats(client);
    await fill(limiter, filled, n);
    const enqueueUs = client ? await scriptUs(client) : undefined;
    filled = n;
    await limiter.queue?.dispatch?.({ readyMax: 1000, moveMax: 1000, promoteMax: 1000, scanMax: 1000 });
    const counts = await limiter.counts();
    if (client) await resetStats(client);
    const allUs = await timeReads(() => limiter.counts());
    const serverAll = client ? await scriptUs(client) : undefined;
    if (client) await resetStats(client);
    const groupUs = await timeReads((i) => limiter.counts({ group: `g${i % 1000}` }));
    const serverGroup = client ? await scriptUs(client) : undefined;
    const line = [
      `${name} ${n.toLocaleString('en-US')} jobs (${counts.delayed} delayed, ${counts.ready} ready):`,
      `counts() p50 ${allUs.toFixed(0)} µs`,
      serverAll ? `(script ${serverAll.toFixed(1)} µs on the server)` : '',
      `· counts({ group }) p50 ${groupUs.toFixed(0)} µs`,
      serverGroup ? `(script ${serverGroup.toFixed(1)} µs on the server)` : '',
      `· oldestWaitingMs ${counts.oldestWaitingMs}`,
      enqueueUs ? `· enqueue script ${enqueueUs.toFixed(1)} µs on the server` : '',
    ];
    if (client) {
      const [since, gsince] = await Promise.all([
        client.memory('USAGE', `{bl:${limiter.name}}:since`),
        client.memory('USAGE', `{bl:${limiter.name}}:gsince`),
      ]);
      line.push(`· index ${((Number(since) + Number(gsince)) / n).toFixed(0)} B/job`);
    }
    console.log(line.filter(Boolean).join(' '));
  }
}

async function main() {
  const core = requireCore();
  const server = await startRedis();
  try {
    const client = server.client();
    const options = { name: 'oldest', limit: 1000, windowMs: 1000, maxBacklog: 1e9, maxDeferMs: 86_400_000 };
    await measure('RedisStore', core.createLimiter({ store: new core.RedisStore({ client }), ...options }), client);
    await measure('MemoryStore', core.createLimiter({ store: new core.MemoryStore(), ...options }));
  } finally {
    await server.stop();
  }
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
