/**
 * The oldest waiting job in memory: the since and gsince sets of lua/includes/job.lua. Every job not started
 * is kept by the ms it waits to start from (its due time), once in time order and once per group, so the
 * oldest due job, of all or of one group, is the first of a sorted set: no scan of the jobs. One sorted set
 * per group stands for gsince's per-group lex ranges (same order: since, then id), so an insert moves only
 * that group's entries, and mostly none (since grows with the clock).
 */
import { SortedSet } from '../core/sorted-set';

/** ms waited by a job waiting since `since`, 0 when it is not due yet. */
function waited(since: number | undefined, now: number): number {
  return since !== undefined && since < now ? now - since : 0;
}

export class WaitingSince {
  private readonly all = new SortedSet();
  private readonly byGroup = new Map<string, SortedSet>();
  private readonly groups = new Map<string, string>();

  /** job_since_add: the job waits to start from `since` on. */
  add(id: string, group: string, since: number): void {
    this.all.add(id, since);
    let ofGroup = this.byGroup.get(group);
    if (!ofGroup) {
      ofGroup = new SortedSet();
      this.byGroup.set(group, ofGroup);
    }
    ofGroup.add(id, since);
    this.groups.set(id, group);
  }

  clear(): void {
    this.all.clear();
    this.byGroup.clear();
    this.groups.clear();
  }

  /** job_since_done: the job left the waiting sets (started, dropped or cancelled). */
  done(id: string): void {
    if (!this.all.remove(id)) return;
    const group = this.groups.get(id)!;
    this.groups.delete(id);
    const ofGroup = this.byGroup.get(group)!;
    ofGroup.remove(id);
    if (ofGroup.size === 0) this.byGroup.delete(group);
  }

  /** counts.lua's oldestWaitingMs. */
  oldestMs(now: number): number {
    return waited(this.all.first()?.score, now);
  }

  /** group-counts.lua's oldestWaitingMs. */
  oldestOfGroupMs(group: string, now: number): number {
    return waited(this.byGroup.get(group)?.first()?.score, now);
  }
}
