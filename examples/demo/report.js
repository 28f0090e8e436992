'use strict';
/** The HTML report: both systems side by side, SVG charts of per-tenant admitted rates, backend load, backlog. */
const { esc } = require('./svg-chart');
const { systemCharts, chartScales } = require('./report-charts');
const { MIN_SENT_TO_JUDGE } = require('./summary');
const { sideBySide, fairVerdict, pct, STARVED_BELOW } = require('./facts');

const PALETTE = ['#d62728', '#1f77b4', '#ff7f0e', '#2ca02c', '#9467bd', '#8c564b', '#e377c2', '#17becf', '#bcbd22', '#7f7f7f'];

const rate = (x) => x.toFixed(1);
const lastJob = (ms) => (ms === null ? '' : `+${(ms / 1000).toFixed(1)} s`);

function tenantTable(s) {
  const rows = s.tenants
    .map(
      (t) =>
        `<tr data-tenant="${esc(t.name)}"><td>${esc(t.name)}</td><td>${t.weight}</td><td>${t.sent}</td><td>${t.admitted}</td><td>${t.rejected}</td><td class="deferred">${t.deferred}</td>` +
        `<td class="last-job">${lastJob(t.jobsDrainedMs)}</td><td class="served">${rate(t.servedPerS)}</td><td class="fair">${rate(t.fairPerS)}</td>` +
        `<td class="vs-fair ${fairVerdict(t.vsFair)}">${t.vsFair === null ? '' : pct(t.vsFair)}</td></tr>`,
    )
    .join('\n');
  const tot = s.totals;
  return `<table class="tenants"><thead><tr><th>tenant</th><th>w</th><th>demand</th><th>admitted</th><th>rejected</th><th>deferred</th><th>last job</th><th>served /s</th><th>fair /s</th><th>vs fair</th></tr></thead>
<tbody>${rows}</tbody>
<tfoot><tr><td>total</td><td></td><td>${tot.sent}</td><td>${tot.admitted}</td><td>${tot.rejected}</td><td>${tot.deferred}</td><td></td><td>${rate(s.servedPerS)}</td><td>${rate(s.fairPerS)}</td><td></td></tr></tfoot></table>`;
}

function renderReport({ summary, systems, endMs }) {
  const colours = new Map(summary.tenants.map((t, i) => [t.name, PALETTE[i % PALETTE.length]]));
  const scales = chartScales({ summary, systems, endMs });
  const [ours, base] = [summary.systems.ours, summary.systems.baseline];
  const win = `${summary.windowMs / 1000} s`;
  const facts = sideBySide(summary)
    .map(
      (f) =>
        `<tr><th>${esc(f.label)}</th>${f.cells.map((c) => `<td class="${c.verdict}">${esc(c.text)}</td>`).join('')}<td class="note">${esc(f.note)}</td></tr>`,
    )
    .join('\n');
  const legend = summary.tenants
    .map(
      (t) =>
        `<li><span class="swatch" style="background:${colours.get(t.name)}"></span><b>${esc(t.name)}</b> <span class="role">w ${t.weight} · ${esc(t.role)}</span></li>`,
    )
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
.facts td { font-weight: 600; } .good { color: #1a7f37; } .bad { color: #b42318; }
.facts td.note { color: #666; font-size: 12.5px; font-weight: normal; }
.legend { list-style: none; padding: 0; margin: 0 0 16px; display: flex; flex-wrap: wrap; gap: 6px 18px; }
.swatch { display: inline-block; width: 14px; height: 4px; vertical-align: middle; margin-right: 4px; }
.role { color: #777; font-size: 12.5px; }
.systems { display: grid; grid-template-columns: repeat(auto-fit, minmax(520px, 1fr)); gap: 20px; }
.system { background: #fff; border: 1px solid #e4e4e4; border-radius: 8px; padding: 14px; overflow-x: auto; }
.system.ours h2 { color: #1a7f37; } .system.baseline h2 { color: #b42318; }
.chart { width: 100%; height: auto; display: block; margin-bottom: 6px; }
.chart-title { font-size: 12.5px; fill: #333; font-weight: 600; }
.tick { font-size: 10.5px; fill: #777; } .grid { stroke: #eee; } .axis { stroke: #999; }
.guide { stroke: #b42318; stroke-dasharray: 5 4; stroke-width: 1.2; } .guide-label { font-size: 10.5px; fill: #b42318; }
.mark { stroke: #999; stroke-dasharray: 3 3; } .mark-label { font-size: 10.5px; fill: #888; }
.tenants { border-collapse: collapse; width: 100%; font-size: 12px; margin-top: 8px; }
.tenants th, .tenants td { padding: 3px 4px; text-align: right; border-bottom: 1px solid #eee; white-space: nowrap; }
.tenants th:first-child, .tenants td:first-child { text-align: left; }
.tenants tfoot td { font-weight: 600; border-top: 1px solid #ccc; } .tenants td.bad { font-weight: 600; }
footer { color: #888; font-size: 12px; margin-top: 18px; }
</style></head>
<body>
<h1>bulk-limiter vs the original fixed-window design, same load</h1>
<p class="sub">Limit ${summary.limit} requests per ${win} for the whole backend (burst ${summary.burst}: the strict limit admits <span class="capacity">${rate(summary.capacityPerS)}</span>/s sustained) · ${summary.durationMs / 1000} s of load, then the backlog drains · ${esc(summary.storeKind)} store · generated ${esc(new Date().toISOString())}</p>
<table class="facts"><thead><tr><th></th><th>${esc(ours.title)}</th><th>${esc(base.title)}</th><th></th></tr></thead><tbody>
${facts}
</tbody></table>
<ul class="legend">${legend}</ul>
<div class="systems">
${columns}
</div>
<footer>Served /s = (live requests admitted + deferred jobs completed) per second while the load ran. Fair /s = weighted max-min (water-filling) split of what the strict limit can admit, (limit − burst + 1) per window = ${rate(summary.capacityPerS)}/s, over each tenant’s demand; the same target for both systems. Vs fair = served / fair; under ${pct(STARVED_BELOW)} is shown as starved; tenants that sent fewer than ${MIN_SENT_TO_JUDGE} requests are not judged. Deferred = the tenant’s requests that became jobs; last job = when its last job finished, after the load stopped. Generated by <code>npm run demo</code>.</footer>
</body></html>
`;
}

module.exports = { renderReport };
