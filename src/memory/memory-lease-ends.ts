/**
 * How a lease ends on in-memory structures, step for step with the Lua: completed (job_complete in
 * includes/lease.lua), failed or snoozed (fail.lua), or reclaimed after it expired (reclaim.lua).
 */
import { jobMember, type JobRecord } from '../queue/job-record';
import type { WaitingSince } from './memory-since';
import type { SortedSet } from '../core/sorted-set';
import type { FailOutcome, FailResult, FailState } from '../types';

/** What ending a lease needs of the MemoryQueue. */
export interface LeaseEndParts {
  readonly active: SortedSet;
  readonly delayed: SortedSet;
  readonly pending: SortedSet;
  readonly completed: SortedSet;
  readonly jobs: Map<string, JobRecord>;
  readonly since: WaitingSince;
  readonly dead: SortedSet;
  /** Dead records kept; the oldest beyond it are deleted. */
  readonly maxDead: number;
  /** The record of a live lease (id and fencing token), or undefined when it is stale. */
  activeRecord(id: string, token: string): JobRecord | undefined;
  forget(r: JobRecord): void;
  backlogDone(group: string): void;
  /** job_flight_done: a capped job left flight. */
  flightDone(group: string, cap: number | undefined): void;
  trimCompleted(now: number): void;
}

/** job_complete in includes/lease.lua. */
export function completeInMemory(q: LeaseEndParts, now: number, id: string, token: string, resultJson: string | undefined, keepMs: number): boolean {
  const r = q.activeRecord(id, token);
  if (!r) return false;
  q.active.remove(id);
  q.backlogDone(r.group);
  q.flightDone(r.group, r.gc);
  if (keepMs <= 0) {
    q.forget(r);
  } else {
    r.state = 'completed';
    delete r.token;
    delete r.error;
    r.finishedAt = now;
    if (resultJson !== undefined) r.result = resultJson;
    q.completed.add(id, now + Math.floor(keepMs));
  }
  // Like job_complete: only every 8th claim's completion trims (an expired record's idempotency key
  // still names it until then), so both stores answer a retried key the same way.
  if (Number(token.slice(0, token.indexOf(':'))) % 8 === 0) q.trimCompleted(now);
  return true;
}

/** fail.lua: a retry (or a snooze) waits in delayed until its time; past the cap the job is dead. */
export function failInMemory(q: LeaseEndParts, now: number, id: string, token: string, outcome: FailOutcome): FailResult {
  const r = q.activeRecord(id, token);
  if (!r) return { state: 'stale' };
  q.active.remove(id);
  q.flightDone(r.group, r.gc);
  let result: FailState;
  if (outcome.kind === 'snooze') {
    r.snoozes += 1;
    if (r.snoozes > outcome.maxSnoozes) {
      kill(q, r, now, `snoozed more than ${outcome.maxSnoozes} times`);
      return { state: 'dead' };
    }
    result = 'snoozed';
  } else {
    r.attempts += 1;
    r.error = outcome.error;
    // the job's own maxAttempts over the worker's; a permanent error passes 0: dead at once
    const cap = r.ma !== undefined && outcome.maxAttempts > 0 ? r.ma : outcome.maxAttempts;
    if (r.attempts >= cap) {
      kill(q, r, now, outcome.error);
      return { state: 'dead' };
    }
    result = 'retrying';
  }
  r.state = 'waiting';
  delete r.token;
  r.runAt = now + Math.max(0, Math.ceil(outcome.delayMs));
  q.delayed.add(jobMember(r), r.runAt);
  q.since.add(r.id, r.group, r.runAt);
  return { state: result };
}

/** reclaim.lua: leases past their time come back to the head of pending, or die past maxStalls. */
export function reclaimInMemory(q: LeaseEndParts, now: number, maxStalls: number, max: number): { requeued: number; dead: number } {
  let requeued = 0;
  let dead = 0;
  for (const { member: id } of q.active.rangeToScore(now, max)) {
    q.active.remove(id);
    const r = q.jobs.get(id);
    if (!r || r.state !== 'active') continue;
    q.flightDone(r.group, r.gc);
    r.stalls += 1;
    if (r.stalls > maxStalls) {
      kill(q, r, now, `stalled ${r.stalls} times (lease expired)`);
      dead += 1;
    } else {
      // Admitted once already: it goes first again (the head tag), before newer work.
      r.state = 'waiting';
      delete r.token;
      q.pending.add(jobMember(r), q.pending.first()?.score ?? 0);
      q.since.add(r.id, r.group, now);
      requeued += 1;
    }
  }
  q.trimCompleted(now);
  return { requeued, dead };
}

/** job_kill in includes/job.lua: the job goes to dead; at most maxDead dead records are kept. */
function kill(q: LeaseEndParts, r: JobRecord, now: number, reason: string): void {
  r.state = 'dead';
  r.error = reason;
  r.finishedAt = now;
  delete r.token;
  q.dead.add(r.id, now);
  q.backlogDone(r.group);
  const over = Math.min(100, q.dead.size - q.maxDead);
  if (over > 0) {
    for (const { member: id } of q.dead.range(0, over)) {
      const old = q.jobs.get(id);
      if (old) q.forget(old);
      q.dead.remove(id);
    }
  }
}
