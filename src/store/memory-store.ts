/**
 * MemoryStore: one process, the same semantics as RedisStore, through the TypeScript port of the admission
 * core (src/core/fair-share.ts). The default store. State per limiter is bounded like the Redis keys:
 * groups are trimmed after idleMs, at most maxGroups (+ the overflow group) are kept, and a limiter
 * untouched for idleMs + windowMs + epochMs starts afresh.
 */
import {
  NEWCOMERS_GROUP,
  closeFairShare,
  createFairShareState,
  decide,
  fairShareConfig,
  openFairShare,
  type FairShareSpec,
  type FairShareState,
} from '../core/fair-share';
import { DEFAULT_LEASE_MS, ccClose, ccDecide, ccOpen, ccRelease, createConcurrencyState, type ConcurrencyState } from '../core/concurrency';
import { toAdmitReply, toDecision } from '../core/decision';
import { ConfigError, describeValue } from '../errors';
import { queueMethods, withDeferral } from '../queue/defer-decision';
import { MemoryQueue } from '../queue/memory-queue';
import type { AdmitInput, Clock, Decision, LimiterSpec, LimiterStore, Store } from '../types';

export interface MemoryStoreOptions {
  /** Time source in ms since the epoch; tests inject one. @defaultValue `Date.now` */
  readonly clock?: Clock;
}

export class MemoryStore implements Store {
  private readonly clock: Clock;
  private readonly limiters = new Map<string, FairShareState>();
  private readonly queues = new Map<string, MemoryQueue>();
  private readonly slots = new Map<string, ConcurrencyState>();

  constructor(options: MemoryStoreOptions = {}) {
    const clock = options.clock ?? Date.now;
    if (typeof clock !== 'function') {
      throw new ConfigError('ERR_BL_CLOCK', `Expected \`clock\` to be a function, got ${describeValue(clock)}`);
    }
    this.clock = clock;
  }

  /** The limiter's admission and its queue (a MemoryQueue sharing the admission state). */
  bind(spec: LimiterSpec): LimiterStore {
    const cfg = fairShareConfig(spec as FairShareSpec);
    const name = spec.name;
    const stateOf = (): FairShareState => {
      let state = this.limiters.get(name);
      if (!state) {
        state = createFairShareState();
        this.limiters.set(name, state);
      }
      return state;
    };
    const leaseMs = spec.concurrencyLeaseMs ?? DEFAULT_LEASE_MS;
    const slotsOf = (clockMs: number): ConcurrencyState => {
      let cc = this.slots.get(name);
      if (!cc) {
        cc = createConcurrencyState();
        this.slots.set(name, cc);
      }
      return ccOpen(cc, clockMs);
    };
    const queueOf = (): MemoryQueue => {
      let queue = this.queues.get(name);
      if (!queue) {
        queue = new MemoryQueue({ spec: spec as FairShareSpec, state: stateOf, clock: this.clock });
        this.queues.set(name, queue);
      }
      return queue;
    };
    return {
      ...queueMethods(queueOf),
      admit: async (input: AdmitInput): Promise<Decision> => {
        const fs = openFairShare(stateOf(), cfg, Math.floor(this.clock() * 1000));
        const defer = input.defer;
        const cap = input.concurrency ?? 0;
        // admit-defer.lua: a live job named by the idempotency key is returned without deciding again.
        const existing = defer?.idempotencyKey ? queueOf().findIdempotent(defer.idempotencyKey) : undefined;
        if (existing) {
          closeFairShare(fs);
          const wait = Math.max(0, existing.runAt - fs.nowMs);
          const reply = {
            allowed: false,
            colour: 2,
            remaining: 0,
            limit: 0,
            guaranteed: 0,
            retryMs: wait,
            hintMs: wait,
            emptyMs: 0,
            resetMs: 0,
            active: fs.meta.gn,
            atMs: fs.nowMs,
            group: input.group,
            policy: 0,
            rules: cfg.rules && cfg.rules.flatMap(() => [0, 0]),
            ...(cap > 0 ? { lease: '', held: 0 } : {}),
          } as const;
          return withDeferral(toDecision(reply, spec.rules, cap), { status: 'duplicate', id: existing.id, runAt: existing.runAt });
        }
        let r;
        if (cap > 0) {
          const cc = slotsOf(Math.floor(fs.clockUs / 1000));
          r = ccDecide(fs, cc, input.group, input.weight, input.cost, cap, leaseMs);
          ccClose(cc);
        } else r = decide(fs, input.group, input.weight, input.cost, true);
        closeFairShare(fs);
        if (r.group === NEWCOMERS_GROUP) r.group = input.group; // probation is the limiter's own bookkeeping
        const reply = toAdmitReply(r, fs.nowMs);
        if (r.allowed || !defer) return toDecision(reply, spec.rules, cap);
        const outcome = queueOf().defer(fs.nowMs, { ...defer, group: input.group, weight: input.weight, cost: input.cost });
        return withDeferral(toDecision(reply, spec.rules, cap), outcome);
      },
      release: async (lease: string): Promise<boolean> => ccRelease(slotsOf(Math.floor(this.clock())), lease) === 1,
      destroy: async (): Promise<void> => {
        this.limiters.delete(name);
        this.queues.delete(name);
        this.slots.delete(name);
      },
    };
  }

  /** The queue of one limiter (tests write jobs straight into it); created by its first queue call. */
  queueOf(name: string): MemoryQueue | undefined {
    return this.queues.get(name);
  }

  /** The state of one limiter (tests and the memory dispatcher); created on first use. */
  stateOf(name: string): FairShareState | undefined {
    return this.limiters.get(name);
  }
}
