'use strict';
/**
 * User-space instructions per request of a real HTTP server (./apps.js variants on the embedded MemoryStore),
 * framework and all: the server runs under valgrind's callgrind (one thread, fixed seeds, no address
 * randomisation) while autocannon, in this process, sends a fixed number of keep-alive requests from 50 tenants.
 * Two runs of different sizes are subtracted (start-up and most compilation cancel). Req/s on a shared 2-core
 * machine swings by a third between runs and mixes in the kernel's and the load generator's CPU; this count
 * does not, so `adapter + limiter ÷ bare framework` can be compared build against build. The kernel's share of a
 * request (the socket writes) is not counted: it is the same for both, so a real server's ratio is closer to 1.
 *
 *   npm run build && node bench/http/server-instructions.js [--variants=koa,koa+bulk-limiter(memory)]
 *     [--mode=allow|deny] [--requests=40000] [--base=path/to/dist/index.js]
 *
 * Deny: a budget of 50 per second, so nearly every request is denied (bare variants are measured allow only).
 * `--base`: each bulk-limiter variant again on that build (BENCH_CORE), right after the current one.
 */
const { spawn } = require('node:child_process');
const { resolve } = require('node:path');
const autocannon = require('autocannon');

const args = Object.fromEntries(
  process.argv.slice(2).map((a) => {
    const [k, ...v] = a.replace(/^--/, '').split('=');
    return [k, v.length ? v.join('=') : 'true'];
  }),
);

/** The server process: serves `total` requests of `variant`, then exits (callgrind prints its count). */
function serve(variant, total, global) {
  const http = require('node:http');
  const { VARIANTS } = require('./apps');
  const server = http.createServer(VARIANTS[variant](null, { global, perTenant: global, store: 'memory' }));
  server.keepAliveTimeout = 60_000;
  let served = 0;
  server.on('request', (_req, res) =>
    res.on('finish', () => {
      if (++served < total) return;
      server.closeAllConnections();
      server.close(() => process.exit(0));
    }),
  );
  server.listen(0, '127.0.0.1', () => process.stdout.write(`PORT ${server.address().port}\n`));
}

function count(variant, total, mode, core) {
  const global = mode === 'deny' ? 50 : 1e9;
  const env = core ? { ...process.env, BENCH_CORE: core } : process.env;
  const callgrind = ['--tool=callgrind', '--callgrind-out-file=/dev/null', '--cache-sim=no', '--branch-sim=no'];
  const node = [
    process.execPath,
    '--single-threaded',
    '--hash-seed=1',
    '--random-seed=1',
    __filename,
    'serve',
    variant,
    String(total),
    String(global),
  ];
  return new Promise((done, fail) => {
    const child = spawn('setarch', ['-R', 'valgrind', ...callgrind, ...node], { env });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    child.stdout.on('data', (d) => {
      const port = /PORT (\d+)/.exec(String(d))?.[1];
      if (port === undefined) return;
      const requests = Array.from({ length: 50 }, (_, i) => ({ method: 'GET', path: '/', headers: { 'x-tenant': `tenant-${i}` } }));
      autocannon({ url: `http://127.0.0.1:${port}`, connections: 10, amount: total, requests, timeout: 300 }, () => {});
    });
    child.on('exit', () => {
      const collected = /Collected : (\d+)/.exec(stderr);
      if (collected) done(Number(collected[1]));
      else fail(new Error(`callgrind counted nothing for ${variant}: ${stderr.slice(-1500)}`));
    });
  });
}

async function main() {
  const variants = (args.variants ?? 'koa,koa+bulk-limiter(memory)').split(',');
  const mode = args.mode ?? 'allow';
  const requests = Number(args.requests ?? 40_000);
  const warm = Math.round(requests / 4);
  const builds = [['current', undefined], ...(args.base ? [['base', resolve(args.base)]] : [])];
  console.log(`| variant | load | build | instructions / request (callgrind, server process) |\n| --- | --- | --- | --- |`);
  for (const variant of variants) {
    const limited = variant.includes('+');
    if (mode === 'deny' && !limited) continue;
    for (const [name, core] of limited ? builds : builds.slice(0, 1)) {
      const few = await count(variant, warm, mode, core);
      const many = await count(variant, warm + requests, mode, core);
      console.log(`| ${variant} | ${mode} | ${limited ? name : '-'} | ${Math.round((many - few) / requests).toLocaleString('en-US')} |`);
    }
  }
}

if (process.argv[2] === 'serve') serve(process.argv[3], Number(process.argv[4]), Number(process.argv[5]));
else
  main().catch((error) => {
    console.error(error);
    process.exit(1);
  });
