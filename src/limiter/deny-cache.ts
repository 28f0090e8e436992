/**
 * The local deny cache (docs/algorithm.md §4, Envoy ratelimit's over-limit cache): after the store
 * denies a group, this process answers that group's checks itself for a while. It never admits, so the
 * global bound is untouched; a sample of the calls still goes to the store so the group's demand keeps being
 * metered (and, with `hold: 'retry'`, so capacity that frees up early is still taken). Local denials are
 * staggered like the store's (each takes the next guaranteed slot), so callers that honour Retry-After do not
 * all come back at the same instant. How long it answers (`hold`):
 *
 * - `'hint'` (default): while the store would certainly deny too: until the group's hint (the earliest time
 *   it might borrow) or until the global bucket holds a unit again for anyone, whichever is later. Both are
 *   measured from when the call was sent, so they are lower bounds on the store's clock. It pays off with slow
 *   limits; at per-second limits the bucket refills every few ms and most checks still reach the store.
 * - `'retry'`: until the retry time the store gave the group (its Retry-After), which in a flood is about one
 *   guaranteed slot of the group away. A check the store might have admitted early (a unit freed up and this
 *   group would have taken it) is denied locally instead; the unit goes to a sampled call or another group.
 *   In a flood at per-second limits this answers nearly every denial in-process.
 */
import type { Decision } from '../types';

export interface DenyCacheOptions {
  /**
   * Most groups remembered at once. When full, a newly denied group takes the place of the one recorded
   * longest ago only if that one's denial has run out; otherwise it is not remembered (the store answers it).
   * @defaultValue `10_000`
   */
  readonly maxGroups?: number;
  /** Share of cached denials still sent to the store, so its demand meter sees the group. @defaultValue `0.05` */
  readonly sampleRate?: number;
  /**
   * How long a denial is answered in-process: `'hint'` while the store would certainly deny too (never
   * denies what the store would admit); `'retry'` until the retry time the store gave the group (far fewer
   * store calls in floods at fast limits; see the header of src/limiter/deny-cache.ts). @defaultValue `'hint'`
   */
  readonly hold?: 'hint' | 'retry';
}

export interface ResolvedDenyCacheOptions {
  readonly maxGroups: number;
  readonly sampleRate: number;
  readonly hold: 'hint' | 'retry';
}

interface Entry {
  /** Local clock (ms) until which the store would deny this group whatever the others do. */
  readonly until: number;
  /** The store's decision, reused for the fields the local answer does not change. */
  readonly decision: Decision;
  /** Local clock (ms) of that decision, to age its store time. */
  readonly decidedAt: number;
  /** One guaranteed slot per unit of cost, in ms. */
  readonly slotMs: number;
  /** The plan the denial was decided under: a check of another plan (other rules) goes to the store. */
  readonly plan: string | undefined;
  /** Local clock (ms) of the latest retry time handed out. */
  promise: number;
}

export class DenyCache {
  private readonly entries = new Map<string, Entry>();
  /** Local clock (ms) until which the global bucket is empty for everyone. */
  private globalUntil = 0;

  constructor(
    private readonly options: ResolvedDenyCacheOptions,
    private readonly windowMs: number,
    private readonly now: () => number = Date.now,
    private readonly random: () => number = Math.random,
  ) {}

  /** A local denial for `group` (checked under `plan`), or undefined when the store must decide. */
  lookup(group: string, cost: number, plan?: string): Decision | undefined {
    const entry = this.entries.get(group);
    if (entry === undefined || entry.plan !== plan) return undefined;
    const now = this.now();
    const until = Math.max(entry.until, this.globalUntil);
    if (now >= until || now - entry.decidedAt >= this.windowMs) {
      // The store decides again; an entry older than a window would repeat stale quota figures.
      if (now >= entry.until) this.entries.delete(group);
      return undefined;
    }
    if (this.random() < this.options.sampleRate) return undefined;
    // Like the store: the next slot after the latest promise, never more than a window past the first one.
    const first = Math.max(until, entry.decidedAt + entry.decision.retryAfterMs);
    let at = Math.max(first, entry.promise + cost * entry.slotMs);
    if (at > first + this.windowMs) at = first;
    entry.promise = at;
    const d = entry.decision;
    return {
      allowed: false,
      group: d.group,
      limit: d.limit,
      guaranteed: d.guaranteed,
      remaining: 0,
      retryAfterMs: Math.ceil(at - now),
      resetMs: Math.max(0, d.resetMs - (now - entry.decidedAt)),
      activeGroups: d.activeGroups,
      colour: 'red',
      reason: 'limit',
      hintMs: Math.ceil(until - now),
      globalWaitMs: Math.max(0, Math.floor(this.globalUntil - now)),
      at: d.at + (now - entry.decidedAt),
    };
  }

  /**
   * Remembers a store denial (only plain over-limit ones: not outages, not deferrals).
   * @param sentAt local clock when the call was sent: the store decided after it, so durations counted
   *        from it end no later than on the store's clock
   * @param plan the plan the check named (its rules decided it)
   */
  record(requested: string, decision: Decision, sentAt: number, plan?: string): void {
    if (decision.allowed || decision.reason !== 'limit' || decision.job !== undefined) return;
    // How long the store's answer holds for this group here (see `hold` in the header).
    const holdMs = this.options.hold === 'retry' ? Math.max(decision.hintMs ?? 0, decision.retryAfterMs) : (decision.hintMs ?? 0);
    const globalWaitMs = decision.globalWaitMs ?? 0;
    if (holdMs < 1 && globalWaitMs < 1) return;
    if (sentAt + globalWaitMs > this.globalUntil) this.globalUntil = sentAt + globalWaitMs;
    if (this.entries.size >= this.options.maxGroups && !this.entries.has(requested)) {
      // Full: replace the entry recorded longest ago (Map order, O(1)) only once its denial has run out.
      // Evicting live entries made a cache smaller than the denied groups churn on every call (and the
      // retained decisions cost more in GC than the cache saved; the 100,000-group rows of bench/results/admission.md).
      const oldest = this.entries.entries().next();
      if (oldest.done || oldest.value[1].until > this.now()) return;
      this.entries.delete(oldest.value[0]);
    }
    const slotMs = this.windowMs / Math.max(1, decision.guaranteed);
    const previous = this.entries.get(requested);
    this.entries.delete(requested); // re-inserted last: Map order is then oldest-recorded first
    this.entries.set(requested, {
      until: sentAt + holdMs,
      decision,
      decidedAt: sentAt,
      slotMs,
      plan,
      promise: Math.max(sentAt + decision.retryAfterMs, previous?.promise ?? 0),
    });
  }

  /** Forgets a group's denial (limiter.reset): its next check goes to the store. */
  forget(group: string): void {
    this.entries.delete(group);
  }

  /** Groups remembered now (tests, metrics). */
  get size(): number {
    return this.entries.size;
  }
}
