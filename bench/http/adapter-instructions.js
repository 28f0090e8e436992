'use strict';
/**
 * The machine instructions one request costs in each adapter (Express, Koa, Fastify's hook) and in the check they
 * wrap (`check`: `limiter.check()` alone), without HTTP: the middleware called with stand-in request and response
 * objects on the embedded MemoryStore, 100 in flight, counted over two runs of different sizes (their difference
 * cancels start-up and most compilation). Deterministic where req/s and CPU time swing on a busy machine; compare
 * builds with `--base=<other dist/>` (e.g. a copy of dist/ made before a change).
 *
 *   npm run build && node bench/http/adapter-instructions.js [--base=path/to/dist] [--current=dist] [--requests=40000] [--rounds=1]
 *     [--frameworks=check,express,koa,fastify] [--modes=allow,deny] [--counter=callgrind|perf]
 *
 * Counter: valgrind's callgrind (default; all threads, node run with `--single-threaded` and fixed hash and random
 * seeds, address randomisation off: two runs of one build agree within ~3 %) or `perf stat -e instructions:u` (needs hardware
 * counters, which many VMs lack; a few % of noise from the compiler and GC threads). Each figure is the median of
 * `rounds` differences, builds interleaved. Time is simulated (20 µs a request, the MemoryStore's `clock`), so a run
 * makes the same decisions every time. Deny: a limit of 50 per second, so nearly every request is denied.
 */
const { execFileSync, spawnSync } = require('node:child_process');
const { join, resolve } = require('node:path');

const args = Object.fromEntries(process.argv.slice(2).map((a) => a.replace(/^--/, '').split('=')));
const TENANTS = 50;

/** A stand-in response: methods on a prototype, so making one costs one small object (not the adapter's cost). */
class Response {
  constructor() {
    this.statusCode = 200;
    this.headers = {};
    this.writableFinished = false;
    this.destroyed = false;
    this.done = undefined;
  }
  status(code) {
    this.statusCode = code;
    return this;
  }
  setHeader(name, value) {
    this.headers[name] = value;
    return this;
  }
  end() {
    this.done();
  }
  once() {}
  off() {}
}

/** Fastify's reply as the hook uses it. */
class Reply {
  constructor(done) {
    this.raw = new Response();
    this.statusCode = 200;
    this.done = done;
  }
  header(name, value) {
    this.raw.headers[name] = value;
    return this;
  }
  headers(fields) {
    for (const name in fields) this.raw.headers[name] = fields[name];
    return this;
  }
  code(status) {
    this.statusCode = status;
    return this;
  }
  type() {
    return this;
  }
  send() {
    this.done();
  }
}

/** One request through `framework` as a function of its index, answering a promise when it is done. */
async function oneRequest(dist, framework, limiter, tenants) {
  if (framework === 'check') return (i) => limiter.check(tenants[i % TENANTS]);
  if (framework === 'express') {
    const { bulkLimiter } = require(join(dist, 'middleware', 'express.js'));
    const middleware = bulkLimiter({ limiter, group: (req) => req.headers['x-tenant'] });
    return (i) =>
      new Promise((done) => {
        const res = new Response();
        res.done = done;
        middleware({ headers: { 'x-tenant': tenants[i % TENANTS] } }, res, done);
      });
  }
  if (framework === 'koa') {
    const { bulkLimiter } = require(join(dist, 'middleware', 'koa.js'));
    const middleware = bulkLimiter({ limiter, group: (ctx) => ctx.headers['x-tenant'] });
    const next = () => Promise.resolve();
    return (i) => {
      const res = new Response();
      const ctx = {
        headers: { 'x-tenant': tenants[i % TENANTS] },
        res,
        response: { headers: res.headers },
        state: {},
        set(fields) {
          for (const name in fields) res.setHeader(name, fields[name]);
        },
        status: 404,
        type: '',
        body: undefined,
      };
      return middleware(ctx, next);
    };
  }
  // Fastify: the hook the plugin adds to a route, called as Fastify calls it
  const Fastify = require(require.resolve('fastify', { paths: [dist] }));
  const { bulkLimiter } = require(join(dist, 'middleware', 'fastify.js'));
  const app = Fastify();
  let hook;
  await app.register(async (scope) => {
    await scope.register(bulkLimiter, { limiter, group: (request) => request.headers['x-tenant'] });
    scope.addHook('onRoute', (route) => {
      hook = [route.onRequest].flat().at(-1);
    });
    scope.get('/', async () => 'ok');
  });
  await app.ready();
  return (i) => new Promise((done) => hook({ headers: { 'x-tenant': tenants[i % TENANTS] } }, new Reply(done), done));
}

/** One run in this process: `worker <dist> <framework> <allow|deny> <requests>`. */
async function worker(dist, framework, mode, requests) {
  const core = require(join(dist, 'index.js'));
  const deny = mode === 'deny';
  // simulated time, 20 µs a request: the same run makes the same decisions
  let now = 1_700_000_000_000;
  const store = new core.MemoryStore({ clock: () => now });
  const limiter = core.createLimiter({ store, name: 'bench', limit: deny ? 50 : 1e9, windowMs: 1000 });
  const tenants = Array.from({ length: TENANTS }, (_, i) => `tenant-${i}`);
  const one = await oneRequest(dist, framework, limiter, tenants);
  let sent = 0;
  const lane = async () => {
    while (sent < requests) {
      now += 0.02;
      await one(sent++);
    }
  };
  await Promise.all(Array.from({ length: 100 }, lane));
  await limiter.close();
}

/** Instructions of one worker run. */
function instructions(counter, dist, framework, mode, requests) {
  const script = [__filename, 'worker', dist, framework, mode, String(requests)];
  if (counter === 'perf') {
    const run = spawnSync('perf', ['stat', '-x', ',', '-e', 'instructions:u', process.execPath, ...script], { encoding: 'utf8' });
    const line = run.stderr.split('\n').find((l) => l.includes('instructions'));
    const value = line ? Number(line.split(',')[0]) : NaN;
    if (!Number.isFinite(value)) throw new Error(`perf stat counted nothing (no hardware counters here? try --counter=callgrind): ${run.stderr}`);
    return value;
  }
  // one thread, fixed seeds, no address randomisation: the same run counts the same instructions
  const run = spawnSync(
    'setarch',
    [
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
      ...script,
    ],
    { encoding: 'utf8' },
  );
  const match = /Collected : (\d+)/.exec(run.stderr);
  if (!match) throw new Error(`callgrind counted nothing: ${run.stderr.slice(-2000)}`);
  return Number(match[1]);
}

function main() {
  const counter = args.counter ?? 'callgrind';
  execFileSync(counter === 'perf' ? 'perf' : 'valgrind', ['--version']);
  const requests = Number(args.requests ?? 40_000);
  const rounds = Number(args.rounds ?? 1);
  const small = Math.max(1000, Math.round(requests / 8));
  const frameworks = (args.frameworks ?? 'check,express,koa,fastify').split(',');
  const modes = (args.modes ?? 'allow,deny').split(',');
  const current = resolve(args.current ?? join(__dirname, '..', '..', 'dist'));
  const builds = [['current', current], ...(args.base ? [['base', resolve(args.base)]] : [])];
  console.log(`| adapter | load | build | instructions / request (${counter}) |\n| --- | --- | --- | --- |`);
  for (const framework of frameworks) {
    for (const mode of modes) {
      for (const [name, dist] of builds) {
        const per = [];
        for (let round = 0; round < rounds; round++) {
          const few = instructions(counter, dist, framework, mode, small);
          per.push((instructions(counter, dist, framework, mode, small + requests) - few) / requests);
        }
        const median = per.sort((a, b) => a - b)[Math.floor((per.length - 1) / 2)];
        console.log(
          `| ${framework} | ${mode} | ${name} | ${Math.round(median).toLocaleString('en-US')}${rounds > 1 ? ` (${per.map((x) => Math.round(x).toLocaleString('en-US')).join(', ')})` : ''} |`,
        );
      }
    }
  }
}

if (process.argv[2] === 'worker') {
  const [dist, framework, mode, requests] = process.argv.slice(3);
  worker(dist, framework, mode, Number(requests)).then(() => process.exit(0));
} else main();
