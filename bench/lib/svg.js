'use strict';
/** Dependency-free SVG charts: a multi-series line chart and a horizontal bar chart. */

const PALETTE = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf', '#393b79', '#637939'];

const esc = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function niceMax(v) {
  if (!(v > 0)) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}

/**
 * series: [{ name, points: [[x, y], …] }]; optional hLines: [{ y, label }] (e.g. the limit).
 */
function lineChart({ title, xLabel, yLabel, series, hLines = [], width = 760, height = 360 }) {
  const m = { l: 60, r: 170, t: 34, b: 44 };
  const w = width - m.l - m.r;
  const h = height - m.t - m.b;
  const xs = series.flatMap((s) => s.points.map((p) => p[0]));
  const ys = series.flatMap((s) => s.points.map((p) => p[1])).concat(hLines.map((l) => l.y));
  const xMin = Math.min(...xs, 0);
  const xMax = Math.max(...xs, 1);
  const yMax = niceMax(Math.max(...ys, 1) * 1.05);
  const X = (x) => m.l + ((x - xMin) / (xMax - xMin || 1)) * w;
  const Y = (y) => m.t + h - (y / yMax) * h;
  const out = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif" font-size="11">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="${m.l}" y="20" font-size="13" font-weight="bold">${esc(title)}</text>`,
  ];
  for (let i = 0; i <= 5; i++) {
    const y = (yMax * i) / 5;
    out.push(
      `<line x1="${m.l}" x2="${m.l + w}" y1="${Y(y)}" y2="${Y(y)}" stroke="#eee"/>`,
      `<text x="${m.l - 6}" y="${Y(y) + 4}" text-anchor="end">${+y.toFixed(1)}</text>`,
    );
  }
  const xStep = niceMax((xMax - xMin) / 8);
  for (let x = Math.ceil(xMin / xStep) * xStep; x <= xMax + 1e-9; x += xStep) {
    out.push(`<text x="${X(x)}" y="${m.t + h + 16}" text-anchor="middle">${+x.toFixed(2)}</text>`);
  }
  out.push(
    `<rect x="${m.l}" y="${m.t}" width="${w}" height="${h}" fill="none" stroke="#999"/>`,
    `<text x="${m.l + w / 2}" y="${height - 8}" text-anchor="middle">${esc(xLabel)}</text>`,
    `<text transform="translate(14 ${m.t + h / 2}) rotate(-90)" text-anchor="middle">${esc(yLabel)}</text>`,
  );
  for (const line of hLines) {
    out.push(
      `<line x1="${m.l}" x2="${m.l + w}" y1="${Y(line.y)}" y2="${Y(line.y)}" stroke="#000" stroke-dasharray="5 4"/>`,
      `<text x="${m.l + w - 4}" y="${Y(line.y) - 4}" text-anchor="end">${esc(line.label)}</text>`,
    );
  }
  series.forEach((s, i) => {
    const colour = PALETTE[i % PALETTE.length];
    const d = s.points.map((p, k) => `${k ? 'L' : 'M'}${X(p[0]).toFixed(1)},${Y(p[1]).toFixed(1)}`).join('');
    out.push(
      `<path d="${d}" fill="none" stroke="${colour}" stroke-width="1.5"/>`,
      `<rect x="${m.l + w + 12}" y="${m.t + i * 16}" width="10" height="10" fill="${colour}"/>`,
      `<text x="${m.l + w + 26}" y="${m.t + i * 16 + 9}">${esc(s.name)}</text>`,
    );
  });
  out.push('</svg>');
  return out.join('\n');
}

/** bars: [{ label, value, highlight? }] drawn horizontally, values printed at the bar end. */
function barChart({ title, unit, bars, width = 760 }) {
  const m = { l: 250, r: 90, t: 34, b: 16 };
  const rowH = 22;
  const height = m.t + m.b + bars.length * rowH;
  const w = width - m.l - m.r;
  const vMax = niceMax(Math.max(...bars.map((b) => b.value || 0), 1));
  const out = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif" font-size="11">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="10" y="20" font-size="13" font-weight="bold">${esc(title)}</text>`,
  ];
  bars.forEach((b, i) => {
    const y = m.t + i * rowH;
    const len = Number.isFinite(b.value) ? (b.value / vMax) * w : 0;
    out.push(
      `<text x="${m.l - 8}" y="${y + 14}" text-anchor="end">${esc(b.label)}</text>`,
      `<rect x="${m.l}" y="${y + 3}" width="${len.toFixed(1)}" height="${rowH - 6}" fill="${b.highlight ? '#d62728' : '#1f77b4'}"/>`,
      `<text x="${m.l + len + 6}" y="${y + 14}">${Number.isFinite(b.value) ? `${Math.round(b.value).toLocaleString('en-US')} ${esc(unit)}` : 'n/a'}</text>`,
    );
  });
  out.push('</svg>');
  return out.join('\n');
}

module.exports = { lineChart, barChart };
