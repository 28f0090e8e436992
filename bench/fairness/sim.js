'use strict';
/**
 * The fairness scenarios (./scenarios.js) in simulated time: MemoryStore on an injected clock, seeded arrivals,
 * deterministic, free of CPU contention. Arrivals are generated as ./client.js makes them (per client process,
 * Poisson, bunches, edge bursts); a client's event-loop turn is modelled by `--tick` (ms): an arrival due at t is
 * decided at ceil(t / tick) · tick, all arrivals of one tick at the same store time, in due order (what one
 * admit-many batch of a turn does). Closed-loop callers send again one tick after an admission, and retryAfterMs
 * after a denial. Figures are ./metrics.js's over the same steady span as the bench's section.
 *
 *   node bench/fairness/sim.js [--scenarios=s8,s9] [--seeds=5] [--tick=1] [--json]
 *
 * Uses the built package (`npm run build` first; BENCH_CORE=<dist/index.js> for another build).
 */
const { requireCore } = require('../lib/package');
const { SCENARIOS } = require('./scenarios');
const { fairnessMetrics } = require('./metrics');
const { arrivals: arrivalsOf } = require('./arrivals');
const { configFor } = require('../config');

/** mulberry32: a small seeded generator (the same seed gives the same run). */
function seeded(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

async function simulate(id, seed, cfg, tickMs) {
  const core = requireCore();
  const sc = SCENARIOS[id];
  const groups = sc.groups(cfg.durationMs).map((g) => ({ ...g, closed: (sc.closed || []).some((c) => c.group === g.name) }));
  const spec = sc.spec ?? { limit: cfg.limit, windowMs: cfg.windowMs, burst: cfg.burst, reserve: cfg.reserve };
  const { burst, reserve, ...options } = spec;
  // a whole second, so edge bursts line up with windows as in the bench
  const t0 = 1_800_000_000_000;
  let clockMs = t0;
  const limiter = core.createLimiter({
    store: new core.MemoryStore({ clock: () => clockMs }),
    name: `sim-${id}`,
    ...options,
    tuning: { burst, reserve },
  });
  const rnd = seeded(seed);
  const schedule = [];
  for (let p = 0; p < cfg.processes; p++) {
    groups.forEach((g, gi) => {
      if (g.rate > 0) for (const t of arrivalsOf(g, cfg.processes, cfg.durationMs, rnd)) schedule.push([t, gi]);
    });
  }
  schedule.sort((a, b) => a[0] - b[0]);
  const decideAt = (t) => (tickMs > 0 ? Math.ceil(t / tickMs) * tickMs : t);
  const log = { group: [], allowed: [], at: [], issued: [] };
  const closed = { attempts: 0, successes: 0 };
  const callers = [];
  for (const c of sc.closed || []) {
    const gi = groups.findIndex((g) => g.name === c.group);
    for (let k = 0; k < c.callers; k++) callers.push({ gi, next: 0 });
  }
  const check = (g) => limiter.check(g.name, g.class === undefined ? { cost: 1, weight: g.weight } : { cost: 1, weight: g.weight, class: g.class });
  let next = 0;
  const step = tickMs > 0 ? tickMs : 1;
  for (let now = 0; now < cfg.durationMs || next < schedule.length;) {
    // the next instant anything is due: an open-loop arrival's tick or a closed-loop caller's send
    let at = next < schedule.length ? decideAt(schedule[next][0]) : Infinity;
    for (const c of callers) if (c.next < at) at = c.next;
    if (at === Infinity || (at >= cfg.durationMs && next >= schedule.length)) break;
    now = Math.max(now, at);
    clockMs = t0 + now;
    while (next < schedule.length && decideAt(schedule[next][0]) <= now) {
      const [due, gi] = schedule[next++];
      const d = await check(groups[gi]);
      log.group.push(gi);
      log.allowed.push(d.allowed ? 1 : 0);
      log.at.push(d.at - t0);
      log.issued.push(due);
    }
    for (const c of callers) {
      if (c.next > now || now >= cfg.durationMs) continue;
      const d = await check(groups[c.gi]);
      log.group.push(c.gi);
      log.allowed.push(d.allowed ? 1 : 0);
      log.at.push(d.at - t0);
      log.issued.push(now);
      if (now >= cfg.warmupMs) {
        closed.attempts++;
        if (d.allowed) closed.successes++;
      }
      c.next = now + (d.allowed ? step : Math.max(step, Math.ceil(d.retryAfterMs / step) * step));
    }
    if (callers.length && next >= schedule.length && now + step >= cfg.durationMs) break;
  }
  await limiter.close?.();
  const steady = sc.steady ? sc.steady(cfg.durationMs) : [cfg.warmupMs, cfg.durationMs];
  const metrics = fairnessMetrics({ log, groups, spec, steady, stepAtMs: sc.stepAtMs?.(cfg.durationMs), durationMs: cfg.durationMs });
  return { ...metrics, attemptsPerSuccess: sc.closed ? closed.attempts / Math.max(1, closed.successes) : undefined };
}

/** The figures the bench's targets read (bench/sections/fairness.js), per run. */
function figures(id, r) {
  const f = {
    guarantee: r.guarantee,
    underShare: r.underShare,
    utilisation: r.utilisation,
    jain: r.jain,
    maxSliding: r.maxSliding,
    over: r.overAdmission,
  };
  if (id === 's10') {
    f.paying = r.perGroup[1].admitted / r.perGroup[1].fair;
    f.flooder = r.perGroup[0].admitted / r.perGroup[0].fair;
  }
  if (id === 'c1') f.critical = Math.min(...r.perGroup.filter((g) => g.name.startsWith('critical-')).map((g) => g.admitted / g.offered));
  if (r.convergenceMs !== undefined) f.convergenceMs = r.convergenceMs;
  if (r.attemptsPerSuccess !== undefined) f.attemptsPerSuccess = r.attemptsPerSuccess;
  return f;
}

async function main() {
  const args = Object.fromEntries(
    process.argv.slice(2).map((a) => {
      const [k, v] = a.replace(/^--/, '').split('=');
      return [k, v ?? 'true'];
    }),
  );
  const cfg = configFor('fairness', false);
  const ids = args.scenarios ? args.scenarios.split(',') : Object.keys(SCENARIOS);
  const seeds = Number(args.seeds ?? 5);
  const tickMs = Number(args.tick ?? 1);
  const out = {};
  for (const id of ids) {
    const runs = [];
    for (let s = 1; s <= seeds; s++) runs.push(figures(id, await simulate(id, s, cfg, tickMs)));
    out[id] = runs;
    if (args.json) continue;
    const keys = Object.keys(runs[0]);
    const cell = (k) => {
      const xs = runs.map((r) => r[k]).filter((x) => x !== undefined);
      if (!xs.length) return `${k} —`;
      const d = k === 'maxSliding' || k === 'over' || k === 'convergenceMs' ? 0 : 3;
      const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
      return `${k} ${Math.min(...xs).toFixed(d)}–${Math.max(...xs).toFixed(d)} (${mean.toFixed(d)})`;
    };
    console.log(`${id}: ${keys.map(cell).join('; ')}`);
  }
  if (args.json) console.log(JSON.stringify(out));
}

if (require.main === module) {
  main().catch((e) => {
    console.error(e);
    process.exit(1);
  });
}

module.exports = { simulate };
