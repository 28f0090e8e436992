'use strict';
/** The arrivals of one scenario group in one client process: ./client.js plays them, ./sim.js simulates them. */

/**
 * Arrival times (ms, relative to t0) of one group in one of `processes` client processes, drawn from `random`
 * (Math.random in the bench's clients, a seeded generator in the simulation).
 */
function arrivals(group, processes, durationMs, random = Math.random) {
  const exp = (rate) => -Math.log(1 - random()) / rate;
  const from = group.fromMs ?? 0;
  const to = Math.min(group.toMs ?? durationMs, durationMs);
  const times = [];
  if (group.edgeMs) {
    // All of the group's traffic inside [k·1000 − edge, k·1000 + edge): the baseline's weak spot.
    const dense = (group.rate * 1000) / (2 * group.edgeMs) / processes / 1000;
    for (let second = Math.ceil(from / 1000); second * 1000 - group.edgeMs < to; second++) {
      for (let t = second * 1000 - group.edgeMs + exp(dense); t < second * 1000 + group.edgeMs; t += exp(dense)) {
        if (t >= from && t < to) times.push(t);
      }
    }
    return times;
  }
  // bunch = k: Poisson instants at rate / k, each with k requests at once (a page load, a batch, a retry wave)
  const k = group.bunch ?? 1;
  const perMs = group.rate / k / processes / 1000;
  for (let t = from + exp(perMs); t < to; t += exp(perMs)) for (let i = 0; i < k; i++) times.push(t);
  return times;
}

module.exports = { arrivals };
