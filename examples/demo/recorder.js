'use strict';
/**
 * What one system did, per tenant, in buckets of `bucketMs` from the start of the run: answers the load
 * driver saw (admitted / deferred / rejected / errors), work the backend did (live requests and jobs), jobs
 * completed. Everything else (rates, backlog, summary, charts) is computed from these counts.
 */

const OUTCOMES = ['sent', 'admitted', 'deferred', 'rejected', 'errors', 'completed', 'work'];

class Recorder {
  constructor({ tenants, startMs, bucketMs = 100 }) {
    this.startMs = startMs;
    this.bucketMs = bucketMs;
    this.tenantNames = tenants.map((t) => t.name);
    this.series = {}; // outcome → tenant → counts per bucket
    this.totals = {}; // outcome → tenant → count
    for (const outcome of OUTCOMES) {
      this.series[outcome] = {};
      this.totals[outcome] = {};
      for (const name of this.tenantNames) {
        this.series[outcome][name] = [];
        this.totals[outcome][name] = 0;
      }
    }
    this.errorStatuses = {}; // HTTP status (0 = no answer) → count, for the summary
    this.workTimes = []; // ms from start of every unit of backend work: the sliding-window check uses them
    this.lastCompletedMs = {}; // tenant → ms from start of its last deferred job's completion (its drain)
  }

  count(outcome, tenant, atMs) {
    const perTenant = this.series[outcome][tenant];
    if (!perTenant) return; // a tenant the load did not send (e.g. a job from an older Redis run)
    const bucket = Math.max(0, Math.floor((atMs - this.startMs) / this.bucketMs));
    while (perTenant.length <= bucket) perTenant.push(0);
    perTenant[bucket] += 1;
    this.totals[outcome][tenant] += 1;
  }

  /** An HTTP answer to one request of the load. */
  answer(tenant, status, sentAtMs) {
    const outcome = status === 200 || status === 201 ? 'admitted' : status === 202 ? 'deferred' : status === 429 ? 'rejected' : 'errors';
    this.count(outcome, tenant, sentAtMs);
    if (outcome === 'errors') this.errorStatuses[status] = (this.errorStatuses[status] ?? 0) + 1;
  }

  /** The backend started one unit of work: a live request, or a deferred job. */
  work({ tenant, at }) {
    this.count('work', tenant, at);
    this.workTimes.push(at - this.startMs);
  }

  /** A deferred job finished. */
  jobDone({ tenant, at }) {
    this.count('completed', tenant, at);
    if (tenant in this.totals.completed) this.lastCompletedMs[tenant] = Math.max(this.lastCompletedMs[tenant] ?? 0, at - this.startMs);
  }

  total(outcome, tenant) {
    if (tenant) return this.totals[outcome][tenant] ?? 0;
    return this.tenantNames.reduce((sum, name) => sum + this.totals[outcome][name], 0);
  }

  /** Count of `outcome` in [fromMs, toMs) from the start, for one tenant or all. */
  between(outcome, fromMs, toMs, tenant) {
    const names = tenant ? [tenant] : this.tenantNames;
    const first = Math.floor(fromMs / this.bucketMs);
    const last = Math.ceil(toMs / this.bucketMs);
    let sum = 0;
    for (const name of names) {
      const counts = this.series[outcome][name];
      for (let b = Math.max(0, first); b < Math.min(last, counts.length); b++) sum += counts[b];
    }
    return sum;
  }

  /** Deferred and not yet completed, for one tenant or all. */
  backlog(tenant) {
    return this.total('deferred', tenant) - this.total('completed', tenant);
  }

  /** `{ name, count }` of every tenant with a non-zero `outcome` total (or backlog, for 'backlog'), largest first. */
  byTenant(outcome) {
    return this.tenantNames
      .map((name) => ({ name, count: outcome === 'backlog' ? this.backlog(name) : this.total(outcome, name) }))
      .filter((t) => t.count > 0)
      .sort((a, b) => b.count - a.count);
  }
}

/** Most events in any half-open window [x, x + windowMs) (two pointers over sorted times). */
function maxInAnyWindow(times, windowMs) {
  const sorted = [...times].sort((a, b) => a - b);
  let best = 0;
  for (let lo = 0, hi = 0; hi < sorted.length; hi++) {
    while (sorted[hi] - sorted[lo] >= windowMs) lo++;
    best = Math.max(best, hi - lo + 1);
  }
  return best;
}

module.exports = { Recorder, maxInAnyWindow, OUTCOMES };
