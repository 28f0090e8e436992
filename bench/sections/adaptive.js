'use strict';
/**
 * Section 6: the adaptive limit (issue 23; docs/adaptive.md). In real time on a fresh redis-server: five tenants
 * send 1,500 requests/s together (100, 200, 300, 400, 500/s, evenly spaced), each admitted request calls a
 * simulated upstream 20 ms away that accepts `phase1Rate`/s (a token bucket of a tenth of a second) and answers
 * 429 beyond it; after `phase1Ms` it accepts `phase2Rate`/s. Every answer is reported with `reportUpstream`
 * (through `limiter.report`, which coalesces them per process); the limiter starts at `limit` 1000/s, adaptive
 * between 50 and 2000. Measured: the admitted rate and the share the upstream refused over the last 5 s of
 * each phase, how long after the step the limit in force reached 85 % of the new capacity, and Jain's index of
 * the tenants' admitted rates over their max-min fair shares while it adapts (each phase after its first 2 s).
 */
const { startRedis } = require('../lib/redis');
const { jain, waterFill } = require('../lib/stats');
const { markdownTable, fmt } = require('../lib/table');
const { progress } = require('../lib/progress');
const { loadCore } = require('../lib/package');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const TENANTS = [100, 200, 300, 400, 500];
const LATENCY_MS = 20;

function upstream(rateAt) {
  let tokens = 0;
  let last = Date.now();
  return (now) => {
    const rate = rateAt(now);
    const size = rate / 10;
    tokens = Math.min(size, tokens + ((now - last) * rate) / 1000);
    last = now;
    if (tokens >= 1) {
      tokens -= 1;
      return 200;
    }
    return 429;
  };
}

async function runVariant(core, cfg, variant) {
  const redis = await startRedis();
  try {
    const client = redis.client();
    const limiter = core.createLimiter({
      store: new core.RedisStore({ client }),
      name: `adaptive-${variant.id}`,
      limit: 1000,
      windowMs: 1000,
      timeoutMs: 2000,
      onStoreError: 'deny',
      logger: { warn: () => {} },
      adaptive: { min: 50, max: 2000, ...variant.adaptive },
    });
    await client.ping();
    const t0 = Date.now();
    const end = cfg.phase1Ms + cfg.phase2Ms;
    const call = upstream((now) => (now - t0 < cfg.phase1Ms ? cfg.phase1Rate : cfg.phase2Rate));
    const log = []; // [t, tenant, admitted, refusedByUpstream]
    const limits = []; // [t, limit in force]
    const pending = new Set();
    const schedule = [];
    TENANTS.forEach((rate, i) => {
      for (let t = (i * 1000) / 1500 / TENANTS.length; t < end; t += 1000 / rate) schedule.push([t, i]);
    });
    schedule.sort((a, b) => a[0] - b[0]);
    let sampler = setInterval(() => {
      const p = limiter.limitInForce().then((l) => limits.push([Date.now() - t0, l]));
      pending.add(p);
      p.finally(() => pending.delete(p));
    }, 100);
    for (const [t, tenant] of schedule) {
      const wait = t0 + t - Date.now();
      if (wait > 1) await sleep(wait);
      const p = limiter.check(`tenant-${tenant}`).then(async (d) => {
        const entry = [Date.now() - t0, tenant, d.allowed, false];
        log.push(entry);
        if (!d.allowed) return;
        await sleep(LATENCY_MS / 2);
        const status = call(Date.now());
        await sleep(LATENCY_MS / 2);
        entry[3] = status === 429;
        await core.reportUpstream(
          limiter,
          status === 429 ? { status, headers: variant.retryAfter ? { 'retry-after': variant.retryAfter } : {} } : status,
        );
      });
      pending.add(p);
      p.finally(() => pending.delete(p));
    }
    clearInterval(sampler);
    sampler = undefined;
    await Promise.all([...pending]);
    await limiter.close();
    return summarise(cfg, variant, log, limits);
  } finally {
    await redis.stop();
  }
}

function summarise(cfg, variant, log, limits) {
  const span = (from, to) => log.filter(([t]) => t >= from && t < to);
  const phase = (from, to, capacity) => {
    const rows = span(from, to);
    const admitted = rows.filter((r) => r[2]);
    const refused = admitted.filter((r) => r[3]).length;
    const seconds = (to - from) / 1000;
    const perTenant = TENANTS.map((_, i) => admitted.filter((r) => r[1] === i).length / seconds);
    const fair = waterFill(
      admitted.length / seconds,
      TENANTS.map((x) => x),
      TENANTS.map(() => 1),
    );
    return {
      rate: admitted.length / seconds,
      ofCapacity: admitted.length / seconds / capacity,
      refusedShare: admitted.length ? refused / admitted.length : 0,
      jain: jain(perTenant.map((x, i) => x / fair[i])),
    };
  };
  const last = Math.min(5000, cfg.phase1Ms / 2);
  const settled1 = phase(cfg.phase1Ms - last, cfg.phase1Ms, cfg.phase1Rate);
  const settled2 = phase(cfg.phase1Ms + cfg.phase2Ms - last, cfg.phase1Ms + cfg.phase2Ms, cfg.phase2Rate);
  const adapting1 = phase(Math.min(2000, cfg.phase1Ms / 4), cfg.phase1Ms, cfg.phase1Rate);
  const adapting2 = phase(cfg.phase1Ms + Math.min(2000, cfg.phase2Ms / 4), cfg.phase1Ms + cfg.phase2Ms, cfg.phase2Rate);
  const reached = limits.find(([t, l]) => t >= cfg.phase1Ms && l >= 0.85 * cfg.phase2Rate);
  const settledAt = limits.find(([, l]) => l <= 1.1 * cfg.phase1Rate);
  return {
    variant,
    settled1,
    settled2,
    jainMin: Math.min(adapting1.jain, adapting2.jain),
    followMs: reached ? reached[0] - cfg.phase1Ms : Infinity,
    firstAtCapacityMs: settledAt ? settledAt[0] : Infinity,
    limits,
  };
}

async function runAdaptive(cfg) {
  const { core, error } = loadCore();
  if (!core) return { title: '6. Adaptive limit', intro: `skipped: ${error}`, markdown: '' };
  if (typeof core.reportUpstream !== 'function')
    return { title: '6. Adaptive limit', intro: 'skipped: this build has no adaptive limit', markdown: '' };
  const variants = cfg.variants ?? [
    { id: 'default', label: 'defaults (decrease 0.9, intervalMs 250)', adaptive: {} },
    { id: 'i1000', label: 'intervalMs 1000', adaptive: { intervalMs: 1000 } },
    { id: 'd07', label: 'decrease 0.7', adaptive: { decrease: 0.7 } },
    { id: 'ra', label: 'defaults, upstream Retry-After 1', adaptive: {}, retryAfter: '1' },
  ];
  const rows = [];
  for (const variant of variants) {
    progress(`adaptive: ${variant.label} (${(cfg.phase1Ms + cfg.phase2Ms) / 1000} s)`);
    rows.push(await runVariant(core, cfg, variant));
  }
  const pct = (x) => `${fmt(100 * x, 1)} %`;
  const table = markdownTable(
    [
      'options',
      `admitted/s, last 5 s at ${cfg.phase1Rate}/s (of capacity)`,
      'refused by the upstream',
      `admitted/s, last 5 s at ${cfg.phase2Rate}/s (of capacity)`,
      'refused by the upstream',
      `limit ≥ 85 % of ${cfg.phase2Rate} after the step`,
      'Jain (admitted / max-min share) while adapting',
    ],
    rows.map((r) => [
      r.variant.label,
      `${fmt(r.settled1.rate)} (${pct(r.settled1.ofCapacity)})`,
      pct(r.settled1.refusedShare),
      `${fmt(r.settled2.rate)} (${pct(r.settled2.ofCapacity)})`,
      pct(r.settled2.refusedShare),
      Number.isFinite(r.followMs) ? `${fmt(r.followMs / 1000, 1)} s` : 'never',
      fmt(r.jainMin, 4),
    ]),
  );
  const chosen = rows.find((r) => r.variant.id === (cfg.chosen ?? 'default')) ?? rows[0];
  return {
    title: '6. Adaptive limit',
    intro:
      `Real time, one fresh redis-server per row: 5 tenants send 1,500 requests/s together (100–500/s each); an admitted request calls an upstream ${LATENCY_MS} ms away that accepts ${cfg.phase1Rate}/s for ${cfg.phase1Ms / 1000} s, then ${cfg.phase2Rate}/s for ${cfg.phase2Ms / 1000} s (429 beyond), and every answer is reported with \`reportUpstream\`. ` +
      'The limiter starts at limit 1000/s (windowMs 1000), adaptive between 50 and 2000. Targets on the row ' +
      `"${chosen.variant.label}".`,
    markdown: table,
    checks: [
      {
        name: `adaptive: admitted rate 85–110 % of ${cfg.phase1Rate}/s after it settles (last 5 s of the first phase)`,
        value: pct(chosen.settled1.ofCapacity),
        pass: chosen.settled1.ofCapacity >= 0.85 && chosen.settled1.ofCapacity <= 1.1,
      },
      {
        name: 'adaptive: at most 5 % of admitted calls refused by the upstream (last 5 s of each phase)',
        value: `${pct(chosen.settled1.refusedShare)}, ${pct(chosen.settled2.refusedShare)}`,
        pass: Math.max(chosen.settled1.refusedShare, chosen.settled2.refusedShare) <= 0.05,
      },
      {
        name: `adaptive: the limit follows the upstream to ${cfg.phase2Rate}/s within 10 s`,
        value: Number.isFinite(chosen.followMs) ? `${fmt(chosen.followMs / 1000, 1)} s` : 'never',
        pass: chosen.followMs <= 10_000,
      },
      { name: 'adaptive: fairness while adapting, Jain ≥ 0.99', value: fmt(chosen.jainMin, 4), pass: chosen.jainMin >= 0.99 },
    ],
    rows: rows.map(({ variant, limits, ...rest }) => ({ variant: variant.id, ...rest, limits: limits.filter((_, i) => i % 5 === 0) })),
  };
}

module.exports = { runAdaptive };
