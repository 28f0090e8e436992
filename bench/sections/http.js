'use strict';
/**
 * Section 2: HTTP overhead. Each variant runs in its own server process with its own redis-server;
 * autocannon (as a library, in this process) drives it with N connections and an `x-tenant` header
 * cycling over T tenants. Allow-heavy: limits nobody reaches. Deny-heavy: a global budget of 10 % of
 * bare Express's measured req/s (peers get that budget split per tenant), so ~90 % is denied.
 * BENCH_HTTP_ONLY=fastify,koa (prefixes of variant names) runs some variants alone; the deny budget still comes
 * from bare Express, run first when it is left out.
 *
 * What each row measures: a bare framework row is the framework alone (no limiter); `+bulk-limiter` is the adapter
 * with its check on the RedisStore (one round trip, batched per event-loop turn; Redis and the ioredis client spend
 * CPU on the same shared cores); `+bulk-limiter(memory)` is the same adapter on the embedded MemoryStore (the
 * adapter and the in-process check only): the gap between the two is the store's, the gap between the memory row
 * and the bare row the adapter's own (with the in-process check it wraps). `+redis-floor` (allow-heavy only) is one
 * pipelined Redis `INCR` per request that decides nothing: what a round trip per request costs the framework here,
 * the floor under every Redis-backed row. Peers use Redis as their READMEs show.
 */
const { fork } = require('node:child_process');
const { join } = require('node:path');
const autocannon = require('autocannon');
const { startRedis, serverCpuUs } = require('../lib/redis');
const { markdownTable, fmt, ratio } = require('../lib/table');
const { barChart } = require('../lib/svg');
const { progress } = require('../lib/progress');
const { VARIANTS } = require('../http/apps');

const HUGE = 10_000_000;

function startServer(variant, redisPort, limits) {
  const child = fork(join(__dirname, '..', 'http', 'server.js'), [JSON.stringify({ variant, redisPort, limits })], {
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
  });
  let stderr = '';
  child.stderr.on('data', (d) => {
    stderr += d;
  });
  return new Promise((resolve, reject) => {
    child.once('message', (m) =>
      m.error ? reject(new Error(m.error)) : resolve({ port: m.port, cpuUs: () => cpuOf(child), stop: () => stopServer(child) }),
    );
    child.once('exit', (code) => reject(new Error(`server exited (${code}): ${stderr.split('\n')[0]}`)));
  });
}

/** The server process's CPU time so far, µs (user + system); NaN once it has exited (the row still reports req/s). */
function cpuOf(child) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(NaN);
  return new Promise((resolve) => {
    const done = (value) => {
      child.off('message', answer);
      child.off('exit', exited);
      resolve(value);
    };
    const answer = (m) => {
      if (m && typeof m.cpuUs === 'number') done(m.cpuUs);
    };
    const exited = () => done(NaN);
    child.on('message', answer);
    child.once('exit', exited);
    child.send('cpu');
  });
}

function stopServer(child) {
  if (child.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', resolve);
    child.send('stop');
    setTimeout(() => child.exitCode === null && process.kill(child.pid, 'SIGKILL'), 3000).unref();
  });
}

function load(port, cfg, durationS) {
  let n = 0;
  return autocannon({
    url: `http://127.0.0.1:${port}/`,
    connections: cfg.connections,
    duration: durationS,
    requests: [
      { method: 'GET', path: '/', setupRequest: (req) => ({ ...req, headers: { ...req.headers, 'x-tenant': `tenant-${n++ % cfg.tenants}` } }) },
    ],
  });
}

async function measure(variant, limits, cfg) {
  const redis = await startRedis();
  try {
    const server = await startServer(variant, redis.port, limits);
    try {
      if (!cfg.smoke) await load(server.port, cfg, 2); // JIT and connection warm-up
      const probe = redis.client();
      const before = [await server.cpuUs(), await serverCpuUs(probe)];
      const r = await load(server.port, cfg, cfg.durationS);
      const after = [await server.cpuUs(), await serverCpuUs(probe)];
      const total = r['2xx'] + r.non2xx;
      return {
        // CPU per request over the measured span: the server process's, and redis-server's (the store's share)
        serverCpuUs: total ? (after[0] - before[0]) / total : NaN,
        redisCpuUs: total ? (after[1] - before[1]) / total : NaN,
        reqPerSec: total / (r.duration || cfg.durationS),
        p50Ms: r.latency.p50,
        p99Ms: r.latency.p99,
        non2xxShare: total ? r.non2xx / total : NaN,
        errors: r.errors + r.timeouts,
      };
    } finally {
      await server.stop();
    }
  } finally {
    await redis.stop();
  }
}

/**
 * Variants run in interleaved rounds and the best round of each is kept (other work on a shared machine
 * only slows a round down). The deny budget is fixed after the first allow-heavy pass.
 */
async function runHttp(config) {
  const prefixes = process.env.BENCH_HTTP_ONLY?.split(',');
  const cfg = prefixes ? { ...config, only: (v) => v === 'express' || prefixes.some((p) => v.startsWith(p)) } : config;
  const best = new Map();
  const runMode = async (mode, limits, round) => {
    for (const variant of Object.keys(VARIANTS).filter(cfg.only ?? (() => true))) {
      // bare apps and the Redis floor do not limit
      if (mode === 'deny' && (!variant.includes('+') || variant.endsWith('+redis-floor'))) continue;
      if (mode === 'allow' && variant.includes('denyCache')) continue; // the cache only answers denials
      progress(`http: ${variant}, ${mode}-heavy, round ${round}/${cfg.rounds}`);
      const key = `${variant}|${mode}`;
      try {
        const r = { variant, mode, ...(await measure(variant, limits, cfg)) };
        if (!best.has(key) || best.get(key).skipped || r.reqPerSec > best.get(key).reqPerSec) best.set(key, r);
      } catch (error) {
        if (!best.has(key)) best.set(key, { variant, mode, skipped: String(error.message || error).split('\n')[0] });
      }
    }
  };
  let denyGlobal;
  for (let round = 1; round <= cfg.rounds; round++) {
    await runMode('allow', { global: HUGE, perTenant: HUGE }, round);
    if (denyGlobal === undefined) {
      const bare = best.get('express|allow');
      denyGlobal = Math.max(cfg.tenants, Math.round((bare && !bare.skipped ? bare.reqPerSec : 5000) * 0.1));
    }
    await runMode('deny', { global: denyGlobal, perTenant: Math.max(1, Math.round(denyGlobal / cfg.tenants)) }, round);
  }
  return report([...best.values()], cfg, denyGlobal);
}

function report(rows, cfg, denyGlobal) {
  const find = (variant, mode) => rows.find((r) => r.variant === variant && r.mode === mode && !r.skipped);
  const baseOf = (variant) => variant.split('+')[0];
  const table = markdownTable(
    ['server', 'load', 'req/s', 'p50 ms', 'p99 ms', 'non-2xx', '2xx/s', 'errors', 'req/s vs bare', 'server CPU µs/req', 'Redis CPU µs/req'],
    rows.map((r) =>
      r.skipped
        ? [r.variant, r.mode, `skipped: ${r.skipped}`, '', '', '', '', '', '', '', '']
        : [
            r.variant,
            r.mode,
            fmt(r.reqPerSec),
            fmt(r.p50Ms, 1),
            fmt(r.p99Ms, 1),
            `${fmt(r.non2xxShare * 100, 1)} %`,
            fmt(r.reqPerSec * (1 - r.non2xxShare)),
            fmt(r.errors),
            ratio(r.reqPerSec, find(baseOf(r.variant), 'allow')?.reqPerSec),
            fmt(r.serverCpuUs, 1),
            // an idle redis-server's own ticks are a few hundredths of a µs per request: shown as 0.0
            fmt(r.redisCpuUs, 1),
          ],
    ),
  );
  const target = (name, a, b, min, mode) => {
    const x = find(a, mode);
    const y = find(b, mode);
    return {
      name: `${a} ≥ ${min}× ${b} req/s (${mode}-heavy)`,
      value: ratio(x?.reqPerSec, y?.reqPerSec),
      pass: x && y ? x.reqPerSec >= min * y.reqPerSec : undefined,
    };
  };
  // denials no dearer than admissions: the deny-heavy run serves at least as many requests as the allow-heavy one
  const denyVsAllow = (variant) => {
    const deny = find(variant, 'deny');
    const allow = find(variant, 'allow');
    return {
      name: `${variant} deny-heavy ≥ 1× its allow-heavy req/s (a denial no dearer than an admission)`,
      value: ratio(deny?.reqPerSec, allow?.reqPerSec),
      pass: deny && allow ? deny.reqPerSec >= allow.reqPerSec : undefined,
    };
  };
  const checks = [
    // an adapter costs at most a tenth of its framework's throughput (issue 24)
    target('express+bulk-limiter', 'express+bulk-limiter', 'express', 0.9, 'allow'),
    target('koa+bulk-limiter', 'koa+bulk-limiter', 'koa', 0.9, 'allow'),
    target('fastify+bulk-limiter', 'fastify+bulk-limiter', 'fastify', 0.9, 'allow'),
    // at least its framework's usual limiter, allow- and deny-heavy (issue 24)
    target('express+bulk-limiter', 'express+bulk-limiter', 'express+express-rate-limit', 1.0, 'allow'),
    target('express+bulk-limiter', 'express+bulk-limiter', 'express+express-rate-limit', 1.0, 'deny'),
    target('koa+bulk-limiter', 'koa+bulk-limiter', 'koa+koa-ratelimit', 1.0, 'allow'),
    target('koa+bulk-limiter', 'koa+bulk-limiter', 'koa+koa-ratelimit', 1.0, 'deny'),
    target('fastify+bulk-limiter', 'fastify+bulk-limiter', 'fastify+@fastify/rate-limit', 1.0, 'allow'),
    target('fastify+bulk-limiter', 'fastify+bulk-limiter', 'fastify+@fastify/rate-limit', 1.0, 'deny'),
    denyVsAllow('express+bulk-limiter'),
    denyVsAllow('koa+bulk-limiter'),
    denyVsAllow('fastify+bulk-limiter'),
    // the same on the embedded store: the adapter's own cost, without Redis's and the client's CPU (issue 24)
    target('express+bulk-limiter(memory)', 'express+bulk-limiter(memory)', 'express', 0.9, 'allow'),
    target('koa+bulk-limiter(memory)', 'koa+bulk-limiter(memory)', 'koa', 0.9, 'allow'),
    target('fastify+bulk-limiter(memory)', 'fastify+bulk-limiter(memory)', 'fastify', 0.9, 'allow'),
    denyVsAllow('express+bulk-limiter(memory)'),
    denyVsAllow('koa+bulk-limiter(memory)'),
    denyVsAllow('fastify+bulk-limiter(memory)'),
    target('express+bulk-limiter', 'express+bulk-limiter', 'express+rate-limiter-flexible', 1.0, 'allow'),
    target('koa+bulk-limiter', 'koa+bulk-limiter', 'koa+koa-ratelimit', 1.5, 'deny'),
    target('express+bulk-limiter', 'express+bulk-limiter', 'express+rate-limiter-flexible', 1.1, 'deny'),
    target('koa+bulk-limiter(denyCache)', 'koa+bulk-limiter(denyCache)', 'koa+koa-ratelimit', 1.5, 'deny'),
    target('express+bulk-limiter(denyCache)', 'express+bulk-limiter(denyCache)', 'express+rate-limiter-flexible', 1.1, 'deny'),
    target('koa+bulk-limiter(denyCache retry)', 'koa+bulk-limiter(denyCache retry)', 'koa+koa-ratelimit', 1.5, 'deny'),
    target('express+bulk-limiter(denyCache retry)', 'express+bulk-limiter(denyCache retry)', 'express+rate-limiter-flexible', 1.1, 'deny'),
  ];
  const bars = rows
    .filter((r) => !r.skipped)
    .map((r) => ({ label: `${r.variant} (${r.mode})`, value: r.reqPerSec, highlight: r.variant.includes('bulk') }));
  return {
    title: '2. HTTP overhead',
    intro: `Server and load generator in separate processes; autocannon, ${cfg.connections} connections, ${cfg.durationS} s per run after a 2 s warm-up, best of ${cfg.rounds} interleaved rounds, \`x-tenant\` cycling over ${cfg.tenants} tenants, GET / answering "ok". Deny-heavy: ${fmt(denyGlobal)} requests/s in total (10 % of bare Express) — bulk-limiter's global limit, split per tenant for the per-key peers. "2xx/s" is what got through. \`(denyCache)\` is \`denyCache: true\` (hold until the store's hint), \`(denyCache retry)\` is \`denyCache: { hold: 'retry' }\` (hold until the retry time the store gave). A bare row is the framework alone; \`+bulk-limiter\` is the middleware on the RedisStore (a round trip per check, batched; Redis and the ioredis client take CPU on the same shared cores); \`+bulk-limiter(memory)\` is the same middleware on the embedded MemoryStore, so its gap to the bare row is the adapter's own cost with the in-process check, and its gap to the \`+bulk-limiter\` row is the store's. \`+redis-floor\` is the framework with one Redis \`INCR\` per request (ioredis, auto-pipelined), deciding nothing: the least any limiter on Redis adds on this machine. The peers use Redis. "Server CPU" is the server process's CPU time (user + system, kernel included) per request over the measured run, "Redis CPU" redis-server's (INFO cpu): what the store costs the machine, which the load generator, the server and Redis share.`,
    markdown: table,
    charts: { 'http-reqs.svg': barChart({ title: 'HTTP req/s (higher is better)', unit: 'req/s', bars }) },
    checks,
    rows,
  };
}

module.exports = { runHttp };
