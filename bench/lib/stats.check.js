'use strict';
/** `node --test bench/lib/stats.check.js`: the bench's statistics checked on hand-computed cases. */
const test = require('node:test');
const assert = require('node:assert/strict');
const { percentile, jain, maxInSlidingWindow, maxInFixedWindow, waterFill } = require('./stats');

test('sliding window counts half-open windows [x, x + W)', () => {
  assert.equal(maxInSlidingWindow([0, 100, 999, 1000, 1500, 1999.5], 1000), 3);
  assert.equal(maxInSlidingWindow([0, 999.9, 1000], 1000), 2);
  // The baseline's edge burst: 2 × 500 around a fixed-window boundary fit one sliding second.
  const edge = [...Array.from({ length: 500 }, (_, i) => 950 + i * 0.1), ...Array.from({ length: 500 }, (_, i) => 1000 + i * 0.1)];
  assert.equal(maxInSlidingWindow(edge, 1000), 1000);
  assert.equal(maxInFixedWindow(edge, 1000), 500);
});

test('water-filling gives capped groups their demand and splits the rest by weight', () => {
  assert.deepEqual(waterFill(951, [3000, 300, 300, 20], [1, 1, 1, 1]), [331, 300, 300, 20]);
  assert.deepEqual(waterFill(100, [100, 100], [3, 1]), [75, 25]);
  assert.deepEqual(waterFill(100, [10, 0, Infinity], [1, 1, 1]), [10, 0, 90]);
});

test('Jain is 1 for equal shares and 1/n for one taker', () => {
  assert.equal(jain([2, 2, 2]), 1);
  assert.equal(jain([1, 0, 0, 0]), 0.25);
});

test('percentile is nearest-rank', () => {
  assert.equal(percentile([4, 1, 3, 2], 50), 2);
  assert.equal(
    percentile(
      Array.from({ length: 100 }, (_, i) => i + 1),
      99,
    ),
    99,
  );
});
