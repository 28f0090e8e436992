'use strict';
/**
 * The user-space machine instructions an HTTP server variant of section 2 spends per request (parsing, routing,
 * the limiter, the answer): the server (./server.js) runs under valgrind's callgrind (one thread, fixed seeds, no
 * address randomisation) and autocannon sends it a fixed number of requests after a fixed warm-up, twice with
 * different numbers; the difference of the two totals over the difference of the numbers cancels start-up,
 * warm-up and shutdown. Kernel time (socket reads and writes) is not counted, and neither is redis-server's: on
 * RedisStore this is the server's own share (the ioredis client included). Deterministic enough (~1 %) to compare
 * builds and frameworks on a busy machine, where req/s and CPU time are not; the server is ~50× slower under
 * callgrind, so RedisStore batches are larger than at full speed (fewer client instructions per check).
 *
 *   npm run build && node bench/http/server-instructions.js [--variants=koa,koa+bulk-limiter] [--mode=allow|deny]
 *     [--store=memory|redis] [--requests=4000] [--base=path/to/dist/index.js]
 *
 * `--base`: every variant with bulk-limiter also runs on that other build (BENCH_CORE, core and adapters).
 * Deny-heavy: a global budget of 50/s (bulk-limiter), so nearly every request is denied.
 */
const { fork } = require('node:child_process');
const { resolve, join } = require('node:path');
const autocannon = require('autocannon');
const { startRedis } = require('../lib/redis');

const args = Object.fromEntries(
  process.argv.slice(2).map((a) => {
    const [k, v] = a.replace(/^--/, '').split('=');
    return [k, v ?? 'true'];
  }),
);
const variants = (args.variants ?? 'express,express+bulk-limiter,koa,koa+bulk-limiter,fastify,fastify+bulk-limiter').split(',');
const mode = args.mode ?? 'allow';
const store = args.store ?? 'memory';
const requests = Number(args.requests ?? 3000);
const base = args.base && resolve(args.base);
const TENANTS = 50;
const WARM_UP = 5000;

function load(port, amount) {
  let n = 0;
  return autocannon({
    url: `http://127.0.0.1:${port}/`,
    connections: 20,
    amount,
    timeout: 60,
    requests: [{ method: 'GET', path: '/', setupRequest: (req) => ({ ...req, headers: { ...req.headers, 'x-tenant': `tenant-${n++ % TENANTS}` } }) }],
  });
}

/** Total instructions of one server run that answers WARM_UP then `amount` requests. */
async function count(variant, build, amount) {
  const redis = await startRedis();
  const limits = mode === 'deny' ? { global: 50, perTenant: 1, store } : { global: 10_000_000, perTenant: 10_000_000, store };
  let stderr = '';
  const child = fork(join(__dirname, 'server.js'), [JSON.stringify({ variant, redisPort: redis.port, limits })], {
    execPath: 'setarch',
    execArgv: [
      '-R',
      'valgrind',
      '--tool=callgrind',
      '--callgrind-out-file=/dev/null',
      '--cache-sim=no',
      '--branch-sim=no',
      process.execPath,
      '--single-threaded',
      '--hash-seed=1',
      '--random-seed=1',
    ],
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    env: build === undefined ? process.env : { ...process.env, BENCH_CORE: build },
  });
  child.stderr.on('data', (d) => (stderr += d));
  const exited = new Promise((done) => child.once('exit', done));
  try {
    const port = await new Promise((ok, fail) => {
      child.once('message', (m) => (m.error ? fail(new Error(m.error)) : ok(m.port)));
      child.once('exit', (code) => fail(new Error(`server exited (${code}): ${stderr.slice(-500)}`)));
    });
    const warm = await load(port, WARM_UP);
    const r = await load(port, amount);
    if (warm.errors + r.errors + r.timeouts > 0) throw new Error(`${variant}: ${r.errors} errors, ${r.timeouts} timeouts`);
    child.send('stop');
    await exited;
    const match = /Collected : (\d+)/.exec(stderr);
    if (!match) throw new Error(`callgrind counted nothing: ${stderr.slice(-1000)}`);
    return { total: Number(match[1]), non2xx: r.non2xx };
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
    await redis.stop();
  }
}

async function main() {
  console.log(`| server | load | store | build | instructions / request | non-2xx |\n| --- | --- | --- | --- | --- | --- |`);
  for (const variant of variants) {
    for (const build of base && variant.includes('bulk-limiter') ? [undefined, base] : [undefined]) {
      process.stderr.write(`counting ${variant}${build ? ' [base]' : ''} (${mode}-heavy, ${store}) …\n`);
      const few = await count(variant, build, requests);
      const many = await count(variant, build, 3 * requests);
      const per = (many.total - few.total) / (2 * requests);
      const denied = (many.non2xx - few.non2xx) / (2 * requests);
      console.log(
        `| ${variant} | ${mode} | ${store} | ${build ? 'base' : 'current'} | ${Math.round(per).toLocaleString('en-US')} | ${(100 * denied).toFixed(0)} % |`,
      );
    }
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
