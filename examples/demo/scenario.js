'use strict';
/**
 * The load: who sends what, and when. Arrivals are open-loop (clients do not wait for answers) and seeded,
 * so both systems see exactly the same requests at the same moments.
 */

/** Small seeded PRNG (mulberry32), so two runs with one seed send the same load. */
function random(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Tenants as fractions of the limit; `from`/`to` as fractions of the run (trial tenants come and go). */
function buildTenants({ limit, lightTenants }) {
  const tenants = [
    { name: 'bulkbot', weight: 1, route: 'export', rate: 2.5 * limit, role: 'floods the bulk export endpoint' },
    { name: 'acme', weight: 3, route: 'reports', rate: 0.6 * limit, role: 'paying tenant, weight 3' },
    { name: 'importer', weight: 1, route: 'imports', rate: 0.12 * limit, burst: true, role: 'bulk imports in bursts (deferred when denied)' },
  ];
  for (let i = 1; i <= lightTenants; i++) {
    tenants.push({ name: `light-${i}`, weight: 1, route: 'reports', rate: 0.05 * limit, role: 'light tenant' });
  }
  for (let i = 0; i < 3; i++) {
    tenants.push({
      name: `trial-${i + 1}`,
      weight: 1,
      route: 'reports',
      rate: 0.08 * limit,
      from: 0.1 + 0.3 * i,
      to: 0.3 + 0.3 * i,
      role: 'trial tenant, here for a while',
    });
  }
  return tenants;
}

/**
 * Every request of the run, sorted by send time (ms from the start). Poisson arrivals; the importer sends
 * a burst every 2 s around a whole second of the wall clock, as cron-driven clients do.
 */
function buildPlan({ tenants, durationMs, seed, startEpochMs }) {
  const next = random(seed);
  const plan = [];
  for (const tenant of tenants) {
    const from = (tenant.from ?? 0) * durationMs;
    const to = (tenant.to ?? 1) * durationMs;
    if (tenant.burst) {
      const size = Math.round(tenant.rate * 2);
      const firstSecond = Math.ceil((startEpochMs + from) / 1000) * 1000 - startEpochMs;
      for (let edge = firstSecond; edge < to; edge += 2000) {
        for (let k = 0; k < size; k++) {
          const t = edge - 60 + next() * 120; // ±60 ms around the edge of a second
          if (t >= from && t < to) plan.push({ t, tenant });
        }
      }
      continue;
    }
    for (let t = from - Math.log(1 - next()) * (1000 / tenant.rate); t < to; t -= Math.log(1 - next()) * (1000 / tenant.rate)) {
      plan.push({ t, tenant });
    }
  }
  return plan.sort((a, b) => a.t - b.t);
}

/**
 * Weighted max-min fair split (water-filling) of `capacity` among demands: nobody gets more than it asks,
 * the rest is shared by weight. Returns a Map name → rate.
 */
function fairShares(capacity, demands) {
  const shares = new Map();
  let left = capacity;
  let open = demands.filter((d) => d.rate > 0);
  for (const d of demands) shares.set(d.name, 0);
  while (open.length > 0 && left > 1e-9) {
    const weights = open.reduce((sum, d) => sum + d.weight, 0);
    const unit = left / weights;
    const satisfied = open.filter((d) => d.rate - shares.get(d.name) <= unit * d.weight);
    if (satisfied.length === 0) {
      for (const d of open) shares.set(d.name, shares.get(d.name) + unit * d.weight);
      break;
    }
    for (const d of satisfied) {
      left -= d.rate - shares.get(d.name);
      shares.set(d.name, d.rate);
    }
    open = open.filter((d) => !satisfied.includes(d));
  }
  return shares;
}

module.exports = { buildTenants, buildPlan, fairShares, random };
