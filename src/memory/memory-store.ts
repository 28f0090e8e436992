/**
 * MemoryStore: one process, the same semantics as RedisStore, through the TypeScript port of the admission
 * core (src/core/fair-share.ts). The default store. State per limiter is bounded like the Redis keys:
 * groups are trimmed after idleMs, at most maxGroups (+ the overflow group) are kept, and a limiter
 * untouched for idleMs + windowMs + epochMs starts afresh.
 */
import { closeFairShare, fairShareConfig, openFairShare } from '../core/fair-share';
import { fsReset } from '../core/fair-share-groups';
import { NEWCOMERS_GROUP, createFairShareState, fsExpire, type FairShareConfig, type FairShareState } from '../core/fair-share-state';
import { decide } from '../core/fair-share-decide';
import { adLoad, adReport } from '../core/adaptive';
import { ccClose, ccDecide, ccOpen, ccRelease, createConcurrencyState, type ConcurrencyResult, type ConcurrencyState } from '../core/concurrency';
import type { FairShareResult } from '../core/fair-share-state';
import { inClass, toAdmitReply, toDecision, toGroupStatus, type AdmitReply } from '../core/decision';
import { rlConfig } from '../core/rules';
import {
  createReservationState,
  planOfReservation,
  reservationHoldMs,
  reservationTail,
  stOpen,
  stReserve,
  stSettle,
  stSweep,
  type ReservationState,
} from '../core/settle';
import { rulesOfCheck } from '../core/plan-rules';
import { cfDescribe, configIdentity } from '../core/config-drift';
import { createConfigWatch } from '../core/config-watch';
import {
  createOverrideState,
  ovBlocked,
  ovDelete,
  ovGet,
  ovKeep,
  ovList,
  ovOpen,
  ovRead,
  ovSet,
  ovSpan,
  ovText,
  type OverrideState,
} from '../core/overrides';
import { withDeferral } from '../queue/defer-decision';
import { MemoryQueue } from './memory-queue';
import type {
  AdaptiveStatus,
  AdmitInput,
  Clock,
  Decision,
  GroupStatus,
  LimiterSpec,
  LimiterStore,
  OverrideInput,
  OverrideWrite,
  PeekInput,
  ReportInput,
  SettleInput,
  SettleResult,
  Store,
} from '../types';
import { func } from '../util/validate';
import { withAdmitNow } from '../util/admit-now';

export interface MemoryStoreOptions {
  /** Time source in ms since the epoch; tests inject one. @defaultValue `Date.now` */
  readonly clock?: Clock;
}

export class MemoryStore implements Store {
  private readonly clock: Clock;
  private readonly limiters = new Map<string, FairShareState>();
  private readonly queues = new Map<string, MemoryQueue>();
  private readonly slots = new Map<string, ConcurrencyState>();
  private readonly reservations = new Map<string, ReservationState>();
  private readonly overrides = new Map<string, OverrideState>();

  constructor(options: MemoryStoreOptions = {}) {
    this.clock = func<Clock, Clock>('clock', options.clock, { fallback: Date.now });
  }

  /** The limiter's admission and its queue (a MemoryQueue sharing the admission state). */
  bind(spec: LimiterSpec): LimiterStore {
    // an admission's config carries the limiter's fingerprint (config-drift.ts), as the Redis lanes' blocks do
    const { fingerprint, description } = configIdentity(spec);
    const cfg = { ...fairShareConfig(spec), cf: fingerprint };
    // with classes, one config per class (its cls: fair-share-class.ts); a check without one is 'default''s
    const classCfgs = new Map([...(spec.classes?.keys() ?? [])].map((name) => [name, { ...fairShareConfig(spec, name), cf: fingerprint }] as const));
    const cfgOf = (name: string | undefined): FairShareConfig => (name === undefined ? cfg : (classCfgs.get(name) ?? cfg));
    // each plan's rules as the core runs them (a check without a plan: the limiter's, cfg.rules)
    const planRules = new Map([...(spec.plans?.values() ?? [])].map((plan) => [plan.name, rlConfig(plan.rules)[0]] as const));
    const name = spec.name;
    const stateOf = (): FairShareState => {
      let state = this.limiters.get(name);
      if (!state) {
        state = createFairShareState();
        this.limiters.set(name, state);
      }
      return state;
    };
    const leaseMs = spec.concurrencyLeaseMs;
    const slotsOf = (clockMs: number): ConcurrencyState => {
      let cc = this.slots.get(name);
      if (!cc) {
        cc = createConcurrencyState();
        this.slots.set(name, cc);
      }
      return ccOpen(cc, clockMs);
    };
    const holdMs = reservationHoldMs(spec);
    const reservationState = (): ReservationState => {
      let rs = this.reservations.get(name);
      if (!rs) {
        rs = createReservationState();
        this.reservations.set(name, rs);
      }
      return rs;
    };
    const reservationsOf = (clockMs: number): ReservationState => stOpen(reservationState(), clockMs);
    const overridesOf = (clockMs: number): OverrideState => {
      let os = this.overrides.get(name);
      if (!os) {
        os = createOverrideState();
        this.overrides.set(name, os);
      }
      return ovOpen(os, clockMs);
    };
    // one queue per limiter name, shared by every binding of it; destroy() empties it in place
    const queue =
      this.queues.get(name) ?? new MemoryQueue({ spec, state: stateOf, reservations: reservationState, clock: this.clock, overrides: overridesOf });
    this.queues.set(name, queue);
    // config-check.lua's twin: publish this description, read another's
    const configDrift = createConfigWatch({
      description,
      now: () => this.clock(),
      // after the check that saw it has written its state back, as a call of its own would run
      check: (other) => Promise.resolve().then(() => cfDescribe(stateOf(), fingerprint, description, other, Math.floor(this.clock()))),
    });
    // synchronous: the limiter's outage guard calls it directly (src/util/admit-now.ts), `admit` through a promise
    const admitNow = (input: AdmitInput): Decision => {
      const fs = openFairShare(stateOf(), cfgOf(input.class), Math.floor(this.clock() * 1000));
      configDrift.saw(fs.cf);
      // the overrides' longest rule span keeps the state that long (ov_span: every call alike)
      const overrides = overridesOf(Math.floor(fs.clockUs / 1000));
      ovSpan(overrides, fs);
      const defer = input.defer;
      const rules = input.plan === undefined ? cfg.rules : (planRules.get(input.plan) ?? cfg.rules);
      const ruleSpecs = rulesOfCheck(spec, input);
      const cap = input.concurrency ?? 0;
      // admit-defer.lua: a live job named by the idempotency key is returned without deciding again.
      const existing = defer?.idempotencyKey ? queue.findIdempotent(defer.idempotencyKey) : undefined;
      if (existing) {
        closeFairShare(fs);
        ovKeep(overrides, fs);
        const wait = Math.max(0, existing.runAt - fs.nowMs);
        const reply: AdmitReply = {
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
          atUs: fs.nowUs,
          group: input.group,
          policy: rules ? 0 : undefined,
          // each rule's mark −1: nothing was decided (remaining 0, reset 0), as admit-defer.lua's duplicate
          rules: rules ? rules.map(() => -1) : [],
          lease: cap > 0 ? '' : undefined,
          held: cap > 0 ? 0 : undefined,
          override: '',
        };
        return withDeferral(toDecision(reply, ruleSpecs, cap), { status: 'duplicate', id: existing.id, runAt: existing.runAt });
      }
      // the group's override (includes/overrides.lua): its weight, rules, cap and job cap; a block denies at once
      const ov = ovRead(fs, overrides.records.get(input.group));
      let weight = input.weight;
      let ccap = cap;
      let ovRules = rules;
      if (ov) {
        if (ov.w > 0) weight = ov.w;
        if (ccap > 0 && ov.c > 0) ccap = ov.c;
        if (ov.rules !== undefined) ovRules = ov.rules;
      }
      const blocked = ov !== undefined && ov.b === 1;
      let r: FairShareResult | ConcurrencyResult;
      if (blocked) {
        r = cap > 0 ? { ...ovBlocked(fs, input.group, ov), lease: '', held: 0 } : ovBlocked(fs, input.group, ov);
      } else if (cap > 0) {
        const cc = slotsOf(Math.floor(fs.clockUs / 1000));
        r = ccDecide(fs, cc, input.group, weight, input.cost, ccap, leaseMs, ovRules);
        ccClose(cc);
      } else r = decide(fs, input.group, weight, input.cost, true, ovRules);
      // reserve.lua: an allowed check records its reservation (then a page of lapsed ones is forgotten)
      let reservation: string | undefined;
      if (input.reserve && !defer) {
        const rs = reservationsOf(Math.floor(fs.clockUs / 1000));
        const spent = ov?.rules;
        reservation = r.allowed ? stReserve(fs, rs, r.group, input.cost, r.colour, holdMs, reservationTail(input.plan), spent) : '';
        stSweep(fs, rs);
      }
      closeFairShare(fs);
      ovKeep(overrides, fs);
      if (r.group === NEWCOMERS_GROUP) r.group = input.group; // probation is the limiter's own bookkeeping
      const reply = toAdmitReply(r, fs.nowUs, ovText(ov, r));
      if (reservation) return { ...toDecision(reply, ruleSpecs, cap), reservation };
      if (r.allowed || !defer || blocked) return toDecision(reply, ruleSpecs, cap);
      const jobs = ov && ov.g > 0 ? { groupConcurrency: ov.g } : {};
      const outcome = queue.defer(fs.nowMs, {
        ...defer,
        ...jobs,
        group: input.group,
        weight,
        cost: input.cost,
        plan: input.plan,
        ...(input.class === undefined ? {} : { class: input.class }),
      });
      return withDeferral(toDecision(reply, ruleSpecs, cap), outcome);
    };
    const admitInClass = (input: AdmitInput): Decision => (input.class === undefined ? admitNow(input) : inClass(input.class)(admitNow(input)));
    return withAdmitNow(
      {
        queue,
        configDrift,
        admit: async (input: AdmitInput): Promise<Decision> => admitInClass(input),
        // peek.lua: the state is only read (a limiter never used is read as an empty one, not created)
        peek: async (input: PeekInput): Promise<GroupStatus> => {
          const fs = openFairShare(this.limiters.get(name) ?? createFairShareState(), cfgOf(input.class), Math.floor(this.clock() * 1000), true);
          const rules = input.plan === undefined ? cfg.rules : (planRules.get(input.plan) ?? cfg.rules);
          // the override as a check would read it (a lapsed one reads as none; nothing is written)
          const os = this.overrides.get(name);
          const clockMs = Math.floor(fs.clockUs / 1000);
          const live = os !== undefined && !(os.expiresAtMs > 0 && clockMs > os.expiresAtMs);
          const ov = ovRead(fs, live ? os.records.get(input.group) : undefined);
          const r =
            ov && ov.b === 1
              ? ovBlocked(fs, input.group, ov)
              : decide(fs, input.group, ov && ov.w > 0 ? ov.w : input.weight, 1, false, ov && ov.rules !== undefined ? ov.rules : rules);
          configDrift.saw(fs.cf);
          if (r.group === NEWCOMERS_GROUP) r.group = input.group;
          return toGroupStatus(toAdmitReply(r, fs.nowUs, ovText(ov, r)), rulesOfCheck(spec, input));
        },
        reset: async (group: string): Promise<boolean> => {
          const state = this.limiters.get(name);
          return state !== undefined && fsReset(state, group, Math.floor(this.clock()));
        },
        release: async (lease: string): Promise<boolean> => ccRelease(slotsOf(Math.floor(this.clock())), lease) === 1,
        // settle.lua
        settle: async (input: SettleInput): Promise<SettleResult> => {
          const fs = openFairShare(stateOf(), cfg, Math.floor(this.clock() * 1000));
          const plan = planOfReservation(input.reservation);
          const rules = plan === undefined ? cfg.rules : (planRules.get(plan) ?? cfg.rules);
          const rs = reservationsOf(Math.floor(fs.clockUs / 1000));
          const [status, refunded, debt] = stSettle(fs, rs, input.reservation, input.actual, rules);
          stSweep(fs, rs);
          closeFairShare(fs);
          // a script's numbers reach the client truncated to integers
          return { status, refunded: Math.trunc(refunded), debt: Math.trunc(debt) };
        },
        // report.lua: the adaptive limit's state lives on the limiter's state, and lapses with it
        ...(cfg.ad
          ? {
              report: async (input: ReportInput): Promise<AdaptiveStatus> => {
                const ad = cfg.ad as Exclude<typeof cfg.ad, false>;
                const state = stateOf();
                const nowUs = Math.floor(this.clock() * 1000);
                fsExpire(state, Math.floor(nowUs / 1000));
                const st = adLoad(state.adaptive, ad, nowUs);
                const [change, write] =
                  input.outcome === 'read' ? [0 as const, false] : adReport(ad, st, nowUs, input.outcome === 'throttled', input.retryAfterMs * 1000);
                if (write) {
                  // a "hash" this report makes gets the limiter's TTL; an existing one keeps its own (report.lua)
                  if (!state.meta && !state.adaptive) state.expiresAtMs = Math.floor(nowUs / 1000) + cfg.ttlMs;
                  state.adaptive = { ...st, fresh: false };
                }
                return { limit: st.l, change };
              },
            }
          : {}),
        setOverride: async (input: OverrideInput): Promise<OverrideWrite> => {
          const nowMs = Math.floor(this.clock());
          const [written, expiresMs, setMs, held] = ovSet(
            overridesOf(nowMs),
            nowMs,
            input.group,
            input.settings,
            input.ttlMs,
            input.maxOverrides,
            input.spanMs,
          );
          return { written, expiresMs, setMs, held };
        },
        getOverride: async (group: string): Promise<string | undefined> => {
          const nowMs = Math.floor(this.clock());
          return ovGet(overridesOf(nowMs), nowMs, group) || undefined;
        },
        deleteOverride: async (group: string): Promise<boolean> => {
          const nowMs = Math.floor(this.clock());
          return ovDelete(overridesOf(nowMs), nowMs, group);
        },
        listOverrides: async (cursor: string, count: number): Promise<Array<[string, string]>> => {
          const nowMs = Math.floor(this.clock());
          return ovList(overridesOf(nowMs), nowMs, cursor, count);
        },
        destroy: async (): Promise<void> => {
          this.limiters.delete(name);
          this.overrides.delete(name);
          queue.clear();
          this.slots.delete(name);
          this.reservations.delete(name);
        },
      },
      admitInClass,
    );
  }
}
