'use strict';
/** The HTML report: both systems side by side, SVG charts of per-tenant admitted rates, backend load, backlog. */
const { svgChart, esc } = require('./svg-chart');
const { sumSeries, pct } = require('./summary');

const PALETTE = ['#d62728', '#1f77b4', '#ff7f0e', '#2ca02c', '#9467bd', '#8c564b', '#e377c2', '#17becf', '#bcbd22', '#7f7f7f'];

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

function backlogPoints(recorder, untilMs) {
  const deferred = sumSeries(recorder, 'deferred');
  const completed = sumSeries(recorder, 'completed');
  const points = [];
  let backlog = 0;
  for (let i = 0; i * recorder.bucketMs < untilMs; i++) {
    backlog += (deferred[i] ?? 0) - (completed[i] ?? 0);
    points.push([((i + 1) * recorder.bucketMs) / 1000, backlog]);
  }
  return points;
}

function systemCharts({ system, summary, colours, endMs, scales }) {
  const r = system.recorder;
  const xMaxS = Math.ceil(endMs / 1000);
  const loadEnd = [{ x: summary.durationMs / 1000, label: 'load stops' }];
  const limitGuide = [{ y: summary.limit, label: `limit ${summary.limit}/s` }];
  const tenantSeries = summary.tenants.map((t) => ({
    name: t.name,
    color: colours.get(t.name),
    points: ratePoints(r.series.admitted[t.name], r.bucketMs, 1000, endMs),
  }));
  const work = sumSeries(r, 'work');
  return [
    svgChart({ id: `${system.key}-admitted`, title: 'admitted per second, by tenant', xMaxS, yMax: scales.admitted, series: tenantSeries, guides: limitGuide, marks: loadEnd }),
    svgChart({
      id: `${system.key}-load`,
      title: 'backend load: requests + jobs per second, at 100 ms resolution',
      xMaxS,
      yMax: scales.load,
      series: [{ name: 'backend load', color: '#444', area: true, points: ratePoints(work, r.bucketMs, r.bucketMs, endMs) }],
      guides: limitGuide,
      marks: loadEnd,
    }),
    svgChart({
      id: `${system.key}-backlog`,
      title: 'backlog: deferred jobs waiting',
      xMaxS,
      yMax: scales.backlog,
      series: [{ name: 'backlog', color: '#ff7f0e', area: true, points: backlogPoints(r, endMs) }],
      marks: loadEnd,
      height: 160,
    }),
  ].join('\n');
}

function tenantTable(s) {
  const rows = s.tenants
    .map(
      (t) =>
        `<tr><td>${esc(t.name)}</td><td>${t.weight}</td><td>${t.sent}</td><td>${t.admitted}</td><td>${t.deferred}</td><td>${t.rejected}</td><td>${t.completed}</td>` +
        `<td class="${t.share < t.fairShare * 0.8 && t.fairShare - t.share > 0.02 ? 'bad' : ''}">${pct(t.share)}</td><td>${pct(t.fairShare)}</td></tr>`,
    )
    .join('\n');
  const tot = s.totals;
  return `<table class="tenants"><thead><tr><th>tenant</th><th>w</th><th>demand</th><th>admitted</th><th>deferred</th><th>rejected</th><th>completed</th><th>share of limit</th><th>fair share</th></tr></thead>
<tbody>${rows}</tbody>
<tfoot><tr><td>total</td><td></td><td>${tot.sent}</td><td>${tot.admitted}</td><td>${tot.deferred}</td><td>${tot.rejected}</td><td>${tot.completed}</td><td>${pct(s.utilisation)}</td><td>100%</td></tr></tfoot></table>`;
}

function renderReport({ summary, systems, endMs }) {
  const colours = new Map(summary.tenants.map((t, i) => [t.name, PALETTE[i % PALETTE.length]]));
  const maxOf = (fn) => Math.max(...systems.map(fn));
  const scales = {
    admitted: maxOf((s) => Math.max(summary.limit, ...summary.tenants.map((t) => Math.max(0, ...ratePoints(s.recorder.series.admitted[t.name], s.recorder.bucketMs, 1000, endMs).map((p) => p[1]))))),
    load: maxOf((s) => Math.max(summary.limit * 1.2, ...ratePoints(sumSeries(s.recorder, 'work'), s.recorder.bucketMs, s.recorder.bucketMs, endMs).map((p) => p[1]))),
    backlog: maxOf((s) => Math.max(10, ...backlogPoints(s.recorder, endMs).map((p) => p[1]))),
  };
  const [ours, base] = [summary.systems.ours, summary.systems.baseline];
  const win = `${summary.windowMs / 1000} s`;
  const fact = (label, a, b, note) => `<tr><th>${label}</th><td class="ours">${a}</td><td class="base">${b}</td><td class="note">${note}</td></tr>`;
  const drain = (ms) => (ms === null ? 'not drained' : `${(ms / 1000).toFixed(1)} s`);
  const legend = summary.tenants
    .map((t) => `<li><span class="swatch" style="background:${colours.get(t.name)}"></span><b>${esc(t.name)}</b> <span class="role">w ${t.weight} · ${esc(t.role)}</span></li>`)
    .join('\n');
  const columns = systems
    .map((system) => {
      const s = summary.systems[system.key];
      return `<section class="system ${system.key}"><h2>${esc(s.title)}</h2>
${systemCharts({ system, summary, colours, endMs, scales })}
${tenantTable(s)}</section>`;
    })
    .join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>bulk-limiter demo report</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 24px; color: #222; background: #fafafa; }
h1 { margin: 0 0 4px; font-size: 22px; } h2 { font-size: 17px; margin: 0 0 8px; }
.sub { color: #666; margin: 0 0 16px; }
.facts { border-collapse: collapse; margin: 8px 0 16px; background: #fff; }
.facts th, .facts td { padding: 5px 12px; border-bottom: 1px solid #e4e4e4; text-align: left; }
.facts td.ours { color: #1a7f37; font-weight: 600; } .facts td.base { color: #b42318; font-weight: 600; }
.facts td.note { color: #666; font-size: 12.5px; }
.legend { list-style: none; padding: 0; margin: 0 0 16px; display: flex; flex-wrap: wrap; gap: 6px 18px; }
.swatch { display: inline-block; width: 14px; height: 4px; vertical-align: middle; margin-right: 4px; }
.role { color: #777; font-size: 12.5px; }
.systems { display: grid; grid-template-columns: repeat(auto-fit, minmax(520px, 1fr)); gap: 20px; }
.system { background: #fff; border: 1px solid #e4e4e4; border-radius: 8px; padding: 14px; }
.system.ours h2 { color: #1a7f37; } .system.baseline h2 { color: #b42318; }
.chart { width: 100%; height: auto; display: block; margin-bottom: 6px; }
.chart-title { font-size: 12.5px; fill: #333; font-weight: 600; }
.tick { font-size: 10.5px; fill: #777; } .grid { stroke: #eee; } .axis { stroke: #999; }
.guide { stroke: #b42318; stroke-dasharray: 5 4; stroke-width: 1.2; } .guide-label { font-size: 10.5px; fill: #b42318; }
.mark { stroke: #999; stroke-dasharray: 3 3; } .mark-label { font-size: 10.5px; fill: #888; }
.tenants { border-collapse: collapse; width: 100%; font-size: 12.5px; margin-top: 8px; }
.tenants th, .tenants td { padding: 3px 6px; text-align: right; border-bottom: 1px solid #eee; }
.tenants th:first-child, .tenants td:first-child { text-align: left; }
.tenants tfoot td { font-weight: 600; border-top: 1px solid #ccc; } .bad { color: #b42318; font-weight: 600; }
footer { color: #888; font-size: 12px; margin-top: 18px; }
</style></head>
<body>
<h1>bulk-limiter vs the original fixed-window design, same load</h1>
<p class="sub">Limit ${summary.limit} requests per ${win} for the whole backend · ${summary.durationMs / 1000} s of load, then the backlog drains · ${esc(summary.storeKind)} store · generated ${esc(new Date().toISOString())}</p>
<table class="facts"><thead><tr><th></th><th>${esc(ours.title)}</th><th>${esc(base.title)}</th><th></th></tr></thead><tbody>
${fact(`most backend work in any ${win}`, ours.maxInWindow, base.maxInWindow, `the limit is ${summary.limit}; deferred jobs the fixed window releases are never checked again`)}
${fact('peak rate over 100 ms', `${ours.peakPerS}/s`, `${base.peakPerS}/s`, 'a fixed window lets its whole budget through the moment it opens')}
${fact('capacity used while loaded', pct(ours.utilisation), pct(base.utilisation), 'floor(limit / tenants ever seen) leaves capacity idle and shrinks as tenants come and go')}
${fact('worst tenant vs its fair share', pct(ours.worstFairRatio), pct(base.worstFairRatio), 'weighted max-min fair share of the limit, given each tenant’s demand')}
${fact('backlog drained after the load', drain(ours.drainMs), drain(base.drainMs), 'bulk-limiter drains through the same budget as live traffic')}
</tbody></table>
<ul class="legend">${legend}</ul>
<div class="systems">
${columns}
</div>
<footer>Share of limit = (admitted + jobs completed) per second while the load ran, over the limit. Fair share = weighted water-filling of the limit over each tenant’s demand. Generated by <code>npm run demo</code>.</footer>
</body></html>
`;
}

module.exports = { renderReport };
