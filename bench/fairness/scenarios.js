'use strict';
/**
 * The scenarios of docs/algorithm.md §5, as functions of the run length. Rates are totals per
 * second across all client processes. `steady` = the interval the rates are measured over (default:
 * after warm-up); `stepAtMs` marks a demand step (convergence is measured after it).
 */
const range = (n, f) => Array.from({ length: n }, (_, i) => f(i));

const SCENARIOS = {
  s1: {
    title: 's1 mixed: 1 heavy 3000/s, 2 medium 300/s, 10 light 20/s',
    groups: () => [
      { name: 'heavy', rate: 3000, weight: 1 },
      ...range(2, (i) => ({ name: `medium-${i}`, rate: 300, weight: 1 })),
      ...range(10, (i) => ({ name: `light-${i}`, rate: 20, weight: 1 })),
    ],
  },
  s2: {
    title: 's2 weights 3:1, both saturated (2000/s each)',
    groups: () => [
      { name: 'gold-w3', rate: 2000, weight: 3 },
      { name: 'basic-w1', rate: 2000, weight: 1 },
    ],
  },
  s3: {
    title: 's3 one heavy tenant (2000/s) next to an almost idle one (1/s)',
    groups: () => [
      { name: 'heavy', rate: 2000, weight: 1 },
      { name: 'idle', rate: 1, weight: 1 },
    ],
  },
  s4: { title: 's4 under-load: 10 tenants at 60/s (below capacity)', groups: () => range(10, (i) => ({ name: `t-${i}`, rate: 60, weight: 1 })) },
  s5: {
    title: 's5 churn: 1 heavy 2000/s; 10 short-lived tenants (100/s for 1/10 of the run each), measured after they left',
    groups: (d) => [
      { name: 'heavy', rate: 2000, weight: 1 },
      ...range(10, (i) => ({ name: `churn-${i}`, rate: 100, weight: 1, fromMs: (i * d * 0.6) / 10, toMs: ((i + 1) * d * 0.6) / 10 })),
    ],
    steady: (d) => [d * 0.7, d],
  },
  s6: {
    title: 's6 edge bursts: 2 tenants send everything in the last and first 50 ms of each second (1000/s each on average)',
    groups: () => [
      { name: 'edge-a', rate: 1000, weight: 1, edgeMs: 50 },
      { name: 'edge-b', rate: 1000, weight: 1, edgeMs: 50 },
    ],
  },
  s7: {
    title: 's7 step: 2 tenants at 600/s, a heavy 3000/s one joins half-way',
    groups: (d) => [
      { name: 'a', rate: 600, weight: 1 },
      { name: 'b', rate: 600, weight: 1 },
      { name: 'joiner', rate: 3000, weight: 1, fromMs: d / 2 },
    ],
    steady: (d) => [d / 2 + Math.min(1000, d / 4), d],
    stepAtMs: (d) => d / 2,
  },
  s8: {
    title: 's8 100 Zipf tenants, 3000/s in total, every 10th at weight 3',
    groups: () => {
      const h = range(100, (i) => 1 / (i + 1)).reduce((a, b) => a + b, 0);
      return range(100, (i) => ({ name: `z-${i}`, rate: 3000 / (i + 1) / h, weight: i % 10 === 9 ? 3 : 1 }));
    },
  },
  s9: {
    title: 's9 bunched: 10 tenants at 30/s in bunches of 5 requests at once, 10 at 12/s in bunches of 3, next to 2 borrowers at 1500/s',
    groups: () => [
      ...range(2, (i) => ({ name: `borrower-${i}`, rate: 1500, weight: 1 })),
      ...range(10, (i) => ({ name: `bunch5-${i}`, rate: 30, weight: 1, bunch: 5 })),
      ...range(10, (i) => ({ name: `bunch3-${i}`, rate: 12, weight: i % 2 ? 2 : 1, bunch: 3 })),
    ],
  },
  s10: {
    title: 's10 limit 100/s (default burst 8, reserve 2): a flooder at 200/s next to a paying tenant (weight 3) at 60/s and 6 light tenants at 5/s',
    spec: { limit: 100, windowMs: 1000, burst: 8, reserve: 2 },
    groups: () => [
      { name: 'flooder', rate: 200, weight: 1 },
      { name: 'paying-w3', rate: 60, weight: 3 },
      ...range(6, (i) => ({ name: `light-${i}`, rate: 5, weight: 1 })),
    ],
  },
  c1: {
    title:
      'c1 classes: limit 1000/s, a critical class (share 0.2) of 6 tenants at 150/s of Poisson demand in all, next to a 5000/s flood of 50 groups (weight 10 each) in the default class',
    spec: { limit: 1000, windowMs: 1000, burst: 50, reserve: 10, classes: { critical: { share: 0.2 } } },
    groups: () => [
      ...range(6, (i) => ({ name: `critical-${i}`, rate: 25, weight: 1, class: 'critical' })),
      ...range(50, (i) => ({ name: `flood-${i}`, rate: 100, weight: 10 })),
    ],
  },
  c2: {
    title: 'c2 classes, the critical class idle: the same limiter and the same 5000/s flood alone',
    spec: { limit: 1000, windowMs: 1000, burst: 50, reserve: 10, classes: { critical: { share: 0.2 } } },
    groups: () => range(50, (i) => ({ name: `flood-${i}`, rate: 100, weight: 10 })),
  },
  retry: {
    title: 'retry: 20 closed-loop callers honouring retryAfterMs in one group, next to a 3000/s flood',
    groups: () => [
      { name: 'flood', rate: 3000, weight: 1 },
      { name: 'polite', rate: 0, weight: 1 },
    ],
    closed: [{ group: 'polite', callers: 20 }],
  },
};

module.exports = { SCENARIOS };
