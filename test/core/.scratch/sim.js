'use strict';
// Scratch: drives the TypeScript admission core (dist/) on a virtual clock with seeded Poisson arrivals and
// prints fairness.md §5 metrics. Usage: node test/core/.scratch/sim.js [scenario...] [--burst b --reserve r]
const path = require('node:path');
const DIST = process.env.DIST ?? path.resolve(__dirname, '../../../dist');
const core = require(path.join(DIST, 'core/fair-share.js'));
const { resolveLimiterOptions } = require(path.join(DIST, 'options.js'));

function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function waterFill(capacity, groups) {
  const share = new Map(groups.map((g) => [g.name, 0]));
  let left = capacity;
  let open = groups.filter((g) => g.demand > 0);
  while (open.length && left > 1e-9) {
    const W = open.reduce((s, g) => s + g.weight, 0);
    const unit = left / W;
    const sat = open.filter((g) => g.demand - share.get(g.name) <= unit * g.weight + 1e-12);
    if (!sat.length) { for (const g of open) share.set(g.name, share.get(g.name) + unit * g.weight); break; }
    for (const g of sat) { left -= g.demand - share.get(g.name); share.set(g.name, g.demand); }
    open = open.filter((g) => !sat.includes(g));
  }
  return share;
}

const range = (n, f) => Array.from({ length: n }, (_, i) => f(i));
const SCEN = {
  demo: (L) => [
    { name: 'bulkbot', rate: 2.5 * L, weight: 1 },
    { name: 'acme', rate: 0.6 * L, weight: 3 },
    { name: 'importer', rate: 0.12 * L, weight: 1, burst: true },
    { name: 'light-1', rate: 0.05 * L, weight: 1 },
    { name: 'light-2', rate: 0.05 * L, weight: 1 },
    { name: 'trial-1', rate: 0.08 * L, weight: 1, from: 0.1, to: 0.3 },
    { name: 'trial-2', rate: 0.08 * L, weight: 1, from: 0.4, to: 0.6 },
    { name: 'trial-3', rate: 0.08 * L, weight: 1, from: 0.7, to: 0.9 },
  ],
  s1: (L) => [
    { name: 'heavy', rate: 3 * L, weight: 1 },
    ...range(2, (i) => ({ name: `medium-${i}`, rate: 0.3 * L, weight: 1 })),
    ...range(10, (i) => ({ name: `light-${i}`, rate: 0.02 * L, weight: 1 })),
  ],
  mix: (L) => [
    { name: 'flood', rate: 3 * L, weight: 1 },
    { name: 'acme', rate: 0.6 * L, weight: 3 },
    ...range(6, (i) => ({ name: `light-${i}`, rate: 0.05 * L, weight: 1 })),
  ],
  conf: (L) => [
    { name: 'flood-w3', rate: 3 * L, weight: 3 },
    { name: 'flood-w1', rate: 3 * L, weight: 1 },
    ...range(6, (i) => ({ name: `light-${i}`, rate: 0.05 * L, weight: 1 })),
  ],
  s2: (L) => [{ name: 'gold-w3', rate: 2 * L, weight: 3 }, { name: 'basic-w1', rate: 2 * L, weight: 1 }],
  flood5: (L) => [{ name: 'flood', rate: 3 * L, weight: 1 }, { name: 'poisson5', rate: 0.05 * L, weight: 1 }],
  s3: (L) => [{ name: 'heavy', rate: 2 * L, weight: 1 }, { name: 'idle', rate: 0.001 * L, weight: 1 }],
  s4: (L) => range(10, (i) => ({ name: `t-${i}`, rate: 0.06 * L, weight: 1 })),
  s8: (L) => {
    const h = range(100, (i) => 1 / (i + 1)).reduce((a, b) => a + b, 0);
    return range(100, (i) => ({ name: `z-${i}`, rate: (3 * L) / (i + 1) / h, weight: i % 10 === 9 ? 3 : 1 }));
  },
};

function run(name, L, opts) {
  const durMs = opts.durMs ?? 20_000;
  const warmMs = 2000;
  const o = resolveLimiterOptions({ limit: L, windowMs: 1000, ...(opts.burst ? { burst: opts.burst } : {}), ...(opts.reserve !== undefined ? { reserve: opts.reserve } : {}) });
  const spec = o.spec;
  const cfg = core.fairShareConfig(spec);
  const state = core.createFairShareState();
  const groups = SCEN[name](L);
  const next = rng(opts.seed ?? 7);
  const arrivals = [];
  for (const g of groups) {
    const from = (g.from ?? 0) * durMs;
    const to = (g.to ?? 1) * durMs;
    if (g.burst) {
      const size = Math.round(g.rate * 2);
      for (let edge = 1000; edge < to; edge += 2000) for (let k = 0; k < size; k++) arrivals.push({ t: edge - 60 + next() * 120, g });
      continue;
    }
    for (let t = from - Math.log(1 - next()) * (1000 / g.rate); t < to; t -= Math.log(1 - next()) * (1000 / g.rate)) arrivals.push({ t, g });
  }
  arrivals.sort((a, b) => a.t - b.t);
  const stats = new Map(groups.map((g) => [g.name, { d: 0, a: 0, dAll: 0, aAll: 0 }]));
  const admittedAt = [];
  const t0 = 1_700_000_000_000;
  for (const { t, g } of arrivals) {
    const nowUs = Math.floor((t0 + t) * 1000);
    const fs = core.openFairShare(state, cfg, nowUs);
    const r = core.decide(fs, g.name, g.weight, 1, true);
    core.closeFairShare(fs);
    const s = stats.get(g.name);
    if (!r.allowed) { const st = state.groups.get(r.group); s.why = s.why || { min: 0, gt: 0, cap: 0 }; if (st.tokCap < 1 - 1e-9) s.why.cap++; else if (st.tokMin < 1 - 1e-9) s.why.min++; else s.why.gt++; }
    s.dAll++; if (r.allowed) { s.aAll++; admittedAt.push(t); }
    if (t >= warmMs) { s.d++; if (r.allowed) s.a++; }
  }
  // global check: max admitted in any [x, x+W)
  let maxWin = 0;
  for (let i = 0, j = 0; i < admittedAt.length; i++) { while (admittedAt[i] - admittedAt[j] >= 1000) j++; maxWin = Math.max(maxWin, i - j + 1); }
  const secs = (durMs - warmMs) / 1000;
  // demand over the time each group was present (steady part)
  const demands = groups.map((g) => ({ name: g.name, weight: g.weight, demand: stats.get(g.name).d / secs }));
  const capacity = spec.sustained ? L : L - spec.burst + 1;
  const fair = waterFill(capacity, demands);
  const xs = demands.filter((d) => d.demand > 0).map((d) => stats.get(d.name).a / secs / fair.get(d.name));
  const jain = xs.reduce((a, b) => a + b, 0) ** 2 / (xs.length * xs.reduce((a, b) => a + b * b, 0));
  const W = groups.reduce((s, g) => s + g.weight, 0);
  let gmin = Infinity;
  for (const d of demands) if (d.demand > 0) gmin = Math.min(gmin, stats.get(d.name).a / secs / Math.min(d.demand, capacity * d.weight / W));
  const totalA = demands.reduce((s, d) => s + stats.get(d.name).a, 0) / secs;
  const totalD = demands.reduce((s, d) => s + d.demand, 0);
  const util = totalA / Math.min(totalD, capacity);
  let worstLoss = 0; let worstName = '';
  for (const g of groups) { const s = stats.get(g.name); const guar = capacity * g.weight / W; if (s.dAll >= 20 && g.rate * 1.0 < guar * 0.9 && !g.burst) { const l = 1 - s.aAll / s.dAll; if (l > worstLoss) { worstLoss = l; worstName = g.name; } } }
  const ratio = (n) => stats.has(n) ? (stats.get(n).a / secs / fair.get(n)).toFixed(2) : '-';
  console.log(`\n== ${name} under-guarantee worst loss ${(100 * worstLoss).toFixed(1)}% (${worstName}) ratios: ${groups.slice(0, 3).map((g) => g.name + ' ' + ratio(g.name)).join(', ')}`);
  console.log(`== ${name} L=${L} b=${spec.burst} ρ=${spec.reserve} cap=${capacity} | admitted ${totalA.toFixed(1)}/s util ${util.toFixed(3)} Jain ${jain.toFixed(4)} G ${gmin.toFixed(3)} maxWin ${maxWin}`);
  if (opts.verbose !== false) {
    for (const g of groups.slice(0, 14)) {
      const s = stats.get(g.name);
      const f = fair.get(g.name);
      console.log(`  ${g.name.padEnd(10)} w${g.weight} demand ${(s.d / secs).toFixed(1).padStart(7)} adm ${(s.a / secs).toFixed(1).padStart(7)} fair ${f.toFixed(1).padStart(7)} ratio ${(s.a / secs / f).toFixed(3)} lost ${(100 * (1 - s.aAll / s.dAll)).toFixed(1)}% why ${JSON.stringify(s.why)}`);
    }
  }
  return { util, jain, gmin, maxWin, totalA };
}

const args = process.argv.slice(2);
const opt = (k) => { const i = args.indexOf(k); return i >= 0 ? Number(args[i + 1]) : undefined; };
const names = args.filter((a, i) => !a.startsWith('--') && !(i > 0 && args[i - 1].startsWith('--')));
const Ls = opt('--L') ? [opt('--L')] : [100, 1000];
for (const n of names.length ? names : ['demo', 's1', 's2', 'flood5']) {
  for (const L of Ls) run(n, L, { burst: opt('--burst'), reserve: opt('--reserve'), seed: opt('--seed'), verbose: !args.includes('--quiet') });
}
