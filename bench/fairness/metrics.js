'use strict';
/** Fairness figures of one scenario run (docs/algorithm.md §5). */
const { jain, maxInSlidingWindow, maxInFixedWindow, waterFill } = require('../lib/stats');

/**
 * log: merged decisions { group[], allowed[], at[] (ms rel. t0, store clock), issued[] (ms rel. t0) }.
 * groups: scenario groups (+ `closed` flag); spec: { limit, windowMs, burst }.
 */
function fairnessMetrics({ log, groups, spec, steady, stepAtMs, durationMs }) {
  const capacity = ((spec.limit - spec.burst + 1) / spec.windowMs) * 1000; // strict capacity per second
  const [from, to] = steady;
  const seconds = (to - from) / 1000;
  const admittedAt = [];
  const admitted = new Array(groups.length).fill(0);
  const offered = new Array(groups.length).fill(0);
  for (let k = 0; k < log.group.length; k++) {
    const g = log.group[k];
    if (log.allowed[k]) {
      admittedAt.push(log.at[k]);
      if (log.at[k] >= from && log.at[k] < to) admitted[g]++;
    }
    if (log.issued[k] >= from && log.issued[k] < to) offered[g]++;
  }
  admittedAt.sort((a, b) => a - b);
  const a = admitted.map((n) => n / seconds);
  // Closed-loop groups are backlogged by construction: their demand is unbounded.
  const d = groups.map((g, i) => (g.closed ? Infinity : offered[i] / seconds));
  const w = groups.map((g) => g.weight);
  const f = waterFill(capacity, d, w);
  const live = groups.map((_, i) => i).filter((i) => d[i] > 0);
  const wsum = live.reduce((s, i) => s + w[i], 0);
  // What each live group is guaranteed: its weighted part of capacity, or with classes of its class's share
  // (the 'default' class has the rest); what an idle class lends is borrowing, measured by Jain, not guaranteed.
  const classOf = (i) => groups[i].class ?? 'default';
  const classShare = (name) => {
    const shares = spec.classes ?? {};
    if (shares[name]) return shares[name].share;
    return Math.max(0, 1 - Object.values(shares).reduce((sum, c) => sum + c.share, 0));
  };
  const classWeight = (name) => live.filter((j) => classOf(j) === name).reduce((sum, j) => sum + w[j], 0);
  const guaranteed = (i) => (spec.classes ? (capacity * classShare(classOf(i)) * w[i]) / classWeight(classOf(i)) : (capacity * w[i]) / wsum);
  const maxSliding = maxInSlidingWindow(admittedAt, spec.windowMs);
  const totalA = a.reduce((s, x) => s + x, 0);
  const totalD = live.reduce((s, i) => s + d[i], 0);
  return {
    capacity,
    admittedPerSec: totalA,
    maxSliding,
    maxFixed: maxInFixedWindow(admittedAt, spec.windowMs),
    overAdmission: Math.max(0, maxSliding - spec.limit),
    utilisation: totalA / Math.min(totalD, capacity),
    jain: jain(live.map((i) => a[i] / f[i])),
    guarantee: Math.min(...live.map((i) => a[i] / Math.min(d[i], guaranteed(i)))),
    // tenants whose demand is at most their weighted share: the lowest admitted / demand (none: undefined)
    underShare: minOrUndefined(live.filter((i) => !groups[i].closed && d[i] <= (capacity * w[i]) / wsum).map((i) => a[i] / d[i])),
    perGroup: groups.map((g, i) => ({ name: g.name, weight: w[i], offered: d[i], admitted: a[i], fair: f[i] })),
    convergenceMs: stepAtMs === undefined ? undefined : convergence(log, groups, f, stepAtMs, durationMs),
  };
}

function minOrUndefined(xs) {
  return xs.length ? Math.min(...xs) : undefined;
}

/**
 * Time after the step until, in the 1 s window starting there, every live group's admitted rate is
 * within 5 % of its fair share (windows start every 50 ms).
 */
function convergence(log, groups, fair, stepAtMs, durationMs) {
  for (let start = stepAtMs; start + 1000 <= durationMs; start += 50) {
    const counts = new Array(groups.length).fill(0);
    for (let k = 0; k < log.group.length; k++) {
      if (log.allowed[k] && log.at[k] >= start && log.at[k] < start + 1000) counts[log.group[k]]++;
    }
    if (fair.every((fi, i) => fi === 0 || Math.abs(counts[i] - fi) <= 0.05 * fi)) return start - stepAtMs;
  }
  return Infinity;
}

/** Admitted per second per group in bins (for the time-series charts); at most `maxSeries` lines. */
function admittedSeries(log, groups, durationMs, binMs = 250, maxSeries = 8) {
  const bins = Math.ceil(durationMs / binMs);
  const order = groups.map((g, i) => i).sort((x, y) => (groups[y].rate || 1e9) - (groups[x].rate || 1e9));
  const shown = new Set(order.slice(0, maxSeries));
  const lines = new Map();
  const lineOf = (i) => (shown.has(i) ? groups[i].name : 'others (sum)');
  for (const i of order) if (!lines.has(lineOf(i))) lines.set(lineOf(i), new Array(bins).fill(0));
  for (let k = 0; k < log.group.length; k++) {
    const b = Math.floor(log.at[k] / binMs);
    if (log.allowed[k] && b >= 0 && b < bins) lines.get(lineOf(log.group[k]))[b] += 1000 / binMs;
  }
  return [...lines].map(([name, ys]) => ({ name, points: ys.map((y, b) => [((b + 0.5) * binMs) / 1000, y]) }));
}

module.exports = { fairnessMetrics, admittedSeries };
