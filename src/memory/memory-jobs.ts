/**
 * Job records on in-memory structures, step for step with the Lua: the write (job_defer in includes/job.lua),
 * job status (get-job.lua) and dead letters (list-dead.lua, dead-letters.lua), over the MemoryQueue's sets.
 */
import { heldMember, jobMember, toJobInfo, type JobRecord } from '../queue/job-record';
import { DEFAULT_CLASS } from '../core/fair-share-class';
import type { EnqueueInput, EnqueueResult } from '../types';
import type { WaitingSince } from './memory-since';
import type { SortedSet } from '../core/sorted-set';
import type { JobInfo } from '../types';
import { deadPage } from '../queue/validate';

export interface JobParts {
  readonly delayed: SortedSet;
  readonly pending: SortedSet;
  readonly held: SortedSet;
  readonly dead: SortedSet;
  readonly completed: SortedSet;
  readonly jobs: Map<string, JobRecord>;
  readonly backlog: Map<string, number>;
  readonly since: WaitingSince;
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
  q.since.add(r.id, r.group, now);
  q.backlog.set(r.group, (q.backlog.get(r.group) ?? 0) + 1);
  return true;
}

export interface WriteParts {
  readonly delayed: SortedSet;
  readonly jobs: Map<string, JobRecord>;
  readonly idempotency: Map<string, string>;
  readonly backlog: Map<string, number>;
  readonly since: WaitingSince;
}

/**
 * job_defer in includes/job.lua: a new waiting job, or the live one its idempotency key names. runAt is
 * recorded and checked against the horizon; dueAt enters delayed. `nextSeq` gives the id's sequence part.
 */
export function writeJobInMemory(
  q: WriteParts,
  now: number,
  input: Omit<EnqueueInput, 'delayMs'>,
  runAt: number,
  dueAt: number,
  nextSeq: () => number,
): EnqueueResult {
  const idem = input.idempotencyKey ?? '';
  if (idem !== '') {
    const existing = q.idempotency.get(idem);
    if (existing !== undefined) {
      const r = q.jobs.get(existing);
      if (r) return { status: 'duplicate', id: r.id, runAt: r.runAt };
      q.idempotency.delete(idem);
    }
  }
  if (runAt - now > input.maxDeferMs) return { status: 'defer-horizon' };
  if ((q.backlog.get(input.group) ?? 0) >= input.maxBacklog) return { status: 'backlog-full' };
  let id: string;
  do id = `${now}-${String(nextSeq()).padStart(6, '0')}`;
  while (q.jobs.has(id));
  const r: JobRecord = {
    id,
    type: input.type,
    group: input.group,
    weight: input.weight,
    cost: input.cost,
    payload: input.payload,
    state: 'waiting',
    attempts: 0,
    stalls: 0,
    snoozes: 0,
    createdAt: now,
    runAt,
    ...(idem !== '' ? { idem } : {}),
    ...(input.groupConcurrency ? { gc: input.groupConcurrency } : {}),
    ...(input.maxAttempts ? { ma: input.maxAttempts } : {}),
    ...(input.plan ? { pl: input.plan } : {}),
    ...(input.settle ? { st: 1 as const } : {}),
    ...(input.class !== undefined && input.class !== '' && input.class !== DEFAULT_CLASS ? { cl: input.class } : {}),
  };
  if (idem !== '') q.idempotency.set(idem, id);
  q.jobs.set(id, r);
  q.delayed.add(jobMember(r), dueAt);
  q.since.add(id, input.group, Math.max(now, dueAt));
  q.backlog.set(input.group, (q.backlog.get(input.group) ?? 0) + 1);
  return { status: 'written', id, runAt };
}
