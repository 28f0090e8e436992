'use strict';
/** A small SVG line/area chart: time on x (seconds), one `<g class="series">` per series, dashed guides. */

const esc = (s) => String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);

function niceMax(value) {
  if (value <= 0) return 1;
  const step = 10 ** Math.floor(Math.log10(value));
  // Tops that divide into four round ticks.
  for (const m of [1, 1.2, 1.6, 2, 2.4, 3.2, 4, 6, 8, 10]) if (m * step >= value) return m * step;
  return 10 * step;
}

/**
 * @param {object} chart
 * @param {string} chart.id
 * @param {number} chart.xMaxS         seconds shown
 * @param {number} chart.yMax          y axis top (rounded up to a nice number)
 * @param {Array<{name: string, color: string, points: Array<[number, number]>, area?: boolean}>} chart.series
 * @param {Array<{y: number, label: string}>} [chart.guides]   horizontal dashed lines (the limit)
 * @param {Array<{x: number, label: string}>} [chart.marks]    vertical dashed lines (end of load)
 */
function svgChart({ id, title, xMaxS, yMax, series, guides = [], marks = [], width = 560, height = 220, yUnit = '' }) {
  const pad = { left: 46, right: 12, top: 26, bottom: 28 };
  const w = width - pad.left - pad.right;
  const h = height - pad.top - pad.bottom;
  const top = niceMax(yMax);
  const x = (s) => pad.left + (Math.min(s, xMaxS) / xMaxS) * w;
  const y = (v) => pad.top + h - (Math.min(v, top) / top) * h;
  const out = [];
  out.push(
    `<svg class="chart" id="${esc(id)}" viewBox="0 0 ${width} ${height}" role="img" aria-label="${esc(title)}" xmlns="http://www.w3.org/2000/svg">`,
  );
  out.push(`<text class="chart-title" x="${pad.left}" y="16">${esc(title)}</text>`);
  for (let i = 0; i <= 4; i++) {
    const v = (top * i) / 4;
    out.push(`<line class="grid" x1="${pad.left}" x2="${pad.left + w}" y1="${y(v).toFixed(1)}" y2="${y(v).toFixed(1)}"/>`);
    out.push(
      `<text class="tick" x="${pad.left - 6}" y="${(y(v) + 4).toFixed(1)}" text-anchor="end">${Number.isInteger(v) ? v : v.toFixed(1)}${yUnit}</text>`,
    );
  }
  const xStep = xMaxS > 40 ? 10 : xMaxS > 12 ? 5 : xMaxS > 5 ? 2 : 1;
  for (let s = 0; s <= xMaxS + 1e-9; s += xStep) {
    out.push(`<text class="tick" x="${x(s).toFixed(1)}" y="${pad.top + h + 16}" text-anchor="middle">${s}s</text>`);
  }
  for (const mark of marks) {
    out.push(`<line class="mark" x1="${x(mark.x).toFixed(1)}" x2="${x(mark.x).toFixed(1)}" y1="${pad.top}" y2="${pad.top + h}"/>`);
    const nearRight = x(mark.x) > pad.left + w - 70;
    out.push(
      `<text class="mark-label" x="${(x(mark.x) + (nearRight ? -4 : 4)).toFixed(1)}" y="${pad.top + 10}" text-anchor="${nearRight ? 'end' : 'start'}">${esc(mark.label)}</text>`,
    );
  }
  for (const s of series) {
    const pts = s.points.map(([px, py]) => `${x(px).toFixed(1)},${y(py).toFixed(1)}`);
    out.push(`<g class="series" data-series="${esc(s.name)}">`);
    if (s.area && pts.length > 0) {
      const base = y(0).toFixed(1);
      const first = x(s.points[0][0]).toFixed(1);
      const last = x(s.points[s.points.length - 1][0]).toFixed(1);
      out.push(`<path d="M${first},${base} L${pts.join(' L')} L${last},${base} Z" fill="${s.color}" fill-opacity="0.25" stroke="none"/>`);
    }
    out.push(
      `<polyline points="${pts.join(' ')}" fill="none" stroke="${s.color}" stroke-width="${s.area ? 1.2 : 1.8}" stroke-linejoin="round"><title>${esc(s.name)}</title></polyline>`,
    );
    out.push('</g>');
  }
  for (const guide of guides) {
    out.push(`<line class="guide" x1="${pad.left}" x2="${pad.left + w}" y1="${y(guide.y).toFixed(1)}" y2="${y(guide.y).toFixed(1)}"/>`);
    out.push(`<text class="guide-label" x="${pad.left + w - 4}" y="${(y(guide.y) - 4).toFixed(1)}" text-anchor="end">${esc(guide.label)}</text>`);
  }
  out.push(`<line class="axis" x1="${pad.left}" x2="${pad.left + w}" y1="${pad.top + h}" y2="${pad.top + h}"/>`);
  out.push('</svg>');
  return out.join('\n');
}

module.exports = { svgChart, esc, niceMax };
