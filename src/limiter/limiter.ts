/**
 * The framework-agnostic facade: `createLimiter(options).check(group, { cost, weight, defer })` → Decision.
 * Options are validated once (src/limiter/options.ts, src/queue/defer-input.ts); each check validates its untrusted
 * input, then makes one store call through the outage guard (src/limiter/outage/outage.ts). With `defer`, a denied request
 * is written as a job in that same call; the job API (`getJob`, `counts`, dead letters) and `queue` (for the
 * Dispatcher and Worker) read the same store.
 */
import { checkCap, releaseSlot, snooze } from './concurrency-check';
import { createDeferringCheck, generatedKey, scopedKey, scopeIdempotency } from './deferring-check';
import { checkSettleFlag, settleInClass, settleReservation, withSettle } from './settle-check';
import { createAdaptiveReports } from './adaptive-reports';
import { DenyCache } from './deny-cache';
import { InputError, describeValue } from '../errors';
import { createOverrideApi } from './override-api';
import { checkGroup } from './group-id';
import { createHealthCheck, storeProbe, watchConfigDrift } from './health';
import type { CheckOptions, Limiter, LimiterEvents, LimiterObserver, LimiterOptions, PeekOptions } from './limiter-api';
import { createOutageGuard, type GuardObserver, type OutageGuard } from './outage/outage';
import { KnownOverrides } from './outage/known-overrides';
import { refuseUnknownOptions, type OptionNames } from '../util/option-names';
import { checkPlan } from './plan-options';
import { checkClass } from './class-options';
import { DEFAULT_CLASS } from '../core/fair-share-class';
import { schedulerOf } from '../util/scheduler';
import { LIMITER_OPTION_NAMES, NESTED_OPTION_NAMES, resolveLimiterOptions, type LimiterOptions as AdmissionOptions } from './options';
import { DEFER_OPTION_NAMES, resolveDeferOptions, type DeferRequest } from '../queue/defer-input';
import { createDurability } from '../queue/durability';
import { toEnqueuedJob, toEnqueueInput } from '../queue/offload';
import type { AdmitInput, Decision, EnqueueResult, LimiterStore, PlanSpec } from '../types';
import { withRetryKey } from '../util/store-call';
import { codeOf, isIntegerIn, optionsObject } from '../util/validate';

export type { DeferLimiterOptions, DeferRequest } from '../queue/defer-input';
export type { Health, HealthStatus, RedisHealth } from './health';
export type { CheckOptions, Limiter, LimiterEvents, LimiterObserver, LimiterOptions, PeekOptions } from './limiter-api';

const NO_OPTIONS: CheckOptions = Object.freeze({});
/** Largest per-check group concurrency: far beyond any worker fleet, small enough for the store's counters. */
const MAX_GROUP_CONCURRENCY = 1_000_000;
const CHECK_OPTIONS: OptionNames<CheckOptions> = {
  cost: true,
  weight: true,
  defer: true,
  groupConcurrency: true,
  plan: true,
  class: true,
  concurrency: true,
  settle: true,
};
const CHECK_OPTION_NAMES = Object.keys(CHECK_OPTIONS);
const PEEK_OPTIONS: OptionNames<PeekOptions> = { weight: true, plan: true, class: true };
const PEEK_OPTION_NAMES = Object.keys(PEEK_OPTIONS);
const DEFER_REQUEST: OptionNames<DeferRequest> = { type: true, payload: true, idempotencyKey: true };
const DEFER_REQUEST_NAMES = Object.keys(DEFER_REQUEST);
const ALL_OPTION_NAMES: readonly string[] = [...LIMITER_OPTION_NAMES, ...DEFER_OPTION_NAMES];
/** Job ids are short; a longer id cannot name a job, so it is not sent to the store. */
const MAX_JOB_ID_LENGTH = 64;

export function createLimiter(options: LimiterOptions): Limiter {
  refuseUnknownOptions(optionsObject(options), ALL_OPTION_NAMES, 'createLimiter()', '', NESTED_OPTION_NAMES);
  const admission = Object.fromEntries(Object.entries(options).filter(([name]) => !DEFER_OPTION_NAMES.includes(name)));
  const resolved = resolveLimiterOptions(admission as unknown as AdmissionOptions);
  const deferOptions = resolveDeferOptions(options);
  const { spec, maxGroupLength, maxCost, maxWeight, defaultPlan } = resolved;
  const plans = spec.plans;
  const classes = spec.classes;
  const store: LimiterStore = resolved.store.bind(spec);
  // Time of the deny cache and the outage guard (internal: tests attach a manual one, see src/util/scheduler.ts).
  const scheduler = schedulerOf(options);
  const now = (): number => scheduler.now();
  const denyCache = resolved.denyCache === undefined ? undefined : new DenyCache(resolved.denyCache, spec.windowMs, now);
  const listeners: { [E in keyof LimiterEvents]: Set<(...args: LimiterEvents[E]) => void> } = { degraded: new Set(), recovered: new Set() };
  const emit = <E extends keyof LimiterEvents>(event: E, ...args: LimiterEvents[E]): void => {
    for (const listener of listeners[event]) {
      // A throwing listener must not turn a check into a rejection.
      try {
        listener(...args);
      } catch (error) {
        resolved.logger.warn(`bulk-limiter: a '${event}' listener threw: ${String(error)}`);
      }
    }
  };
  let closed = false;
  const probe = storeProbe(store, () => closed);
  const connecting = store.firstConnection?.();
  const durable = deferOptions.durability && createDurability(store, deferOptions.durability);
  // what the 'local' fallback decides under while the store is unreachable (a blocked tenant stays blocked)
  const known = resolved.onStoreError === 'local' ? new KnownOverrides(resolved.maxOverrides, spec.windowMs) : undefined;
  const guard: OutageGuard = createOutageGuard(durable?.store ?? store, {
    policy: resolved.onStoreError,
    timeoutMs: resolved.timeoutMs,
    instances: resolved.instances,
    spec,
    logger: resolved.logger,
    probe,
    writeProbe: store.writeProbe?.bind(store),
    connecting,
    overrides: known,
    scheduler,
    onDegraded: (error) => emit('degraded', error),
    onRecovered: (downMs) => emit('recovered', { downMs }),
  });
  const healthCheck = createHealthCheck({
    store,
    probe,
    guard,
    timeoutMs: resolved.timeoutMs,
    logger: resolved.logger,
    name: spec.name,
    scheduler,
  });
  healthCheck.watchEviction(connecting);
  watchConfigDrift(store, spec.name, resolved.logger);
  const deferringCheck = createDeferringCheck({
    guard,
    durable,
    deferOptions,
    windowMs: spec.windowMs,
    scope: scopeIdempotency,
    evicting: () => healthCheck.evicting,
  });
  const adaptive = createAdaptiveReports(store, spec, now, resolved.logger);
  const observers = new Set<LimiterObserver>();
  const observeAll: GuardObserver = {
    decision: (d, fallback) => {
      for (const o of observers) o.decision?.(d, fallback);
    },
    storeCall: (ms, failed) => {
      for (const o of observers) o.storeCall?.(ms, failed);
    },
  };

  function deferred(
    group: string,
    weight: number,
    cost: number,
    request: DeferRequest,
    opts: CheckOptions,
    cap: number,
    plan: string | undefined,
    cls: string | undefined,
  ): Promise<Decision> {
    refuseUnknownOptions(request, DEFER_REQUEST_NAMES, 'check()', 'defer.');
    const jobs =
      opts.groupConcurrency === undefined
        ? deferOptions.groupConcurrency
        : checkInt('groupConcurrency', opts.groupConcurrency, MAX_GROUP_CONCURRENCY);
    return deferringCheck(group, weight, cost, request, jobs, cap, plan, cls);
  }

  /** A check with a concurrency cap: not through the deny cache (its answers carry no slot status), jittered when the cap says no. */
  function checkCapped(
    group: string,
    weight: number,
    cost: number,
    cap: number,
    opts: CheckOptions,
    plan: string | undefined,
    cls: string | undefined,
    reserve: boolean,
  ): Promise<Decision> {
    const input: AdmitInput = plan === undefined ? { group, weight, cost, concurrency: cap } : { group, weight, cost, concurrency: cap, plan };
    if (opts.defer !== undefined) return deferred(group, weight, cost, opts.defer, opts, cap, plan, cls).then(snooze);
    if (reserve) return guard.admit({ ...input, reserve }).then((decision) => withSettle(snooze(decision), settle));
    return guard.admit(inClass(input, cls)).then(snooze);
  }

  const settle = (reservation: string, actual: number) => settleReservation(store, (fn) => guard.call(fn), reservation, actual);

  /** With `classes`: the check's class (its own, its plan's, else 'default'); undefined without classes. */
  const classOf = (named: unknown, plan: PlanSpec | undefined): string | undefined =>
    classes === undefined
      ? named === undefined
        ? undefined
        : checkClass(classes, named)
      : named === undefined
        ? (plan?.class ?? DEFAULT_CLASS)
        : checkClass(classes, named);

  /** A check of a limiter with `classes`: its input carries its class, its decision says it (`decision.class`). */
  function checkInClass(group: string, cost: number, plan: PlanSpec | undefined, cls: string, opts: CheckOptions): Promise<Decision> {
    const weight = opts.weight === undefined ? (plan?.weight ?? 1) : checkInt('weight', opts.weight, maxWeight);
    const cap = opts.concurrency === undefined ? (plan?.concurrency ?? resolved.concurrency) : checkCap(opts.concurrency);
    // the stores say the class; an outage policy's decision does not know it
    const tag = (d: Decision): Decision => (d.class === cls ? d : { ...d, class: cls });
    if (cap > 0) return checkCapped(group, weight, cost, cap, opts, plan?.name, cls, false).then(tag);
    if (opts.defer !== undefined) return deferred(group, weight, cost, opts.defer, opts, 0, plan?.name, cls).then(tag);
    const input: AdmitInput = plan === undefined ? { group, weight, cost, class: cls } : { group, weight, cost, plan: plan.name, class: cls };
    if (denyCache === undefined) return guard.admit(input).then(tag);
    // a denial in one class (and plan) says nothing of another's: the cache tells them apart
    const lane = `${plan?.name ?? ''}\n${cls}`;
    const cached = denyCache.lookup(group, cost, lane);
    if (cached !== undefined) {
      guard.observer?.decision(cached, undefined);
      return Promise.resolve(cached);
    }
    const sentAt = now();
    return guard.admit(input).then((decision) => {
      const d = tag(decision);
      denyCache.record(group, d, sentAt, lane);
      return d;
    });
  }

  const limiter: Limiter = {
    name: spec.name,
    spec,
    options: resolved,
    check(group: string, opts: CheckOptions = NO_OPTIONS): Promise<Decision> {
      try {
        checkGroup(group, maxGroupLength);
        // A typo here is the caller's bug, like one in createLimiter's options (a loop over ≤ 4 keys).
        for (const key in opts)
          if (key !== 'cost' && key !== 'weight' && key !== 'defer' && key !== 'plan' && key !== 'settle')
            refuseUnknownOptions(opts, CHECK_OPTION_NAMES, 'check()');
        const cost = opts.cost === undefined ? 1 : checkInt('cost', opts.cost, maxCost);
        const plan = opts.plan === undefined ? defaultPlan : checkPlan(plans, opts.plan);
        const cls = classOf(opts.class, plan);
        if (cls !== undefined) {
          // a reservation settles in its plan's lane, and a class has lanes of its own: not (yet) together
          if (opts.settle !== undefined && checkSettleFlag(opts.settle, opts.defer !== undefined)) throw settleInClass();
          return checkInClass(group, cost, plan, cls, opts);
        }
        const weight = opts.weight === undefined ? (plan?.weight ?? 1) : checkInt('weight', opts.weight, maxWeight);
        // a check's own cap wins over its plan's, and that over the limiter's
        const cap = opts.concurrency === undefined ? (plan?.concurrency ?? resolved.concurrency) : checkCap(opts.concurrency);
        const reserve = opts.settle === undefined ? false : checkSettleFlag(opts.settle, opts.defer !== undefined);
        if (reserve && !store.settle)
          throw new InputError('ERR_BL_BAD_SETTLE', 'Expected a store that can settle reservations (RedisStore, MemoryStore)');
        if (cap > 0) return checkCapped(group, weight, cost, cap, opts, plan?.name, undefined, reserve);
        if (reserve) {
          // one call each (reserve.lua), not through the deny cache
          const input: AdmitInput = plan === undefined ? { group, weight, cost, reserve } : { group, weight, cost, plan: plan.name, reserve };
          return guard.admit(input).then((decision) => withSettle(decision, settle));
        }
        if (opts.defer === undefined) {
          const input: AdmitInput = plan === undefined ? { group, weight, cost } : { group, weight, cost, plan: plan.name };
          if (denyCache === undefined) return guard.admit(input);
          const cached = denyCache.lookup(group, cost, plan?.name);
          if (cached !== undefined) {
            guard.observer?.decision(cached, undefined);
            return Promise.resolve(cached);
          }
          const sentAt = now();
          return guard.admit(input).then((decision) => (denyCache.record(group, decision, sentAt, plan?.name), decision));
        }
        return deferred(group, weight, cost, opts.defer, opts, 0, plan?.name, undefined);
      } catch (error) {
        return Promise.reject(error);
      }
    },
    peek: async (group, opts = NO_OPTIONS) => {
      checkGroup(group, maxGroupLength);
      refuseUnknownOptions(opts, PEEK_OPTION_NAMES, 'peek()');
      const plan = opts.plan === undefined ? defaultPlan : checkPlan(plans, opts.plan);
      const weight = opts.weight === undefined ? (plan?.weight ?? 1) : checkInt('weight', opts.weight, maxWeight);
      const cls = classOf(opts.class, plan);
      const input = plan === undefined ? { group, weight } : { group, weight, plan: plan.name };
      return guard.call(() => store.peek(cls === undefined ? input : { ...input, class: cls }));
    },
    reset: async (group) => {
      checkGroup(group, maxGroupLength);
      const found = await guard.call(() => store.reset(group));
      denyCache?.forget(group); // this process's; another's holds its denial at most until its retry time
      return found;
    },
    release: (decision) => releaseSlot(store, decision, resolved.logger),
    settle,
    report: (outcome, opts) => adaptive.report(outcome, opts),
    limitInForce: () => adaptive.read(),
    ...createOverrideApi({ store, guard, name: spec.name, plans, maxWeight, maxGroupLength, maxOverrides: resolved.maxOverrides, denyCache, known }),
    destroy: () => store.destroy(),
    deferOptions,
    queue: durable ? durable.queue(store.queue) : store.queue,
    getJob: async (id) => (typeof id === 'string' && id.length > 0 && id.length <= MAX_JOB_ID_LENGTH ? store.queue.getJob(id) : null),
    enqueue: async (group, enqueueOptions) => {
      checkGroup(group, maxGroupLength);
      const limits = { maxCost, maxWeight, windowMs: spec.windowMs };
      // a job of a plan (the options', else `defaultPlan`) takes its weight and starts under its rules
      const named: unknown = enqueueOptions?.plan;
      const plan = named === undefined ? defaultPlan : checkPlan(plans, named);
      const cls = classOf(enqueueOptions?.class, plan);
      const input = { ...toEnqueueInput(group, enqueueOptions, deferOptions, limits, plan), ...(cls === undefined ? {} : { class: cls }) };
      if (input.settle && spec.classes) throw settleInClass();
      const evicting = healthCheck.evicting;
      if (evicting) throw evicting;
      // every job carries a key (the caller's, else a generated one), so a call whose outcome is unknown can be
      // retried onto the same job: the StoreError says the key
      const key = input.idempotencyKey ?? generatedKey();
      let result: EnqueueResult;
      try {
        result = await (durable ?? store.queue).enqueue({ ...input, idempotencyKey: scopedKey(group, key) });
      } catch (error) {
        throw withRetryKey(error, key);
      }
      return toEnqueuedJob(result, input, limits);
    },
    cancel: async (id) => (typeof id === 'string' && id.length > 0 && id.length <= MAX_JOB_ID_LENGTH ? store.queue.cancel(id) : false),
    counts: ((filter?: { readonly group: string }) => {
      if (filter === undefined) return store.queue.counts();
      return Promise.resolve().then(() => {
        checkGroup(filter?.group, maxGroupLength);
        return store.queue.groupCounts(filter.group);
      });
    }) as Limiter['counts'],
    listDead: (offset = 0, count = 100) => store.queue.listDead(offset, Math.min(count, 1000)),
    retryDead: async (id) => (typeof id === 'string' && id.length <= MAX_JOB_ID_LENGTH ? store.queue.retryDead(id) : false),
    removeDead: async (id) => (typeof id === 'string' && id.length <= MAX_JOB_ID_LENGTH ? store.queue.removeDead(id) : false),
    health: () => healthCheck.health(),
    observe(observer) {
      observers.add(observer);
      guard.observer = observeAll;
      return () => {
        observers.delete(observer);
        if (observers.size === 0) guard.observer = undefined;
      };
    },
    on(event, listener) {
      listeners[event].add(listener);
      return limiter;
    },
    off(event, listener) {
      listeners[event].delete(listener);
      return limiter;
    },
    close: async () => {
      closed = true;
      guard.close();
      healthCheck.close();
      await store.close?.();
      await durable?.close();
    },
  };
  return limiter;
}

function checkInt(name: 'cost' | 'weight' | 'groupConcurrency', value: unknown, max: number): number {
  if (!isIntegerIn(value, 1, max)) {
    throw new InputError(codeOf(name, 'BAD_'), `Expected \`${name}\` to be an integer from 1 to ${max}, got ${describeValue(value)}`);
  }
  return value;
}

/** The input with its class, when the check has one. */
function inClass(input: AdmitInput, cls: string | undefined): AdmitInput {
  return cls === undefined ? input : { ...input, class: cls };
}
