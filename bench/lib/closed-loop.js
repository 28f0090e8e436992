'use strict';
/** Runs an async operation with a fixed number in flight for a duration; ops/s and latency percentiles. */
const { percentile } = require('./stats');

async function closedLoop(op, { inFlight, durationMs, keyOf }) {
  const latenciesMs = [];
  let errors = 0;
  let denied = 0;
  let firstError;
  const cpu0 = process.cpuUsage();
  const start = performance.now();
  const end = start + durationMs;
  async function lane(seed) {
    let i = seed;
    while (performance.now() < end) {
      const t0 = performance.now();
      try {
        if (!(await op(keyOf(i)))) denied++;
      } catch (error) {
        errors++;
        firstError = firstError || error;
        if (errors > 1000) throw error;
      }
      latenciesMs.push(performance.now() - t0);
      i += inFlight;
    }
  }
  await Promise.all(Array.from({ length: inFlight }, (_, k) => lane(k)));
  const elapsedMs = performance.now() - start;
  const cpu = process.cpuUsage(cpu0);
  if (latenciesMs.length > 0 && errors === latenciesMs.length) throw firstError;
  return {
    ops: latenciesMs.length,
    opsPerSec: latenciesMs.length / (elapsedMs / 1000),
    p50Ms: percentile(latenciesMs, 50),
    p99Ms: percentile(latenciesMs, 99),
    deniedShare: latenciesMs.length ? denied / latenciesMs.length : NaN,
    errors,
    /** This process's CPU (user + system) per call: the client-side cost. */
    clientUsPerCall: (cpu.user + cpu.system) / Math.max(1, latenciesMs.length),
  };
}

/** Calls op once for every key in [0, n), `inFlight` at a time (warm-up: every group active). */
async function touchAll(op, n, inFlight, keyName) {
  let next = 0;
  async function lane() {
    while (next < n) await op(keyName(next++));
  }
  await Promise.all(Array.from({ length: Math.min(inFlight, n) }, lane));
}

module.exports = { closedLoop, touchAll };
