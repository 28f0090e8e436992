'use strict';
/**
 * What counting costs on the hot path: `limiter.check()` on the MemoryStore (the cheapest check there is, so
 * any added cost shows most) with nobody observing, with `registerMetrics` counting every decision, and with
 * the dashboard (`dashboard({ limiters })`) counting them per second.
 * `BENCH_BASELINE=/path/to/dist/index.js` adds a build without the observation hook, for comparison.
 * Sequential awaits, 200 000 checks per round over 1 000 groups, interleaved rounds, best round kept.
 * `--redis`: the same on a RedisStore (256 checks in flight, as in the admission section), fewer checks.
 *
 *   npm run build && node bench/metrics-cost.js [--rounds=7] [--redis]
 */
const path = require('node:path');
const { Registry } = require('prom-client');

const core = require(path.join(__dirname, '..', 'dist', 'index.js'));
const { registerMetrics } = require(path.join(__dirname, '..', 'dist', 'metrics', 'prometheus.js'));
const { dashboard } = require(path.join(__dirname, '..', 'dist', 'middleware', 'express.js'));
const { startRedis } = require('./lib/redis');

const onRedis = process.argv.includes('--redis');
const CHECKS = onRedis ? 50_000 : 200_000;
const IN_FLIGHT = onRedis ? 256 : 1;
const GROUPS = 1000;
const rounds = Number((process.argv.find((a) => a.startsWith('--rounds=')) ?? '--rounds=7').split('=')[1]);

let redis;
function subject(lib, label, withMetrics) {
  const store = redis ? new lib.RedisStore({ client: redis.client(), prefix: `cost${label.length}${withMetrics}` }) : new lib.MemoryStore();
  const limiter = lib.createLimiter({ store, name: 'cost', limit: 1_000_000_000, windowMs: 600_000, tuning: { maxGroups: 10_000 } });
  if (withMetrics === 'dashboard') dashboard({ limiters: [limiter] });
  else if (withMetrics) registerMetrics({ registry: new Registry(), limiters: [limiter] });
  return { label, limiter };
}

async function round(limiter) {
  const groups = Array.from({ length: GROUPS }, (_, i) => `g${i}`);
  let next = 0;
  const loop = async () => {
    while (next < CHECKS) await limiter.check(groups[next++ % GROUPS]);
  };
  const started = process.hrtime.bigint();
  await Promise.all(Array.from({ length: IN_FLIGHT }, loop));
  return Number(process.hrtime.bigint() - started) / CHECKS;
}

async function main() {
  if (onRedis) redis = await startRedis();
  const subjects = [
    subject(core, 'check(), nobody observing', false),
    subject(core, 'check(), registerMetrics counting', true),
    subject(core, 'check(), dashboard counting', 'dashboard'),
  ];
  if (process.env.BENCH_BASELINE) subjects.push(subject(require(process.env.BENCH_BASELINE), 'check(), build without the hook (baseline)', false));
  const best = subjects.map(() => Infinity);
  for (const s of subjects) await round(s.limiter); // warm-up
  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < subjects.length; i++) best[i] = Math.min(best[i], await round(subjects[i].limiter));
  }
  console.log(`| subject | ns per check (best of ${rounds} rounds of ${CHECKS.toLocaleString('en')}) |\n|---|---|`);
  subjects.forEach((s, i) => console.log(`| ${s.label}${onRedis ? ' (RedisStore)' : ''} | ${best[i].toFixed(0)} |`));
  await redis?.stop();
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
