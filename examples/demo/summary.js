'use strict';
/** The numbers of a finished run, per system and per tenant, and the plain-text tables printed at the end. */
const { fairShares } = require('./scenario');
const { maxInAnyWindow } = require('./recorder');
const { sideBySide, pct } = require('./facts');

/**
 * What the strict limit can admit per second: a token bucket of `burst` refilled every windowMs/(limit − burst + 1)
 * (README, "How the fair share works"); `sustained: true` trades that bound for the full limit.
 */
function strictCapacityPerS(spec) {
  const perWindow = spec.sustained ? spec.limit : spec.limit - spec.burst + 1;
  return (perWindow * 1000) / spec.windowMs;
}

/** The latest of the tenants' last jobs (null when none was deferred). */
const lastOf = (rows) => rows.reduce((last, t) => (t.jobsDrainedMs === null ? last : Math.max(last ?? 0, t.jobsDrainedMs)), null);

/** A tenant that sent fewer requests than this is not judged against its fair share: one denial would read as 0 %. */
const MIN_SENT_TO_JUDGE = 10;

function summarizeSystem(system, { tenants, limit, windowMs, durationMs, drainedAtMs, capacityPerS }) {
  const r = system.recorder;
  const seconds = durationMs / 1000;
  const fair = fairShares(
    capacityPerS,
    tenants.map((t) => ({ name: t.name, weight: t.weight, rate: r.total('sent', t.name) / seconds })),
  );
  const rows = tenants.map((t) => {
    // Served while the load ran: live requests let through plus deferred jobs the workers finished.
    const served = r.between('admitted', 0, durationMs, t.name) + r.between('completed', 0, durationMs, t.name);
    const fairPerS = fair.get(t.name);
    const lastJobMs = r.lastCompletedMs[t.name];
    return {
      name: t.name,
      weight: t.weight,
      role: t.role,
      sent: r.total('sent', t.name),
      admitted: r.total('admitted', t.name),
      deferred: r.total('deferred', t.name),
      rejected: r.total('rejected', t.name),
      errors: r.total('errors', t.name),
      completed: r.total('completed', t.name),
      servedPerS: served / seconds,
      fairPerS,
      share: served / seconds / capacityPerS,
      fairShare: fairPerS / capacityPerS,
      vsFair: fairPerS > 0 && r.total('sent', t.name) >= MIN_SENT_TO_JUDGE ? served / seconds / fairPerS : null,
      // When this tenant's last deferred job finished, after the load stopped (0: during the load).
      jobsDrainedMs: lastJobMs === undefined ? null : Math.max(0, lastJobMs - durationMs),
    };
  });
  const sum = (key) => rows.reduce((total, row) => total + row[key], 0);
  const loadWork = r.workTimes.filter((t) => t < durationMs).length;
  const worst = rows.filter((row) => row.vsFair !== null).reduce((min, row) => Math.min(min, row.vsFair), Infinity);
  return {
    key: system.key,
    title: system.title,
    deferring: system.deferring,
    errorStatuses: r.errorStatuses,
    tenants: rows,
    totals: {
      sent: sum('sent'),
      admitted: sum('admitted'),
      deferred: sum('deferred'),
      rejected: sum('rejected'),
      errors: sum('errors'),
      completed: sum('completed'),
    },
    servedPerS: sum('servedPerS'),
    fairPerS: sum('fairPerS'),
    // Backend work (live + jobs) while the load ran, against what the limit allows in that time.
    utilisation: loadWork / (limit * seconds),
    maxInWindow: maxInAnyWindow(r.workTimes, windowMs),
    maxIn100Ms: maxInAnyWindow(r.workTimes, 100),
    worstFairRatio: Number.isFinite(worst) ? worst : 1,
    // Drained: when the last deferred job finished, after the load (null: the bounded drain ran out first).
    drainMs: drainedAtMs[system.key] === undefined ? null : (lastOf(rows) ?? 0),
  };
}

/** Counts of `outcome` per bucket, all tenants together. */
function sumSeries(recorder, outcome) {
  const out = [];
  for (const counts of Object.values(recorder.series[outcome])) {
    counts.forEach((n, i) => {
      out[i] = (out[i] ?? 0) + n;
    });
  }
  return Array.from(out, (n) => n ?? 0);
}

/** `spec`: the bulk-limiter's resolved spec; fair shares of both systems are split from its strict capacity. */
function summarize({ systems, tenants, spec, durationMs, drainedAtMs, storeKind }) {
  const { limit, windowMs, burst } = spec;
  const capacityPerS = strictCapacityPerS(spec);
  const context = { tenants, limit, windowMs, durationMs, drainedAtMs, capacityPerS };
  return {
    limit,
    windowMs,
    burst,
    capacityPerS,
    durationMs,
    storeKind,
    tenants: tenants.map(({ name, weight, role, route, rate }) => ({ name, weight, role, route, rate })),
    systems: Object.fromEntries(systems.map((s) => [s.key, summarizeSystem(s, context)])),
  };
}

function table(header, rows) {
  const widths = header.map((h, i) => Math.max(String(h).length, ...rows.map((row) => String(row[i]).length)));
  const line = (cells) => cells.map((c, i) => (i === 0 ? String(c).padEnd(widths[i]) : String(c).padStart(widths[i]))).join('  ');
  return [line(header), widths.map((w) => '─'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

const rate = (x) => x.toFixed(1);
const vsFair = (ratio) => (ratio === null ? '' : pct(ratio));
const lastJob = (ms) => (ms === null ? '' : `+${(ms / 1000).toFixed(1)} s`);

/** The end-of-run text: one table per system, then the side-by-side facts. */
function formatSummary(summary) {
  const parts = [];
  for (const s of Object.values(summary.systems)) {
    parts.push(`\n${s.title}${s.deferring ? '' : ' (deferral not available in this build: denied imports get 429)'}`);
    const rows = s.tenants.map((t) => [
      t.name,
      t.weight,
      t.sent,
      t.admitted,
      t.deferred,
      t.rejected,
      t.completed,
      lastJob(t.jobsDrainedMs),
      rate(t.servedPerS),
      rate(t.fairPerS),
      vsFair(t.vsFair),
    ]);
    const tot = s.totals;
    rows.push([
      'total',
      '',
      tot.sent,
      tot.admitted,
      tot.deferred,
      tot.rejected,
      tot.completed,
      lastJob(lastOf(s.tenants)),
      rate(s.servedPerS),
      rate(s.fairPerS),
      '',
    ]);
    parts.push(table(['tenant', 'w', 'demand', 'admitted', 'deferred', 'rejected', 'completed', 'last job', 'served/s', 'fair/s', 'vs fair'], rows));
    if (tot.errors > 0) parts.push(`(${tot.errors} requests failed: ${JSON.stringify(s.errorStatuses)} by HTTP status, 0 = no answer)`);
  }
  const [ours, base] = [summary.systems.ours, summary.systems.baseline];
  parts.push(
    '',
    `fair/s: weighted max-min split of what the strict limit can admit, (limit − burst + 1) per window = ${rate(summary.capacityPerS)}/s (limit ${summary.limit}, burst ${summary.burst}); vs fair: served / fair (not judged under ${MIN_SENT_TO_JUDGE} requests); last job: when the tenant's last deferred job finished, after the load`,
    '',
    table(
      ['side by side', ours.title, base.title],
      sideBySide(summary).map((f) => [f.label, ...f.cells.map((c) => c.text)]),
    ),
  );
  return parts.join('\n');
}

module.exports = { summarize, formatSummary, sumSeries, strictCapacityPerS, table, MIN_SENT_TO_JUDGE };
