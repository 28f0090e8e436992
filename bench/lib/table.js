'use strict';
/** Markdown tables and number formatting for the result files. */

function fmt(value, digits = 0) {
  if (value === undefined || value === null || Number.isNaN(value)) return '—';
  if (typeof value === 'string') return value;
  if (!Number.isFinite(value)) return String(value);
  return value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/** `rows` are arrays of cells (already strings or numbers). */
function markdownTable(header, rows) {
  const line = (cells) => `| ${cells.map((c) => (typeof c === 'number' ? fmt(c) : String(c))).join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

/** "1.23×" or "—" when either side is missing. */
function ratio(a, b) {
  if (!Number.isFinite(a) || !Number.isFinite(b) || b === 0) return '—';
  return `${(a / b).toFixed(2)}×`;
}

module.exports = { fmt, markdownTable, ratio };
