'use strict';
/**
 * The machine instructions one request costs in the Express and Koa adapters and the check they wrap, without
 * HTTP: the middleware called with stand-in request and response objects on the embedded MemoryStore, 100 in
 * flight, counted by `perf stat -e instructions:u` over two runs of different sizes (their difference cancels
 * start-up and most compilation). Deterministic where req/s and CPU time swing on a busy machine; compare builds
 * with `--base=<other dist/>` (e.g. a copy of dist/ made before a change).
 *
 *   npm run build && node bench/http/adapter-instructions.js [--base=path/to/dist] [--requests=200000] [--rounds=3]
 *
 * Each figure is the median of `rounds` differences (the compiler and GC threads are counted too, so single runs
 * vary by a few percent), builds interleaved.
 */
const { execFileSync, spawnSync } = require('node:child_process');
const { join, resolve } = require('node:path');

const args = Object.fromEntries(process.argv.slice(2).map((a) => a.replace(/^--/, '').split('=')));

/** One run in this process: `worker <dist> <framework> <allow|deny> <requests>`. */
async function worker(dist, framework, mode, requests) {
  const core = require(join(dist, 'index.js'));
  const deny = mode === 'deny';
  const limiter = core.createLimiter({ store: new core.MemoryStore(), name: 'bench', limit: deny ? 50 : 1e9, windowMs: 1000 });
  const tenants = Array.from({ length: 50 }, (_, i) => `tenant-${i}`);
  const response = () => ({
    statusCode: 200,
    headers: {},
    status(code) {
      this.statusCode = code;
      return this;
    },
    setHeader(name, value) {
      this.headers[name] = value;
      return this;
    },
    end() {},
    writableFinished: false,
    destroyed: false,
    once() {},
    off() {},
  });
  const { bulkLimiter } = require(join(dist, 'middleware', `${framework}.js`));
  let one;
  if (framework === 'express') {
    const middleware = bulkLimiter({ limiter, group: (req) => req.headers['x-tenant'] });
    one = (i) =>
      new Promise((done) => {
        const res = response();
        res.end = done;
        middleware({ headers: { 'x-tenant': tenants[i % 50] } }, res, done);
      });
  } else {
    const middleware = bulkLimiter({ limiter, group: (ctx) => ctx.headers['x-tenant'] });
    const next = () => Promise.resolve();
    one = (i) => {
      const res = response();
      const ctx = {
        headers: { 'x-tenant': tenants[i % 50] },
        res,
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
  let sent = 0;
  const lane = async () => {
    while (sent < requests) await one(sent++);
  };
  await Promise.all(Array.from({ length: 100 }, lane));
  await limiter.close();
}

function instructions(dist, framework, mode, requests) {
  const run = spawnSync(
    'perf',
    ['stat', '-x', ',', '-e', 'instructions:u', process.execPath, __filename, 'worker', dist, framework, mode, String(requests)],
    {
      encoding: 'utf8',
    },
  );
  const line = run.stderr.split('\n').find((l) => l.includes('instructions'));
  if (!line) throw new Error(`perf stat failed: ${run.stderr}`);
  return Number(line.split(',')[0]);
}

function main() {
  execFileSync('perf', ['--version']);
  const requests = Number(args.requests ?? 200_000);
  const rounds = Number(args.rounds ?? 3);
  const builds = [['current', resolve(__dirname, '..', '..', 'dist')], ...(args.base ? [['base', resolve(args.base)]] : [])];
  console.log('| adapter | load | build | instructions / request |\n| --- | --- | --- | --- |');
  for (const framework of ['express', 'koa']) {
    for (const mode of ['allow', 'deny']) {
      for (const [name, dist] of builds) {
        const per = [];
        for (let round = 0; round < rounds; round++) {
          const small = instructions(dist, framework, mode, 20_000);
          per.push((instructions(dist, framework, mode, 20_000 + requests) - small) / requests);
        }
        const median = per.sort((a, b) => a - b)[Math.floor((per.length - 1) / 2)];
        console.log(
          `| ${framework} | ${mode} | ${name} | ${Math.round(median).toLocaleString('en-US')} (${per.map((x) => Math.round(x).toLocaleString('en-US')).join(', ')}) |`,
        );
      }
    }
  }
}

if (process.argv[2] === 'worker') {
  const [dist, framework, mode, requests] = process.argv.slice(3);
  worker(dist, framework, mode, Number(requests)).then(() => process.exit(0));
} else main();
