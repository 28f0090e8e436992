/**
 * Group concurrency in memory (job_flight_done and the held set of lua/includes/job.lua): how many capped jobs
 * of each group are in ready or running, and the jobs held back until one of them leaves.
 */
import { heldPrefix } from '../queue/job-record';
import { SortedSet } from '../core/sorted-set';

export class GroupFlight {
  /** group → its capped jobs in ready or active. */
  readonly inflight = new Map<string, number>();
  /** Capped jobs waiting for a slot of their group (heldMember → score 0). */
  readonly held = new SortedSet();
  /** The readyMax of the last dispatch (the counters field 'rmax'): where a released job may go. */
  readyMax = 1000;

  clear(): void {
    this.inflight.clear();
    this.held.clear();
    this.readyMax = 1000;
  }

  /**
   * A capped job of `group` left flight: count it out, and send the group's oldest held job to ready in its
   * place (true: the caller wakes workers), or to the head of pending when ready is at readyMax.
   */
  leave(group: string, cap: number | undefined, ready: string[], pending: SortedSet): boolean {
    if (!cap || cap <= 0) return false;
    const n = (this.inflight.get(group) ?? 0) - 1;
    if (n <= 0) this.inflight.delete(group);
    else this.inflight.set(group, n);
    if (this.held.size === 0) return false;
    const prefix = heldPrefix(group);
    const first = this.held.firstWithPrefix(0, prefix);
    if (first === undefined) return false;
    this.held.remove(first);
    const member = first.slice(prefix.length);
    if (ready.length >= this.readyMax) {
      pending.add(member, pending.first()?.score ?? 0);
      return false;
    }
    ready.push(member);
    this.inflight.set(group, (this.inflight.get(group) ?? 0) + 1);
    return true;
  }
}
