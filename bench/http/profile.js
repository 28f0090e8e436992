'use strict';
/**
 * Where an adapter's server CPU goes: each variant's server process (./server.js) runs under `node --cpu-prof`
 * (./profile-server.js) while autocannon drives it as sections/http.js does (a 2 s warm-up, not profiled), then
 * the server's CPU time (process.cpuUsage) is divided by the requests served, and split over functions by
 * their share of the profile's self time (µs per request: less noise-sensitive than req/s on a shared machine).
 *
 *   npm run build && node bench/http/profile.js [--variants=koa,koa+bulk-limiter] [--mode=allow|deny]
 *     [--store=redis|memory] [--seconds=6] [--top=15] [--out=/tmp/bl-prof] [--rounds=1] [--base=path/to/dist/index.js]
 *
 * `--instructions`: no V8 profile; `perf stat -e instructions:u` attached to the server for the measured span
 * (its main thread: not the JIT compiler or GC helper threads) gives user-space instructions per request, which a busy machine does not inflate the way it does CPU time.
 *
 * `--base`: every variant with bulk-limiter also runs on that other build (BENCH_CORE, core and adapters), right
 * after the current one; `--rounds=3` repeats the whole list and reports the median CPU per request of each
 * (variant, build), and the self time of its last round.
 *
 * With `--store=redis` it also reports what redis-server spent per request over the measured span: its process CPU
 * (INFO cpu, user + system: scripts, network, event loop), its scripts' time (INFO commandstats, EVALSHA and EVAL,
 * the commands they call included) and the requests per script call (the RedisStore's batch): the store's share.
 *
 * Deny-heavy: a global budget of 500/s (bulk-limiter) or 10/s per tenant (peers), so most requests are denied.
 */
const { fork } = require('node:child_process');
const { mkdirSync, readFileSync, rmSync } = require('node:fs');
const { join } = require('node:path');
const autocannon = require('autocannon');
const { startRedis, resetStats, serverCpuUs } = require('../lib/redis');

const args = Object.fromEntries(
  process.argv.slice(2).map((a) => {
    const [k, v] = a.replace(/^--/, '').split('=');
    return [k, v ?? 'true'];
  }),
);
const variants = (args.variants ?? 'express,express+bulk-limiter,koa,koa+bulk-limiter,fastify,fastify+bulk-limiter').split(',');
const mode = args.mode ?? 'allow';
const store = args.store ?? 'redis';
const seconds = Number(args.seconds ?? 6);
const top = Number(args.top ?? 15);
const outDir = args.out ?? '/tmp/bl-prof';
const rounds = Number(args.rounds ?? 1);
const instructions = args.instructions === 'true';
const base = args.base && require('node:path').resolve(args.base);
const TENANTS = 50;
const HUGE = 10_000_000;
/** The built package's files (not other packages' dist/ folders). */
const OWN_DIST = `file://${join(__dirname, '..', '..', 'dist')}/`;
const OWN_DIST_NAME = '/dist/';

function load(port, durationS) {
  let n = 0;
  return autocannon({
    url: `http://127.0.0.1:${port}/`,
    connections: 100,
    duration: durationS,
    requests: [{ method: 'GET', path: '/', setupRequest: (req) => ({ ...req, headers: { ...req.headers, 'x-tenant': `tenant-${n++ % TENANTS}` } }) }],
  });
}

async function profileOne(variant, build) {
  const dir = join(outDir, `${variant.replace(/[^\w+-]/g, '_')}-${mode}-${store}-${build === undefined ? 'current' : 'base'}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const redis = await startRedis();
  const limits = mode === 'deny' ? { global: 500, perTenant: 10, store } : { global: HUGE, perTenant: HUGE, store };
  const child = fork(join(__dirname, 'profile-server.js'), [JSON.stringify({ variant, redisPort: redis.port, limits })], {
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    env: build === undefined ? process.env : { ...process.env, BENCH_CORE: build },
  });
  const reply = (type) =>
    new Promise((resolve) =>
      child.on('message', function on(m) {
        if (m && m.type === type) {
          child.off('message', on);
          resolve(m);
        }
      }),
    );
  try {
    const port = await new Promise((resolve, reject) => {
      child.once('message', (m) => (m.error ? reject(new Error(m.error)) : resolve(m.port)));
      child.once('exit', (code) => reject(new Error(`server exited (${code})`)));
    });
    await load(port, 2); // JIT and connection warm-up
    const probe = redis.client();
    await resetStats(probe);
    const redisCpuBefore = await serverCpuUs(probe);
    const started = reply('profile-started');
    child.send({ type: 'profile-start', instructions });
    await started;
    const perf = instructions ? countInstructions(child.pid) : undefined;
    const r = await load(port, seconds);
    const file = join(dir, 'server.cpuprofile');
    const stopped = reply('profile-stopped');
    child.send({ type: 'profile-stop', file });
    const { cpuUs, requests: served } = await stopped;
    const counted = perf && (await perf.stop());
    const redisCpu = (await serverCpuUs(probe)) - redisCpuBefore;
    const commands = await scriptCalls(probe);
    child.send('stop');
    const requests = served;
    const storeCost = { redisCpuUs: redisCpu, commandUs: commands.usec, commands: commands.calls };
    if (instructions)
      return {
        variant: build === undefined ? variant : `${variant} [base]`,
        requests,
        non2xx: r.non2xx,
        reqPerSec: (r['2xx'] + r.non2xx) / r.duration,
        cpuUs,
        instructions: counted,
        store: storeCost,
        busy: 1,
        self: new Map(),
        byPackage: new Map(),
      };
    return {
      variant: build === undefined ? variant : `${variant} [base]`,
      requests,
      non2xx: r.non2xx,
      reqPerSec: requests / r.duration,
      cpuUs,
      store: storeCost,
      ...summarise(file, build === undefined ? OWN_DIST : `file://${require('node:path').dirname(build)}/`),
    };
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
    await redis.stop();
  }
}

/** The µs and calls of EVALSHA and EVAL since the last RESETSTAT (their commands' time is inside theirs). */
async function scriptCalls(client) {
  const info = await client.info('commandstats');
  let usec = 0;
  let calls = 0;
  for (const m of info.matchAll(/^cmdstat_(?:evalsha|eval):calls=(\d+),usec=(\d+)/gm)) {
    calls += Number(m[1]);
    usec += Number(m[2]);
  }
  return { usec, calls };
}

/** `perf stat` on a running process until stop() (SIGINT): its user-space instruction count. */
function countInstructions(pid) {
  const perf = require('node:child_process').spawn('perf', ['stat', '-x', ',', '-e', 'instructions:u', '-t', String(pid)], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let out = '';
  perf.stderr.on('data', (d) => (out += d));
  const exited = new Promise((resolve) => perf.once('exit', resolve));
  return {
    async stop() {
      perf.kill('SIGINT');
      await exited;
      const line = out.split('\n').find((l) => l.includes('instructions'));
      return line ? Number(line.split(',')[0]) : NaN;
    },
  };
}

/** Self time per function (µs), busy time (all but idle) of a .cpuprofile. */
function summarise(file, ownDist) {
  const profile = JSON.parse(readFileSync(file, 'utf8'));
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map();
  const byPackage = new Map();
  const deltas = profile.timeDeltas;
  let busy = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const node = byId.get(profile.samples[i]);
    const dt = deltas[i + 1] ?? 0;
    const { functionName, url, lineNumber } = node.callFrame;
    if (functionName === '(idle)') continue;
    busy += dt;
    const own = url.startsWith(ownDist) || url.startsWith(ownDist.slice('file://'.length));
    const where = url
      ? `${own ? `dist/${url.slice(url.indexOf(OWN_DIST_NAME) + OWN_DIST_NAME.length)}` : url.replace(/^.*node_modules\//, '')}:${lineNumber + 1}`
      : '';
    const key = `${functionName || '(anonymous)'} ${where}`.trim();
    self.set(key, (self.get(key) ?? 0) + dt);
    const pkg = own
      ? 'bulk-limiter'
      : url.includes('node_modules/')
        ? url.replace(/^.*node_modules\/((@[^/]+\/)?[^/]+).*$/, '$1')
        : url
          ? 'node'
          : 'native';
    byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + dt);
  }
  return { busy, self, byPackage };
}

async function main() {
  const runs = new Map();
  for (let round = 1; round <= rounds; round++) {
    for (const v of variants) {
      for (const build of base && v.includes('bulk-limiter') ? [undefined, base] : [undefined]) {
        process.stderr.write(`profiling ${v}${build ? ' [base]' : ''} (${mode}-heavy, ${store}), round ${round}/${rounds} …\n`);
        const r = await profileOne(v, build);
        runs.set(r.variant, [...(runs.get(r.variant) ?? []), r]);
      }
    }
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
  for (const all of runs.values()) {
    const r = all[all.length - 1];
    const per = r.cpuUs / r.requests;
    if (instructions) {
      const per = all.map((x) => x.instructions / x.requests);
      console.log(
        `${r.variant}: median of ${all.length} rounds ${Math.round(median(per))} instructions/request (${per.map((x) => Math.round(x)).join(', ')}), ${Math.round(median(all.map((x) => x.reqPerSec)))} req/s`,
      );
      continue;
    }
    if (all.length > 1) {
      console.log(
        `\n${r.variant}: median of ${all.length} rounds ${median(all.map((x) => x.cpuUs / x.requests)).toFixed(1)} µs CPU/request (${all.map((x) => (x.cpuUs / x.requests).toFixed(1)).join(', ')}), ${Math.round(median(all.map((x) => x.reqPerSec)))} req/s`,
      );
    }
    const scale = per / r.busy; // µs of CPU per µs of sampled (non-idle) self time, per request
    console.log(
      `\n### ${r.variant}, ${mode}-heavy, ${store}: ${Math.round(r.reqPerSec)} req/s, ${((100 * r.non2xx) / r.requests).toFixed(1)} % non-2xx, ${per.toFixed(1)} µs CPU/request`,
    );
    if (store === 'redis' && r.store.commands > 0) {
      const { redisCpuUs: redisUs, commandUs, commands } = r.store;
      console.log(
        `redis-server: ${(redisUs / r.requests).toFixed(1)} µs CPU/request (${(commandUs / r.requests).toFixed(1)} µs in scripts), ${(r.requests / commands).toFixed(1)} requests per script call`,
      );
    }
    const packages = [...r.byPackage.entries()].sort((a, b) => b[1] - a[1]).slice(0, 8);
    console.log(`by package: ${packages.map(([name, us]) => `${name} ${(us * scale).toFixed(1)} µs`).join(', ')}`);
    const own = [...r.self.entries()]
      .filter(([name]) => name.includes(' dist/'))
      .sort((a, b) => b[1] - a[1])
      .slice(0, 8);
    console.log(`bulk-limiter: ${own.map(([name, us]) => `${name.replace(/ dist\//, ' ')} ${(us * scale).toFixed(2)}`).join(', ') || '-'}`);
    const rows = [...r.self.entries()].sort((a, b) => b[1] - a[1]).slice(0, top);
    for (const [name, us] of rows)
      console.log(`${(us * scale).toFixed(2).padStart(7)} µs  ${((100 * us) / r.busy).toFixed(1).padStart(5)} %  ${name}`);
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
