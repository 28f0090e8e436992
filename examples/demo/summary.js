'use strict';
/** The numbers of a finished run, per system and per tenant, and the plain-text tables printed at the end. */
const { fairShares } = require('./scenario');
const { maxInAnyWindow } = require('./recorder');

function summarizeSystem(system, { tenants, limit, windowMs, durationMs, drainedAtMs }) {
  const r = system.recorder;
  const seconds = durationMs / 1000;
  const fair = fairShares(limit, tenants.map((t) => ({ name: t.name, weight: t.weight, rate: r.total('sent', t.name) / seconds })));
  const rows = tenants.map((t) => {
    // Served while the load ran: live requests let through plus deferred jobs the workers finished.
    const served = r.between('admitted', 0, durationMs, t.name) + r.between('completed', 0, durationMs, t.name);
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
      share: served / seconds / limit,
      fairShare: fair.get(t.name) / limit,
    };
  });
  const sum = (key) => rows.reduce((total, row) => total + row[key], 0);
  const peakBucket = Math.max(0, ...sumSeries(r, 'work'));
  const loadWork = r.workTimes.filter((t) => t < durationMs).length;
  const worst = rows.filter((row) => row.fairShare > 0).reduce((min, row) => Math.min(min, row.share / row.fairShare), Infinity);
  return {
    key: system.key,
    title: system.title,
    deferring: system.deferring,
    errorStatuses: r.errorStatuses,
    tenants: rows,
    totals: { sent: sum('sent'), admitted: sum('admitted'), deferred: sum('deferred'), rejected: sum('rejected'), errors: sum('errors'), completed: sum('completed') },
    // Backend work (live + jobs) while the load ran, against what the limit allows in that time.
    utilisation: loadWork / (limit * seconds),
    maxInWindow: maxInAnyWindow(r.workTimes, windowMs),
    peakPerS: (peakBucket * 1000) / r.bucketMs,
    worstFairRatio: Number.isFinite(worst) ? worst : 1,
    drainMs: drainedAtMs[system.key] === undefined ? null : Math.max(0, drainedAtMs[system.key] - durationMs),
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

function summarize({ systems, tenants, limit, windowMs, durationMs, drainedAtMs, storeKind }) {
  const context = { tenants, limit, windowMs, durationMs, drainedAtMs };
  return {
    limit,
    windowMs,
    durationMs,
    storeKind,
    tenants: tenants.map(({ name, weight, role, route, rate }) => ({ name, weight, role, route, rate })),
    systems: Object.fromEntries(systems.map((s) => [s.key, summarizeSystem(s, context)])),
  };
}

const pct = (x) => `${Math.round(x * 100)}%`;

function table(header, rows) {
  const widths = header.map((h, i) => Math.max(String(h).length, ...rows.map((row) => String(row[i]).length)));
  const line = (cells) => cells.map((c, i) => (i === 0 ? String(c).padEnd(widths[i]) : String(c).padStart(widths[i]))).join('  ');
  return [line(header), widths.map((w) => '─'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

/** The end-of-run text: one table per system, then the side-by-side facts. */
function formatSummary(summary) {
  const parts = [];
  for (const s of Object.values(summary.systems)) {
    parts.push(`\n${s.title}${s.deferring ? '' : ' (deferral not available in this build: denied imports get 429)'}`);
    const rows = s.tenants.map((t) => [t.name, t.weight, t.sent, t.admitted, t.deferred, t.rejected, t.completed, pct(t.share), pct(t.fairShare)]);
    const tot = s.totals;
    rows.push(['total', '', tot.sent, tot.admitted, tot.deferred, tot.rejected, tot.completed, pct(s.utilisation), '']);
    parts.push(table(['tenant', 'w', 'demand', 'admitted', 'deferred', 'rejected', 'completed', 'share', 'fair share'], rows));
    if (tot.errors > 0) parts.push(`(${tot.errors} requests failed: ${JSON.stringify(s.errorStatuses)} by HTTP status, 0 = no answer)`);
  }
  const [ours, base] = [summary.systems.ours, summary.systems.baseline];
  const win = `${summary.windowMs / 1000} s`;
  parts.push(
    '',
    table(
      ['side by side', ours.title, base.title],
      [
        [`most backend work in any ${win} (limit ${summary.limit})`, ours.maxInWindow, base.maxInWindow],
        ['peak rate over 100 ms', `${ours.peakPerS}/s`, `${base.peakPerS}/s`],
        ['capacity used while loaded', pct(ours.utilisation), pct(base.utilisation)],
        ['worst tenant vs its fair share', pct(ours.worstFairRatio), pct(base.worstFairRatio)],
        ['backlog drained after load', fmtDrain(ours.drainMs), fmtDrain(base.drainMs)],
      ],
    ),
  );
  return parts.join('\n');
}

const fmtDrain = (ms) => (ms === null ? 'not drained' : `${(ms / 1000).toFixed(1)} s`);

module.exports = { summarize, formatSummary, sumSeries, table, pct };
