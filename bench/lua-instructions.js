'use strict';
/**
 * Machine instructions per check of admit-many.lua under valgrind's callgrind, counted inside EVALSHA only:
 * deterministic, so a change to the rules path can be compared on a busy machine where the INFO commandstats
 * figures of `npm run bench -- --only=rules` swing by a third. Not part of `npm run bench` (it needs valgrind,
 * and instructions are not time: compare ratios, and confirm a gain with the bench).
 *
 *   npm run build && node bench/lua-instructions.js [--groups=10] [--batch=64] [--calls=125]
 *
 * Rows: no rules (its block alone, then with the limiter's fingerprint first, as a RedisStore sends it: what
 * noticing config drift costs), the rules section's two rules (sliding window per second, token bucket per hour),
 * and the same two as a plan's; the allow-heavy closed loop of the rules section, one group after another.
 */
const { join } = require('node:path');
const { startCallgrindRedis } = require('./lib/callgrind-redis');

const ROOT = join(__dirname, '..');
const { LUA_SOURCES } = require(join(ROOT, 'dist', 'redis', 'lua-sources.generated.js'));
const { fairShareConfigBlock } = require(join(ROOT, 'dist', 'redis', 'admission-scripts.js'));
const { resolveLimiterOptions } = require(join(ROOT, 'dist', 'limiter', 'options.js'));
const { configIdentity } = require(join(ROOT, 'dist', 'core', 'config-drift.js'));

const arg = (name, fallback) => Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback);
const GROUPS = arg('groups', 10);
const BATCH = arg('batch', 64);
const CALLS = arg('calls', Math.max(20, Math.round(8000 / BATCH)));
const TWO_RULES = [
  { name: 'tenant-second', limit: 1_000_000, windowMs: 1000, algorithm: 'sliding-window' },
  { name: 'tenant-hour', limit: 100_000_000, windowMs: 3_600_000 },
];
const base = { limit: 1_000_000_000, windowMs: 600_000, tuning: { maxGroups: 20_000, probationMs: 0 } };
const config = (options) => {
  const { spec } = resolveLimiterOptions({ ...base, ...options });
  return fairShareConfigBlock(spec);
};
const KINDS = [
  { label: 'no rules', config: config({}) },
  // the block as a RedisStore sends it: the limiter's fingerprint first (config drift: docs/operations.md)
  { label: 'no rules, fingerprint', config: `${configIdentity(resolveLimiterOptions(base).spec).fingerprint}#${config({})}` },
  { label: 'two rules', config: config({ rules: TWO_RULES }) },
  // a check in a class: its class meter read and written, and the class's own tests (docs/algorithm.md §2.11)
  { label: 'classes', config: config({ classes: { critical: { share: 0.2 } } }) },
  // the plan's lane: its rules, and the longest span of any plan in the block
  {
    label: 'two rules as a plan',
    config: fairShareConfigBlock(
      resolveLimiterOptions({ ...base, plans: { free: {}, pro: { rules: TWO_RULES } } }).spec,
      resolveLimiterOptions({ ...base, plans: { free: {}, pro: { rules: TWO_RULES } } }).spec.plans.get('pro').rules,
    ),
  },
];

async function main() {
  const { client, count, stop } = await startCallgrindRedis();
  try {
    const sha = await client.script('LOAD', LUA_SOURCES['admit-many.lua']);
    const rows = [];
    for (const [i, kind] of KINDS.entries()) {
      // admit-many.lua's seven keys (the last three: overrides, read once a call when there are none)
      const keys = ['groups', 'seen', 'leases', 'slots', 'overrides', 'overrides-due', 'overrides-index'].map((k) => `{bl:cg${i}}:${k}`);
      let g = 0;
      const call = () => {
        const args = [0, kind.config, 0];
        for (let k = 0; k < BATCH; k++) args.push(`g${g++ % GROUPS}`, 1, 1, 0);
        return client.evalsha(sha, keys.length, ...keys, ...args);
      };
      for (let k = 0; k < Math.ceil(GROUPS / BATCH) + 3; k++) await call(); // every group registered first
      const total = await count(async () => {
        for (let k = 0; k < CALLS; k++) await call();
      });
      rows.push({ label: kind.label, perCheck: total / (CALLS * BATCH) });
    }
    console.log(`admit-many.lua, ${GROUPS} groups, ${BATCH} checks a call, ${CALLS} calls: instructions per check (callgrind, EVALSHA only)`);
    for (const r of rows)
      console.log(`${r.label.padEnd(22)} ${Math.round(r.perCheck).toLocaleString('en')}  ${(r.perCheck / rows[0].perCheck).toFixed(3)}×`);
  } finally {
    stop();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
