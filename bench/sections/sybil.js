'use strict';
/**
 * Section 5: a flood of new ids. Identities are free (rotating client IPs under the default client-IP group),
 * and per-identity max-min fairness owes every new id its small demand first. The scenario: limit
 * 500/s with the default options, 3 established tenants at 50/s each (they send for `warmupMs` before the
 * flood), then `floodIds` new ids at `floodRate`/s (one request each) for `floodMs`, all through one RedisStore
 * on a fresh redis-server. Measured during the flood: each established tenant's admitted / demand, the most
 * admitted in any sliding 1 s window (the limit must hold), and Redis memory after the flood. Rows: the
 * defaults (new ids on probation share one group), maxGroups raised, probation off (the alternative), and
 * per-tenant rules with the default probation (each id on probation keeps its own rule state).
 */
const { startRedis } = require('../lib/redis');
const { maxInSlidingWindow } = require('../lib/stats');
const { markdownTable, fmt } = require('../lib/table');
const { progress } = require('../lib/progress');
const { loadCore } = require('../lib/package');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const TENANTS = 3;
const TENANT_RATE = 50;
const LIMIT = 500;
/** Requests per id in the returning flood. */
const RETURNS = 3;

/** Poisson arrival times (ms) at `rate` per second over [from, to). */
function poisson(rate, from, to) {
  const times = [];
  for (let t = from - Math.log(1 - Math.random()) * (1000 / rate); t < to; t -= Math.log(1 - Math.random()) * (1000 / rate)) times.push(t);
  return times;
}

async function usedMemory(client) {
  const info = await client.info('memory');
  return Number(/used_memory:(\d+)/.exec(info)[1]);
}

async function runVariant(core, cfg, variant) {
  const redis = await startRedis();
  try {
    const client = redis.client({ enableAutoPipelining: true });
    const limiter = core.createLimiter({
      store: new core.RedisStore({ client }),
      name: `sybil-${variant.id}`,
      limit: LIMIT,
      windowMs: 1000,
      timeoutMs: 2000,
      onStoreError: 'deny',
      logger: { warn: () => {} },
      ...variant.options,
    });
    await client.ping();
    const memoryBefore = await usedMemory(client);
    const floodFrom = cfg.warmupMs;
    const floodTo = cfg.warmupMs + cfg.floodMs;
    const schedule = [];
    for (let i = 0; i < TENANTS; i++) for (const t of poisson(TENANT_RATE, 0, floodTo)) schedule.push([t, `tenant-${i}`]);
    let n = 0;
    if (variant.returning) {
      // each new id comes back twice within a second (+0, +300–600 ms, +700–1000 ms): past probationMs (250 ms)
      // while its sighting is kept, so it graduates unless graduation is bounded; the same request rate in all
      const idGap = (1000 * RETURNS) / cfg.floodRate;
      for (let t = floodFrom; t < floodTo && n < cfg.floodIds; t += idGap) {
        const id = `198.51.100.${n % 256}/${n++}`;
        schedule.push([t, id], [t + 300 + 300 * Math.random(), id], [t + 700 + 300 * Math.random(), id]);
      }
    } else {
      const floodGap = 1000 / cfg.floodRate;
      for (let t = floodFrom; t < floodTo && n < cfg.floodIds; t += floodGap) schedule.push([t, `203.0.113.${n % 256}/${n++}`]);
    }
    schedule.sort((a, b) => a[0] - b[0]);

    const tenants = Array.from({ length: TENANTS }, () => ({ sent: 0, admitted: 0 }));
    const admittedAt = [];
    let floodAdmitted = 0;
    let errors = 0;
    const pending = [];
    const t0 = Date.now();
    for (const [t, group] of schedule) {
      const wait = t0 + t - Date.now();
      if (wait > 1) await sleep(wait);
      const inFlood = t >= floodFrom;
      pending.push(
        limiter.check(group).then((d) => {
          if (d.reason === 'store-error') errors += 1;
          if (d.allowed) admittedAt.push(d.at);
          if (!group.startsWith('tenant-')) {
            if (d.allowed) floodAdmitted += 1;
            return;
          }
          if (!inFlood) return;
          const s = tenants[Number(group.slice(7))];
          s.sent += 1;
          if (d.allowed) s.admitted += 1;
        }),
      );
      if (pending.length > 5000) await Promise.all(pending.splice(0));
    }
    await Promise.all(pending);
    const memoryAfter = await usedMemory(client);
    const fields = await client.hlen(`{bl:sybil-${variant.id}}:groups`).catch(() => 0);
    await limiter.close();
    admittedAt.sort((a, b) => a - b);
    return {
      variant,
      shares: tenants.map((s) => (s.sent ? s.admitted / s.sent : 1)),
      floodPerSec: floodAdmitted / (cfg.floodMs / 1000),
      maxSliding: maxInSlidingWindow(admittedAt, 1000),
      memoryMiB: (memoryAfter - memoryBefore) / 2 ** 20,
      fields,
      floodSent: n,
      errors,
    };
  } finally {
    await redis.stop();
  }
}

async function runSybil(cfg) {
  const { core, error } = loadCore();
  if (!core) return { title: '5. A flood of new ids', intro: `skipped: ${error}`, markdown: '' };
  const variants = [
    { id: 'default', label: 'default options', options: {} },
    { id: 'returning', label: `default options, each new id sends ${RETURNS} requests within 1 s`, options: {}, returning: true },
    { id: 'max-groups', label: 'maxGroups 200000', options: { tuning: { maxGroups: 200_000 } } },
    // The alternative: every new id registered on its first request (per-identity max-min, Sybil-prone).
    { id: 'no-probation', label: 'probationMs 0 (no probation)', options: { tuning: { probationMs: 0 } } },
    // Per-tenant rules above the tenants' rate: probation still on by default, each new id on its own rule state.
    {
      id: 'rules',
      label: 'with rules (default probation)',
      options: {
        rules: [
          { name: 'second', limit: 100, windowMs: 1000, algorithm: 'sliding-window' },
          { name: 'minute', limit: 4000, windowMs: 60_000 },
        ],
      },
    },
  ];
  const rows = [];
  for (const variant of variants) {
    progress(`sybil: ${variant.label} (${(cfg.warmupMs + cfg.floodMs) / 1000} s)`);
    rows.push(await runVariant(core, cfg, variant));
  }
  const table = markdownTable(
    [
      'options',
      'established tenants: admitted / demand during the flood',
      'new ids admitted/s',
      `max in any 1 s (limit ${LIMIT})`,
      'Redis memory after',
      'groups hash fields',
      'notes',
    ],
    rows.map((r) => [
      r.variant.label,
      r.shares.map((s) => fmt(s, 3)).join(', '),
      fmt(r.floodPerSec),
      fmt(r.maxSliding),
      `${fmt(r.memoryMiB, 1)} MiB`,
      fmt(r.fields),
      r.errors ? `${r.errors} store errors` : '',
    ]),
  );
  const byDefault = rows[0];
  const byRules = rows.find((r) => r.variant.id === 'rules');
  const byReturning = rows.find((r) => r.variant.id === 'returning');
  return {
    title: '5. A flood of new ids (Sybil)',
    intro: `limit ${LIMIT}/s, default options otherwise; ${TENANTS} established tenants at ${TENANT_RATE}/s each (Poisson, sending ${cfg.warmupMs / 1000} s before the flood), then ${fmt(byDefault.floodSent)} new ids at ${fmt(cfg.floodRate)}/s, one request each, for ${cfg.floodMs / 1000} s (the returning row: ${fmt(byReturning.floodSent)} new ids at ${fmt(cfg.floodRate / RETURNS)}/s, ${RETURNS} requests each within a second, the same request rate); one client process, one fresh redis-server per row.`,
    markdown: table,
    checks: [
      {
        name: 'flood of new ids: each established tenant gets ≥ 90 % of its demand (default options)',
        value: byDefault.shares.map((s) => fmt(s, 3)).join(', '),
        pass: Math.min(...byDefault.shares) >= 0.9,
      },
      {
        name: 'flood of new ids: each established tenant gets ≥ 90 % of its demand with rules (default probation)',
        value: byRules.shares.map((s) => fmt(s, 3)).join(', '),
        pass: Math.min(...byRules.shares) >= 0.9,
      },
      {
        name: `returning flood (each new id sends ${RETURNS} requests within 1 s): each established tenant gets ≥ 97 % of its demand`,
        value: byReturning.shares.map((s) => fmt(s, 3)).join(', '),
        pass: Math.min(...byReturning.shares) >= 0.97,
      },
      {
        name: 'flood of new ids: never more than the limit in any 1 s',
        value: rows.map((r) => fmt(r.maxSliding)).join(', '),
        pass: Math.max(...rows.map((r) => r.maxSliding)) <= LIMIT,
      },
    ],
    rows: rows.map(({ variant, ...rest }) => ({ variant: variant.id, ...rest })),
  };
}

module.exports = { runSybil };
