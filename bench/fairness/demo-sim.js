'use strict';
/**
 * The demo's load (examples/demo/scenario.js: the same tenants, arrivals and seeds) in simulated time: a MemoryStore
 * on an injected clock, each request decided at its send time, free of the machine's timing. Counted as the demo's
 * summary counts (served ÷ weighted max-min fair share of the strict capacity, from the first request), and again
 * from 2 s on, to tell the start from the steady state. The importer's denied requests are deferred in the demo:
 * here each is tried again when its denial's retryAfterMs says, as a worker's claim would start it.
 *
 *   node bench/fairness/demo-sim.js [--seeds=5] [--limit=100] [--duration=20]
 *
 * Uses the built package (`npm run build` first; BENCH_CORE=<dist/index.js> for another build).
 */
const { requireCore } = require('../lib/package');
const { buildTenants, buildPlan, fairShares } = require('../../examples/demo/scenario');

const T0 = 1_800_000_000_137;

async function simulate({ seed, limit, durationMs }) {
  const core = requireCore();
  const windowMs = 1000;
  const tenants = buildTenants({ limit, lightTenants: 2 });
  let clockMs = T0;
  const limiter = core.createLimiter({ store: new core.MemoryStore({ clock: () => clockMs }), name: 'demo-sim', limit, windowMs });
  const { burst } = limiter.spec; // the resolved default, as the demo's summary reads it
  const pending = buildPlan({ tenants, durationMs, seed, startEpochMs: T0 }).map(({ t, tenant }) => ({ t, tenant, first: true }));
  const retries = [];
  const log = [];
  let next = 0;
  while (next < pending.length || retries.length > 0) {
    const fromRetries = retries.length > 0 && (next >= pending.length || retries[0].t <= pending[next].t);
    const item = fromRetries ? retries.shift() : pending[next++];
    if (item.t >= durationMs) break;
    clockMs = T0 + Math.ceil(item.t);
    const d = await limiter.check(item.tenant.name, { weight: item.tenant.weight });
    if (!d.allowed && item.tenant.burst) {
      retries.push({ t: item.t + Math.max(1, d.retryAfterMs), tenant: item.tenant, first: false });
      retries.sort((a, b) => a.t - b.t);
    }
    log.push({ t: item.t, name: item.tenant.name, first: item.first, allowed: d.allowed });
  }
  await limiter.close?.();
  return { tenants, log, burst, windowMs };
}

/** Served ÷ fair per tenant over [fromMs, durationMs), and the share of the strict capacity used. */
function figures({ tenants, log, burst, windowMs }, { limit, durationMs }, fromMs) {
  const seconds = (durationMs - fromMs) / 1000;
  const capacityPerS = ((limit - burst + 1) * 1000) / windowMs;
  const sent = new Map();
  const served = new Map();
  for (const e of log) {
    if (e.t < fromMs) continue;
    if (e.first) sent.set(e.name, (sent.get(e.name) ?? 0) + 1);
    if (e.allowed) served.set(e.name, (served.get(e.name) ?? 0) + 1);
  }
  const fair = fairShares(
    capacityPerS,
    tenants.map((t) => ({ name: t.name, weight: t.weight, rate: (sent.get(t.name) ?? 0) / seconds })),
  );
  const out = {};
  for (const t of tenants) out[t.name] = (served.get(t.name) ?? 0) / seconds / fair.get(t.name);
  out.utilisation = [...served.values()].reduce((a, b) => a + b, 0) / seconds / capacityPerS;
  return out;
}

async function main() {
  const args = Object.fromEntries(
    process.argv.slice(2).map((a) => {
      const [k, v] = a.replace(/^--/, '').split('=');
      return [k, v ?? 'true'];
    }),
  );
  const seeds = Number(args.seeds ?? 5);
  const options = { limit: Number(args.limit ?? 100), durationMs: Number(args.duration ?? 20) * 1000 };
  const runs = [];
  // the demo's own seed (42) first
  for (let s = 0; s < seeds; s++) runs.push(await simulate({ seed: 42 + s, ...options }));
  for (const fromMs of [0, 2000]) {
    const rows = runs.map((r) => figures(r, options, fromMs));
    const cells = Object.keys(rows[0]).map((k) => {
      const xs = rows.map((r) => r[k]);
      return `${k} ${Math.min(...xs).toFixed(3)}–${Math.max(...xs).toFixed(3)}`;
    });
    console.log(`served ÷ fair from ${fromMs / 1000} s (${seeds} seeds): ${cells.join('  ')}`);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
