/**
 * The MemoryQueue's state: its sorted sets, lists and maps (one per Redis key of the queue), the shared
 * steps of includes/job.lua on them, and the wake-up of blocked waitForReady calls.
 */
import { fairShareConfig } from '../core/fair-share';
import { createFairShareState, type FairShareConfig, type FairShareState } from '../core/fair-share-state';
import type { OverrideState } from '../core/overrides';
import { rlConfig, type RuleConfig } from '../core/rules';
import { distinctPlanRules } from '../core/plan-rules';
import { createReservationState, reservationHoldMs, stOpen, type ReservationState } from '../core/settle';
import type { Clock, LimiterSpec } from '../types';
import type { LeaseEndParts } from './memory-lease-ends';
import type { JobRecord } from '../queue/job-record';
import { GroupFlight } from './memory-flight';
import { WaitingSince } from './memory-since';
import { SortedSet } from '../core/sorted-set';
import { integer } from '../util/validate';

export interface MemoryQueueOptions {
  /** The limiter whose budget the dispatcher spends. */
  readonly spec: LimiterSpec;
  /** The limiter's admission state (MemoryStore shares its own); a private one by default. */
  readonly state?: () => FairShareState;
  /** The limiter's reservations (MemoryStore shares its own): a job enqueued with `settle` reserves at its claim. */
  readonly reservations?: () => ReservationState;
  /** ms since the epoch. @defaultValue Date.now */
  readonly clock?: Clock;
  /** Dead records kept; the oldest beyond it are deleted. @defaultValue 10_000 */
  readonly maxDead?: number;
  /** The limiter's overrides at a time (ms; MemoryStore shares its own): a claim reads the group's. None by default. */
  readonly overrides?: (clockMs: number) => OverrideState;
}

const TRIM_PAGE = 100;

/** What MemoryQueue's operations (./memory-queue.ts, one per lua/*.lua) work on. */
export abstract class MemoryQueueState {
  protected readonly clock: Clock;
  private readonly maxDead: number;
  protected readonly fairShareConfig: FairShareConfig;
  /** Each plan's rules that differ from the limiter's, as the core runs them (claim_plans in claim.lua). */
  protected readonly planRules: ReadonlyMap<string, readonly RuleConfig[] | false>;
  protected readonly fairShareState: () => FairShareState;
  protected readonly overrides: ((clockMs: number) => OverrideState) | undefined;
  private readonly reservationState: () => ReservationState;
  /** How long a job's reservation can be settled (reservationHoldMs, cfg.hold_ms in Lua). */
  protected readonly holdMs: number;
  readonly delayed = new SortedSet();
  readonly pending = new SortedSet();
  readonly ready: string[] = [];
  readonly jobs = new Map<string, JobRecord>();
  readonly active = new SortedSet();
  readonly dead = new SortedSet();
  readonly completed = new SortedSet();
  readonly idempotency = new Map<string, string>();
  readonly backlog = new Map<string, number>();
  protected readonly flight = new GroupFlight();
  /** Every job not started by the time it waits from (since and gsince in includes/job.lua). */
  readonly since = new WaitingSince();
  /** What complete, fail and reclaim need (./memory-lease-ends.ts). */
  protected readonly endParts: LeaseEndParts;
  private readonly waiters = new Set<() => void>();

  /** The reservations as Redis would hold them now (their keys lapse: stOpen). */
  protected reservationsAt(clockMs: number): ReservationState {
    return stOpen(this.reservationState(), clockMs);
  }

  constructor(options: MemoryQueueOptions) {
    const maxDead = integer('maxDead', options.maxDead, { fallback: 10_000 });
    this.clock = options.clock ?? Date.now;
    this.maxDead = maxDead;
    // the claims decide each job in its own class: the config names every class (fsClass)
    this.fairShareConfig = fairShareConfig(options.spec, undefined, true);
    this.planRules = new Map([...distinctPlanRules(options.spec)].map(([name, p]) => [name, rlConfig(p.rules)[0]] as const));
    const own = createFairShareState();
    this.fairShareState = options.state ?? (() => own);
    this.overrides = options.overrides;
    const reservations = createReservationState();
    this.reservationState = options.reservations ?? (() => reservations);
    this.holdMs = reservationHoldMs(options.spec);
    this.endParts = {
      active: this.active,
      delayed: this.delayed,
      pending: this.pending,
      completed: this.completed,
      jobs: this.jobs,
      since: this.since,
      activeRecord: (id, token) => this.activeRecord(id, token),
      forget: (r) => this.forget(r),
      backlogDone: (group) => this.backlogDone(group),
      flightDone: (group, cap) => this.flightDone(group, cap),
      dead: this.dead,
      maxDead: this.maxDead,
      trimCompleted: (now) => this.trimCompleted(now),
    };
  }

  /** Empties every structure (the limiter's keys deleted); blocked waitForReady calls keep waiting. */
  clear(): void {
    for (const set of [this.delayed, this.pending, this.active, this.dead, this.completed]) set.clear();
    this.ready.length = 0;
    this.jobs.clear();
    this.idempotency.clear();
    this.backlog.clear();
    this.flight.clear();
    this.since.clear();
  }

  protected nowMs(): number {
    return Math.floor(this.clock());
  }

  // ── shared steps (includes/job.lua) ──

  protected forget(r: JobRecord): void {
    this.jobs.delete(r.id);
    if (r.idem !== undefined && this.idempotency.get(r.idem) === r.id) this.idempotency.delete(r.idem);
  }

  protected backlogDone(group: string): void {
    const n = (this.backlog.get(group) ?? 0) - 1;
    if (n <= 0) this.backlog.delete(group);
    else this.backlog.set(group, n);
  }

  /** Group concurrency's counts and held jobs (./memory-flight.ts), read by the dispatch and job status steps. */
  get inflight(): Map<string, number> {
    return this.flight.inflight;
  }

  get held(): SortedSet {
    return this.flight.held;
  }

  /** job_flight_done: a capped job left flight; the group's oldest held job takes its place. */
  protected flightDone(group: string, cap: number | undefined): void {
    if (this.flight.leave(group, cap, this.ready, this.pending)) this.wake();
  }

  /** Wakes every blocked waitForReady (one process: a signal, no token list needed). */
  protected wake(): void {
    const waiters = [...this.waiters];
    this.waiters.clear();
    waiters.forEach((resolve) => resolve());
  }

  protected trimCompleted(now: number): void {
    for (const { member: id } of this.completed.rangeToScore(now, TRIM_PAGE)) {
      const r = this.jobs.get(id);
      if (r) this.forget(r);
      this.completed.remove(id);
    }
  }

  protected activeRecord(id: string, token: string): JobRecord | undefined {
    const r = this.jobs.get(id);
    return r && r.state === 'active' && r.token === token ? r : undefined;
  }

  /** Resolves when a job is made ready (see wake), after timeoutMs, or when `signal` aborts. */
  async waitForReady(timeoutMs: number, signal?: AbortSignal): Promise<void> {
    if (this.ready.length > 0 || signal?.aborted) return;
    await new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.waiters.delete(done);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      this.waiters.add(done);
      signal?.addEventListener('abort', done, { once: true });
    });
  }
}
