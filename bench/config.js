'use strict';
/** Sizes of every section, full and smoke (the smoke run must finish all sections in < 60 s). */

const FULL = {
  admission: { inFlight: 256, durationMs: 3000, rounds: 3, groupCounts: [10, 10_000, 100_000] },
  http: { connections: 100, durationS: 6, rounds: 3, tenants: 50 },
  queue: {
    jobs: 50_000,
    concurrency: 50,
    enqueueInFlight: 256,
    rounds: 3,
    pause: { limit: 20, readyMax: 100, jobs: 400, pauseMs: 8000, drainSpanMs: 4000 },
  },
  fairness: { processes: 2, durationMs: 16_000, warmupMs: 1000, limit: 1000, windowMs: 1000, burst: 50, reserve: 10 },
  sybil: { warmupMs: 3000, floodMs: 20_000, floodRate: 5000, floodIds: 100_000 },
  rules: { inFlight: 256, durationMs: 2000, rounds: 3, groupCounts: [10, 10_000], maxBatches: [64, 1], claimJobs: 20_000, claimGroups: 100 },
  adaptive: { phase1Ms: 15_000, phase2Ms: 15_000, phase1Rate: 300, phase2Rate: 600 },
};

const SMOKE = {
  admission: { inFlight: 64, durationMs: 300, rounds: 1, groupCounts: [10, 1000] },
  http: { connections: 20, durationS: 1, rounds: 1, tenants: 50 },
  queue: {
    jobs: 500,
    concurrency: 50,
    enqueueInFlight: 64,
    // two rounds: the smoke run (CI) goes through the merge of a subject's rounds as well
    rounds: 2,
    pause: { limit: 20, readyMax: 20, jobs: 30, pauseMs: 300, drainSpanMs: 1000 },
  },
  fairness: { processes: 2, durationMs: 2000, warmupMs: 500, limit: 1000, windowMs: 1000, burst: 50, reserve: 10, scenarios: ['s1', 'retry'] },
  sybil: { warmupMs: 500, floodMs: 1000, floodRate: 2000, floodIds: 2000 },
  rules: { inFlight: 64, durationMs: 300, rounds: 1, groupCounts: [10, 1000], maxBatches: [64, 1], claimJobs: 500, claimGroups: 20 },
  adaptive: {
    phase1Ms: 2000,
    phase2Ms: 2000,
    phase1Rate: 300,
    phase2Rate: 600,
    variants: [{ id: 'smoke', label: 'smoke', adaptive: { intervalMs: 250 } }],
    chosen: 'smoke',
  },
};

function configFor(section, smoke) {
  return { smoke, ...(smoke ? SMOKE : FULL)[section] };
}

module.exports = { configFor };
