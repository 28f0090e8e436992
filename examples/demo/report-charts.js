'use strict';
/**
 * The charts of one system in the HTML report. A limit line is drawn only where the chart's buckets are the
 * limit's own window: per-tenant admissions per second, and backend work in the trailing window.
 */
const { svgChart } = require('./svg-chart');
const { sumSeries } = require('./summary');

/** Regroups 100 ms buckets into `size`-ms buckets, as a rate per second at each bucket's middle. */
function ratePoints(counts, bucketMs, size, untilMs) {
  const per = size / bucketMs;
  const points = [];
  for (let start = 0; start * bucketMs < untilMs; start += per) {
    let n = 0;
    for (let i = start; i < start + per; i++) n += counts[i] ?? 0;
    points.push([((start + per / 2) * bucketMs) / 1000, (n * 1000) / size]);
  }
  return points;
}

/** Counts per bucket (not a rate: a per-second limit has no per-bucket line to compare with). */
function countPoints(counts, bucketMs, untilMs) {
  const points = [];
  for (let i = 0; i * bucketMs < untilMs; i++) points.push([((i + 0.5) * bucketMs) / 1000, counts[i] ?? 0]);
  return points;
}

/**
 * Events in the trailing window (t − windowMs, t], sampled every `stepMs` and at every event (where the count
 * peaks), so the chart's highest point is the most in any window.
 */
function windowPoints(times, windowMs, untilMs, stepMs = 20) {
  const sorted = [...times].sort((a, b) => a - b);
  const grid = Array.from({ length: Math.ceil(untilMs / stepMs) + 1 }, (_, i) => i * stepMs);
  const samples = [...new Set([...grid, ...sorted])].sort((a, b) => a - b);
  const points = [];
  let lo = 0;
  let hi = 0;
  for (const t of samples) {
    while (hi < sorted.length && sorted[hi] <= t) hi++;
    while (lo < hi && sorted[lo] <= t - windowMs) lo++;
    points.push([t / 1000, hi - lo]);
  }
  return points;
}

/** Deferred and not yet completed, per 100 ms bucket, for one tenant. */
function backlogPoints(recorder, untilMs, tenant) {
  const deferred = recorder.series.deferred[tenant];
  const completed = recorder.series.completed[tenant];
  const points = [];
  let backlog = 0;
  for (let i = 0; i * recorder.bucketMs < untilMs; i++) {
    backlog += (deferred[i] ?? 0) - (completed[i] ?? 0);
    points.push([((i + 1) * recorder.bucketMs) / 1000, backlog]);
  }
  return points;
}

/** The largest y of every system's version of one chart, so both columns share a scale. */
function chartScales({ summary, systems, endMs }) {
  const maxOf = (fn) => Math.max(...systems.map((s) => Math.max(0, ...fn(s.recorder).map((p) => p[1]))));
  return {
    admitted: Math.max(
      summary.limit,
      maxOf((r) => summary.tenants.flatMap((t) => ratePoints(r.series.admitted[t.name], r.bucketMs, 1000, endMs))),
    ),
    tenth: Math.max(
      10,
      maxOf((r) => countPoints(sumSeries(r, 'work'), r.bucketMs, endMs)),
    ),
    window: Math.max(
      summary.limit * 1.2,
      maxOf((r) => windowPoints(r.workTimes, summary.windowMs, endMs)),
    ),
    backlog: Math.max(
      10,
      maxOf((r) => summary.tenants.flatMap((t) => backlogPoints(r, endMs, t.name))),
    ),
  };
}

function systemCharts({ system, summary, colours, endMs, scales }) {
  const r = system.recorder;
  const xMaxS = Math.ceil(endMs / 1000);
  const win = `${summary.windowMs / 1000} s`;
  const marks = [{ x: summary.durationMs / 1000, label: 'load stops' }];
  const limitPerWindow = [{ y: summary.limit, label: `limit ${summary.limit} per ${win}` }];
  const tenantSeries = summary.tenants.map((t) => ({
    name: t.name,
    color: colours.get(t.name),
    points: ratePoints(r.series.admitted[t.name], r.bucketMs, summary.windowMs, endMs),
  }));
  // Only tenants that deferred something: each one's jobs waiting, in its own colour.
  const backlogSeries = summary.tenants
    .filter((t) => r.total('deferred', t.name) > 0)
    .map((t) => ({ name: t.name, color: colours.get(t.name), area: true, points: backlogPoints(r, endMs, t.name) }));
  return [
    svgChart({
      id: `${system.key}-admitted`,
      title: `live requests admitted per ${win}, by tenant`,
      xMaxS,
      yMax: scales.admitted,
      series: tenantSeries,
      guides: limitPerWindow,
      marks,
    }),
    svgChart({
      id: `${system.key}-window`,
      title: `backend work in the trailing ${win} (requests + job starts)`,
      xMaxS,
      yMax: scales.window,
      series: [{ name: `work in the trailing ${win}`, color: '#444', area: true, points: windowPoints(r.workTimes, summary.windowMs, endMs) }],
      guides: limitPerWindow,
      marks,
    }),
    svgChart({
      id: `${system.key}-load`,
      title: `backend work started per 100 ms (no limit line: the limit is per ${win})`,
      xMaxS,
      yMax: scales.tenth,
      series: [{ name: 'work per 100 ms', color: '#777', area: true, points: countPoints(sumSeries(r, 'work'), r.bucketMs, endMs) }],
      marks,
      height: 160,
    }),
    svgChart({
      id: `${system.key}-backlog`,
      title: backlogSeries.length > 0 ? 'deferred jobs waiting, by tenant' : 'deferred jobs waiting: none deferred',
      xMaxS,
      yMax: scales.backlog,
      series: backlogSeries,
      marks,
      height: 160,
    }),
  ].join('\n');
}

module.exports = { systemCharts, chartScales, ratePoints, windowPoints, backlogPoints };
