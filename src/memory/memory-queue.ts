/**
 * MemoryQueue: the QueueStore of one limiter in this process, with the same semantics as the Lua scripts
 * (lua/*.lua, mirrored step by step: one operation per script here; the structures and shared steps in
 * ./memory-queue-state.ts, the dispatcher move in ./memory-dispatch.ts, how a lease ends in
 * ./memory-lease-ends.ts, job status and dead letters in ./memory-jobs.ts) and an injectable clock. Every structure is bounded the same way: completed records
 * trimmed after keepMs, dead records capped at maxDead.
 */
import { adaptedConfig, closeFairShare, openFairShare } from '../core/fair-share';
import { claimInMemory, dispatchInMemory, type ClaimParts } from './memory-dispatch';
import { completeInMemory, failInMemory, reclaimInMemory } from './memory-lease-ends';
import { jobInfoInMemory, listDeadInMemory, retryDeadInMemory, writeJobInMemory } from './memory-jobs';
import { MemoryQueueState } from './memory-queue-state';
import { heldPrefix, jobMember, type JobRecord } from '../queue/job-record';
import type { EnqueueInput, EnqueueResult } from '../types';
import type {
  ClaimedJob,
  ClaimResult,
  CompleteAndClaimResult,
  GroupJobCounts,
  DispatchOptions,
  DispatchResult,
  FailOutcome,
  FailResult,
  JobCounts,
  JobInfo,
  QueueStore,
} from '../types';
import { claimCount } from '../queue/validate';
import { reservationTail, stReserve, stSweep } from '../core/settle';

export type { MemoryQueueOptions } from './memory-queue-state';

export class MemoryQueue extends MemoryQueueState implements QueueStore {
  private jobSeq = 0;
  private tokenSeq = 0;
  /** The last staggered wake slot a refused claim was given (the counters field 'cw' in Redis). */
  private claimWakeAt = 0;
  private lease: { owner: string; until: number } | undefined;

  /** The queue as a fresh one (MemoryStore's destroy: on Redis the counters and lease keys go too). */
  override clear(): void {
    super.clear();
    this.jobSeq = 0;
    this.tokenSeq = 0;
    this.claimWakeAt = 0;
    this.lease = undefined;
  }

  // ── operations (one per lua/*.lua) ──

  /** enqueue.lua: writes a job straight into the fair queue (the write a deferred admission makes). */
  async enqueue(input: EnqueueInput): Promise<EnqueueResult> {
    const now = this.nowMs();
    return this.write(now, input, now + input.delayMs, now + input.delayMs);
  }

  /** The live job an idempotency key names, if any (admit-defer.lua's duplicate check). */
  findIdempotent(key: string): JobRecord | undefined {
    const id = this.idempotency.get(key);
    return id === undefined ? undefined : this.jobs.get(id);
  }

  /**
   * The deferral step of MemoryStore's admit (admit-defer.lua): the job of a denied request is due at once;
   * runAt estimates its latest start: one guaranteed interval (c·Tg) per job of the group waiting, this one
   * included. Call right after the admission decision, on the same state.
   */
  defer(now: number, input: Omit<EnqueueInput, 'delayMs'>): EnqueueResult {
    const state = this.fairShareState();
    const ws = state.meta?.ws ?? input.weight;
    const w = state.groups.has(input.group) ? input.weight : 1; // else a shared group (overflow, newcomers)
    const unitUs = (adaptedConfig(this.fairShareConfig, state).T * ws) / w;
    const waiting = this.backlog.get(input.group) ?? 0;
    return this.write(now, input, now + Math.ceil(((waiting + 1) * input.cost * unitUs) / 1000), now);
  }

  /** job_defer in includes/job.lua (./memory-jobs.ts). */
  private write(now: number, input: Omit<EnqueueInput, 'delayMs'>, runAt: number, dueAt: number): EnqueueResult {
    return writeJobInMemory(this, now, input, runAt, dueAt, () => {
      this.jobSeq = (this.jobSeq + 1) % 1_000_000;
      return this.jobSeq;
    });
  }

  /** cancel.lua: a job that has not started goes, with its record, idempotency key and backlog count. */
  async cancel(id: string): Promise<boolean> {
    const r = this.jobs.get(id);
    if (!r || r.state !== 'waiting') return false;
    const m = jobMember(r);
    const removed = this.delayed.remove(m) || this.pending.remove(m) || this.held.remove(heldPrefix(r.group) + m);
    if (!removed) {
      const at = this.ready.indexOf(m);
      if (at < 0) return false;
      this.ready.splice(at, 1);
      this.flightDone(r.group, r.gc);
    }
    this.since.done(r.id);
    this.forget(r);
    this.backlogDone(r.group);
    return true;
  }

  /** group-counts.lua. */
  async groupCounts(group: string): Promise<GroupJobCounts> {
    let active = 0;
    for (const { member: id } of this.active.range(0, this.active.size)) if (this.jobs.get(id)?.group === group) active += 1;
    return {
      waiting: Math.max(0, (this.backlog.get(group) ?? 0) - active),
      active,
      oldestWaitingMs: this.since.oldestOfGroupMs(group, this.nowMs()),
    };
  }

  /** dispatch.lua: fair tags in the limiter's admission state (shared with MemoryStore's admit); no budget spent. */
  async dispatch(options: DispatchOptions): Promise<DispatchResult> {
    const fs = openFairShare(this.fairShareState(), this.fairShareConfig, Math.floor(this.clock() * 1000));
    this.flight.readyMax = options.readyMax;
    const result = dispatchInMemory(this, fs, options);
    if (result.moved > 0) this.wake();
    return result;
  }

  async acquireDispatcherLease(owner: string, ttlMs: number): Promise<boolean> {
    const now = this.nowMs();
    // dispatcher-lease.lua: SET PX, whole ms; a Redis key lives through its last ms (expired when now > until)
    if (this.lease && this.lease.until >= now && this.lease.owner !== owner) return false;
    this.lease = { owner, until: now + Math.ceil(ttlMs) };
    return true;
  }

  async claim(leaseMs: number): Promise<ClaimedJob | null> {
    return (await this.claimMany(leaseMs, 1)).claimed[0] ?? null;
  }

  async claimMany(leaseMs: number, max: number): Promise<ClaimResult> {
    return this.claimNow(Math.floor(this.clock() * 1000), leaseMs, claimCount(max));
  }

  /** claim.lua: through the limiter's admission state, so a job spends the budget when it starts. */
  private claimNow(nowUs: number, leaseMs: number, max: number, stagger = true): ClaimResult {
    if (this.ready.length === 0) return { claimed: [], wakeMs: -1 };
    const fs = openFairShare(this.fairShareState(), this.fairShareConfig, nowUs);
    const { claimed, wakeMs, wakeAt } = claimInMemory(this.claimParts, fs, Math.ceil(leaseMs), max, this.claimWakeAt, stagger);
    closeFairShare(fs);
    this.claimWakeAt = wakeAt;
    return { claimed, wakeMs };
  }

  private readonly claimParts: ClaimParts = {
    ready: this.ready,
    waitingJob: (id) => {
      const r = this.jobs.get(id);
      if (r && r.state === 'waiting') return r;
      this.since.done(id); // a dropped member (claim.lua: job_since_done)
      return undefined;
    },
    lease: (r, now, leaseUntil) => {
      this.since.done(r.id);
      this.tokenSeq += 1;
      r.state = 'active';
      r.token = `${this.tokenSeq}:${now}`;
      this.active.add(r.id, leaseUntil);
      return { id: r.id, type: r.type, group: r.group, payload: r.payload, attempts: r.attempts, token: r.token, leaseUntil };
    },
    dropped: (group, cap) => this.flightDone(group, cap),
    planRules: this.planRules,
    override: (group, clockMs) => this.overrides?.(clockMs).records.get(group),
    holdBack: (r, member, due, group, cap) => {
      r.runAt = due;
      this.delayed.add(member, due);
      this.flightDone(group, cap);
    },
    reserve: (fs, group, cost, colour, plan, rules) =>
      stReserve(fs, this.reservationsAt(Math.floor(fs.clockUs / 1000)), group, cost, colour, this.holdMs, reservationTail(plan), rules),
    sweep: (fs) => stSweep(fs, this.reservationsAt(Math.floor(fs.clockUs / 1000))),
  };

  /** Nothing runs in the background in memory. */
  onError(): () => void {
    return () => undefined;
  }

  async complete(id: string, token: string, resultJson: string | undefined, keepMs: number): Promise<boolean> {
    return this.completeNow(this.nowMs(), id, token, resultJson, keepMs);
  }

  async completeAndClaim(
    id: string,
    token: string,
    resultJson: string | undefined,
    keepMs: number,
    leaseMs: number,
    max: number,
  ): Promise<CompleteAndClaimResult> {
    const now = this.nowMs();
    const completed = this.completeNow(now, id, token, resultJson, keepMs);
    return { completed, ...this.claimNow(now * 1000, leaseMs, claimCount(max), false) };
  }

  /** job_complete in includes/lease.lua (./memory-lease-ends.ts). */
  private completeNow(now: number, id: string, token: string, resultJson: string | undefined, keepMs: number): boolean {
    return completeInMemory(this.endParts, now, id, token, resultJson, keepMs);
  }

  async fail(id: string, token: string, outcome: FailOutcome): Promise<FailResult> {
    return failInMemory(this.endParts, this.nowMs(), id, token, outcome);
  }

  async extendLease(id: string, token: string, leaseMs: number): Promise<boolean> {
    const r = this.activeRecord(id, token);
    if (!r) return false;
    this.active.add(id, this.nowMs() + Math.ceil(leaseMs));
    return true;
  }

  async reclaimExpired(maxStalls: number, max: number): Promise<{ requeued: number; dead: number }> {
    return reclaimInMemory(this.endParts, this.nowMs(), maxStalls, max);
  }

  async getJob(id: string): Promise<JobInfo | null> {
    return jobInfoInMemory(this, id, this.nowMs());
  }

  async counts(): Promise<JobCounts> {
    const now = this.nowMs();
    this.trimCompleted(now);
    return {
      delayed: this.delayed.size,
      pending: this.pending.size + this.held.size,
      ready: this.ready.length,
      active: this.active.size,
      completed: this.completed.size,
      dead: this.dead.size,
      oldestWaitingMs: this.since.oldestMs(now),
    };
  }

  async listDead(offset: number, count: number): Promise<JobInfo[]> {
    return listDeadInMemory(this, offset, count);
  }

  async retryDead(id: string): Promise<boolean> {
    return retryDeadInMemory(this, id, this.nowMs());
  }

  async removeDead(id: string): Promise<boolean> {
    if (!this.dead.remove(id)) return false;
    const r = this.jobs.get(id);
    if (!r) return false;
    this.forget(r);
    return true;
  }
}
