/**
 * The oldest waiting job in memory: the since and gsince sets of lua/includes/job.lua. Every job not started
 * is kept by the ms it waits to start from (its due time), once in time order and once per group, so the
 * oldest due job, of all or of one group, is the first of a sorted set: no scan of the jobs.
 */
import { heldPrefix } from './job-record';
import { SortedSet } from './sorted-set';

/** job_since_member: the group's lex prefix, then the since time in 15 digits (lex order = time order). */
function groupMember(group: string, since: number, id: string): string {
  return `${heldPrefix(group)}${String(since).padStart(15, '0')} ${id}`;
}

/** ms waited by a job waiting since `since`, 0 when it is not due yet. */
function waited(since: number | undefined, now: number): number {
  return since !== undefined && since < now ? now - since : 0;
}

export class WaitingSince {
  private readonly all = new SortedSet();
  private readonly byGroup = new SortedSet();
  private readonly groups = new Map<string, string>();

  /** job_since_add: the job waits to start from `since` on. */
  add(id: string, group: string, since: number): void {
    this.all.add(id, since);
    this.byGroup.add(groupMember(group, since, id), 0);
    this.groups.set(id, group);
  }

  /** job_since_done: the job left the waiting sets (started, dropped or cancelled). */
  done(id: string): void {
    const since = this.all.score(id);
    if (since === undefined) return;
    this.all.remove(id);
    this.byGroup.remove(groupMember(this.groups.get(id)!, since, id));
    this.groups.delete(id);
  }

  /** counts.lua's oldestWaitingMs. */
  oldestMs(now: number): number {
    return waited(this.all.first()?.score, now);
  }

  /** group-counts.lua's oldestWaitingMs. */
  oldestOfGroupMs(group: string, now: number): number {
    const prefix = heldPrefix(group);
    const first = this.byGroup.firstWithPrefix(0, prefix);
    return waited(first === undefined ? undefined : Number(first.slice(prefix.length, prefix.length + 15)), now);
  }
}
