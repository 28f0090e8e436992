/**
 * The queue key block: every queue script receives these keys in this order (mirrored by
 * `job_keys()` in lua/includes/job.lua). All under the limiter's one hash tag.
 */
import type { LimiterKeys } from '../store/keys';

export function queueKeyBlock(keys: LimiterKeys): string[] {
  return [
    keys.counters,
    keys.groups,
    keys.seen,
    keys.delayed,
    keys.pending,
    keys.ready,
    keys.jobs,
    keys.active,
    keys.dead,
    keys.completed,
    keys.idempotency,
    keys.backlog,
    keys.wake,
    keys.inflight,
    keys.held,
    keys.since,
    keys.groupSince,
  ];
}
