'use strict';
/** Pure statistics used by every section: percentiles, Jain, sliding-window maximum, water-filling. */

/** p-th percentile (0..100) of a numeric array (sorted copy; nearest rank). */
function percentile(values, p) {
  if (values.length === 0) return NaN;
  const sorted = Float64Array.from(values).sort();
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank];
}

/** Jain's index (Σx)² / (n·Σx²): 1 when every x is equal. */
function jain(xs) {
  if (xs.length === 0) return NaN;
  let sum = 0;
  let sq = 0;
  for (const x of xs) {
    sum += x;
    sq += x * x;
  }
  return sq === 0 ? 1 : (sum * sum) / (xs.length * sq);
}

/**
 * Most events in any half-open window [x, x + windowMs), by two pointers over sorted times.
 * `times` must be sorted ascending.
 */
function maxInSlidingWindow(times, windowMs) {
  let best = 0;
  let i = 0;
  for (let j = 0; j < times.length; j++) {
    while (times[j] - times[i] >= windowMs) i++;
    if (j - i + 1 > best) best = j - i + 1;
  }
  return best;
}

/** Most events in any aligned window [k·W, (k+1)·W). */
function maxInFixedWindow(times, windowMs) {
  const counts = new Map();
  let best = 0;
  for (const t of times) {
    const k = Math.floor(t / windowMs);
    const c = (counts.get(k) || 0) + 1;
    counts.set(k, c);
    if (c > best) best = c;
  }
  return best;
}

/**
 * Max-min fair (weighted) split of `capacity` over demands: each group gets min(d_i, λ·w_i) with λ
 * chosen so the shares sum to min(capacity, Σd). Returns the shares in input order.
 */
function waterFill(capacity, demands, weights) {
  const n = demands.length;
  const share = new Array(n).fill(0);
  let left = capacity;
  let open = demands.map((_, i) => i).filter((i) => demands[i] > 0);
  while (open.length > 0 && left > 1e-12) {
    const wsum = open.reduce((s, i) => s + weights[i], 0);
    const level = left / wsum;
    const capped = open.filter((i) => demands[i] - share[i] <= level * weights[i]);
    if (capped.length === 0) {
      for (const i of open) share[i] += level * weights[i];
      left = 0;
      break;
    }
    for (const i of capped) {
      left -= demands[i] - share[i];
      share[i] = demands[i];
    }
    open = open.filter((i) => !capped.includes(i));
  }
  return share;
}

module.exports = { percentile, jain, maxInSlidingWindow, maxInFixedWindow, waterFill };
