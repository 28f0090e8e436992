'use strict';
/**
 * The side-by-side facts of a run. Each fact is judged by one rule applied to both systems alike, so the same
 * value always gets the same colour, whichever system it belongs to.
 */

const pct = (x) => `${Math.round(x * 100)}%`;
const fmtDrain = (ms) => (ms === null ? 'not drained' : `${(ms / 1000).toFixed(1)} s`);
/** A tenant served less than this fraction of its fair share looks starved (the same rule in every table). */
const STARVED_BELOW = 0.8;

/** `verdict` of a tenant's served / fair ratio: 'bad' when starved, '' otherwise. */
const fairVerdict = (ratio) => (ratio !== null && ratio < STARVED_BELOW ? 'bad' : '');

/** "16 (importer 16)": deferred jobs with the tenants that sent them, most first. */
function deferredByTenant(system) {
  const senders = system.tenants.filter((t) => t.deferred > 0).sort((a, b) => b.deferred - a.deferred);
  const total = senders.reduce((n, t) => n + t.deferred, 0);
  return senders.length === 0 ? '0' : `${total} (${senders.map((t) => `${t.name} ${t.deferred}`).join(', ')})`;
}

/**
 * Most admissions a strict token bucket allows in any `spanMs`: a full bucket (burst) plus the refills, one every
 * windowMs / (limit − burst + 1), that fall inside the span after its start (so a whole window allows `limit`).
 */
function strictBound(summary, spanMs) {
  return summary.burst + Math.ceil((spanMs * summary.capacityPerS) / 1000) - 1;
}

/** Rows `{ label, note, cells: [{ text, verdict }] }`, cells in the order bulk-limiter, fixed window. */
function sideBySide(summary) {
  const systems = [summary.systems.ours, summary.systems.baseline];
  const { limit } = summary;
  const win = `${summary.windowMs / 1000} s`;
  const capacity = Math.round(summary.capacityPerS * 10) / 10;
  const fact = (label, pick, format, verdict, note) => ({
    label,
    note,
    cells: systems.map((s) => ({ text: format(pick(s)), verdict: verdict(pick(s)) })),
  });
  const tenthBound = strictBound(summary, 100);
  return [
    fact(
      `most backend work in any ${win}`,
      (s) => s.maxInWindow,
      String,
      (v) => (v <= limit ? 'good' : 'bad'),
      `live requests + job starts; the limit is ${limit} per ${win}`,
    ),
    fact(
      'most backend work in any 100 ms',
      (s) => s.maxIn100Ms,
      String,
      (v) => (v <= tenthBound ? 'good' : 'bad'),
      `a strict limit of ${limit} per ${win} lets at most ${tenthBound} through in 100 ms (burst ${summary.burst} + ${capacity}/s); a fixed window lets its whole budget through as it opens`,
    ),
    fact(
      'capacity used while loaded',
      (s) => s.utilisation,
      pct,
      (v) => (v >= (0.9 * summary.capacityPerS) / limit ? 'good' : 'bad'),
      `of the limit; the strict limit can admit ${capacity}/s (${pct(summary.capacityPerS / limit)}); floor(limit / tenants ever seen) leaves capacity idle`,
    ),
    fact(
      'worst tenant vs its fair share',
      (s) => s.worstFairRatio,
      pct,
      (v) => fairVerdict(v) || 'good',
      `fair share: weighted max-min split of ${capacity}/s over each tenant’s demand; under ${pct(STARVED_BELOW)} is starved`,
    ),
    fact(
      'jobs deferred, by tenant',
      (s) => s,
      deferredByTenant,
      () => '',
      'denied imports become jobs of the tenant that sent them',
    ),
    fact(
      'backlog drained after the load',
      (s) => s.drainMs,
      fmtDrain,
      (v) => (v === null ? 'bad' : 'good'),
      'bulk-limiter drains through the same budget as live traffic; the fixed window releases jobs unchecked',
    ),
  ];
}

module.exports = { sideBySide, deferredByTenant, fairVerdict, strictBound, pct, fmtDrain, STARVED_BELOW };
