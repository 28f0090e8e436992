/**
 * Job status and dead letters on in-memory structures: lua/get-job.lua and lua/dead-letters.lua step for
 * step, over the MemoryQueue's sets (like ./memory-dispatch.ts for the dispatcher move).
 */
import { heldMember, jobMember, toJobInfo, type JobRecord } from './job-record';
import type { SortedSet } from './sorted-set';
import type { JobInfo } from './types';
import { deadPage } from './validate';

export interface JobParts {
  readonly delayed: SortedSet;
  readonly pending: SortedSet;
  readonly held: SortedSet;
  readonly dead: SortedSet;
  readonly completed: SortedSet;
  readonly jobs: Map<string, JobRecord>;
  readonly backlog: Map<string, number>;
}

/** A job's state and times; null when unknown or its completed record has expired. */
export function jobInfoInMemory(q: JobParts, id: string, now: number): JobInfo | null {
  const r = q.jobs.get(id);
  if (!r) return null;
  if (r.state === 'waiting') {
    const m = jobMember(r);
    // runAt is the record's (a deferred job is due at once but promised by its runAt estimate)
    if (q.delayed.score(m) !== undefined) return toJobInfo(r, 'delayed', r.runAt);
    const pending = q.pending.score(m) !== undefined || q.held.score(heldMember(r.group, m)) !== undefined;
    return toJobInfo(r, pending ? 'pending' : 'ready', r.runAt);
  }
  if (r.state === 'completed' && (q.completed.score(id) ?? 0) <= now) return null;
  return toJobInfo(r, r.state, r.runAt);
}

/** Dead letters, newest death first. */
export function listDeadInMemory(q: JobParts, offset: number, count: number): JobInfo[] {
  const page = deadPage(offset, count);
  return q.dead.rangeReverse(page.offset, page.count).flatMap(({ member: id }) => {
    const r = q.jobs.get(id);
    return r ? [toJobInfo(r, 'dead', r.runAt)] : [];
  });
}

/** A dead job back to the queue, due now, with attempts, stalls and snoozes reset; false when it is not dead. */
export function retryDeadInMemory(q: JobParts, id: string, now: number): boolean {
  if (!q.dead.remove(id)) return false;
  const r = q.jobs.get(id);
  if (!r) return false;
  r.state = 'waiting';
  r.attempts = 0;
  r.stalls = 0;
  r.snoozes = 0;
  delete r.error;
  delete r.finishedAt;
  r.runAt = now;
  q.delayed.add(jobMember(r), now);
  q.backlog.set(r.group, (q.backlog.get(r.group) ?? 0) + 1);
  return true;
}
