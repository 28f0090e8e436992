/**
 * Runs one sequence of steps on both backends on one injected clock, step by step: the Lua scripts through
 * RedisStore/RedisQueue over the oracle, and MemoryStore/MemoryQueue. Any difference in what a caller observes
 * throws, naming the step; at the end every job's getJob and the counts are compared too.
 */
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { fairShareConfig } from '../../src/core/fair-share';
import type { LimiterSpec } from '../../src/types';
import type { RuleAlgorithm } from '../../src/types';
import { resolvePlans } from '../../src/limiter/plan-options';
import { resolveClasses } from '../../src/limiter/class-options';
import { resolveRules, type Rule } from '../../src/limiter/rule-options';
import { MemoryQueue } from '../../src/memory/memory-queue';
import { RedisQueue } from '../../src/redis/redis-queue';
import { MemoryStore } from '../../src/memory/memory-store';
import { RedisStore } from '../../src/redis/redis-store';
import { ManualClock } from '../conformance/store-suite';
import type { LimiterStore } from '../../src/types';
import { OracleRedis } from './oracle-client';
import { settleDrift, stepArb, type OperationName, type Side, type Step, type World } from './operations';

export interface Timed {
  /** Clock step before the operation (ms); long gaps outlive idleMs and the keys' TTL. */
  readonly gapMs: number;
  readonly step: Step;
}

export interface Setup {
  /** Rewrites each script's source before it is compiled (the mutation tests). */
  readonly rewrite?: (lua: string) => string;
  /** The queue on its own (no admission in front), keeping at most this many dead records. */
  readonly queueOnlyMaxDead?: number;
}

interface RuleDraft {
  readonly limit: number;
  readonly windowMs: number;
  readonly algorithm: RuleAlgorithm;
}

/**
 * Limiter specs: integer percentages for burst and reserve (fast-check's doubles crowd at 0 and 1, which left
 * burst at 1 in most of the core tests' specs), a few groups (overflow) or many, strict or sustained.
 */
export const specArb: fc.Arbitrary<LimiterSpec> = fc
  .record({
    limit: fc.integer({ min: 1, max: 120 }),
    windowMs: fc.integer({ min: 50, max: 2000 }),
    burstPct: fc.integer({ min: 0, max: 100 }),
    reservePct: fc.integer({ min: 0, max: 50 }),
    idleMs: fc.integer({ min: 20, max: 3000 }),
    epochMs: fc.integer({ min: 10, max: 1000 }),
    maxGroups: fc.oneof(fc.integer({ min: 1, max: 5 }), fc.constant(10_000)),
    sustained: fc.boolean(),
    // request-concurrency leases shorter and longer than the steps' gaps
    concurrencyLeaseMs: fc.integer({ min: 1, max: 3000 }),
    // probation off, or short enough that groups graduate (and sightings are dropped) within a run
    probationMs: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 300 })),
    // half the specs carry rules: every algorithm, windows shorter and longer than idleMs
    rules: fc.oneof(
      fc.constant<RuleDraft[]>([]),
      fc.array<RuleDraft>(
        fc.record({
          limit: fc.integer({ min: 1, max: 20 }),
          windowMs: fc.integer({ min: 20, max: 5000 }),
          algorithm: fc.constantFrom('token-bucket', 'sliding-window', 'fixed-window') as fc.Arbitrary<RuleAlgorithm>,
        }),
        { minLength: 1, maxLength: 3 },
      ),
    ),
    // a third of the specs carry plans: rules that replace the limiter's (r0, r1) or extend them (x0, x1)
    plans: fc.oneof(
      { arbitrary: fc.constant<Array<Array<RuleDraft & { readonly name: string }>>>([]), weight: 2 },
      {
        arbitrary: fc.array(
          fc.uniqueArray(
            fc.record<RuleDraft & { readonly name: string }>({
              name: fc.constantFrom('r0', 'r1', 'x0', 'x1'),
              limit: fc.integer({ min: 1, max: 20 }),
              windowMs: fc.integer({ min: 20, max: 5000 }),
              algorithm: fc.constantFrom('token-bucket', 'sliding-window', 'fixed-window') as fc.Arbitrary<RuleAlgorithm>,
            }),
            { selector: (r) => r.name, maxLength: 2 },
          ),
          { minLength: 1, maxLength: 3 },
        ),
        weight: 1,
      },
    ),
    // a third of the specs carry classes (docs/algorithm.md §2.11): one or two named, 'default' the remainder
    // (0 when they sum to 1: a class that only borrows)
    classes: fc.oneof(
      { arbitrary: fc.constant<number[]>([]), weight: 2 },
      { arbitrary: fc.array(fc.constantFrom<number>(0.1, 0.25, 0.5, 0.75), { minLength: 1, maxLength: 2 }), weight: 1 },
    ),
  })
  .map(({ limit, burstPct, reservePct, rules, plans, classes, ...rest }) => {
    const burst = Math.max(1, Math.ceil((burstPct * limit) / 100));
    const resolved = resolveRules(rules.map((r, i) => ({ name: `r${i}`, ...r })));
    const planOptions: Record<string, { rules: readonly Rule[] }> = {};
    plans.forEach((planRules: ReadonlyArray<RuleDraft & { readonly name: string }>, i: number) => {
      // a plan name may hold spaces (the job member carries its length): the second one does
      planOptions[i === 1 ? 'p 1' : `p${i}`] = { rules: planRules };
    });
    const resolvedPlans = plans.length > 0 ? resolvePlans(planOptions, resolved, 1000) : undefined;
    return {
      ...rest,
      name: 'oracle',
      limit,
      burst,
      reserve: Math.min(burst - 1, Math.floor((reservePct * burst) / 100)),
      ...(resolved.length > 0 ? { rules: resolved } : {}),
      ...(resolvedPlans ? { plans: resolvedPlans } : {}),
      ...(classes.length > 0
        ? { classes: resolveClasses(Object.fromEntries(classes.map((share, i) => [`c${i}`, { share: i === 1 ? 1 - classes[0]! : share }]))) }
        : {}),
    };
  });

/**
 * specArb's limiters with an adaptive limit (report.lua moves it; every admission script reads it). A property
 * of its own: drawn inside specArb, it would change the specs (and steps) every other property's fixed seed draws.
 */
export const adaptiveSpecArb: fc.Arbitrary<LimiterSpec> = specArb.chain((spec) =>
  fc
    .record({
      minPct: fc.integer({ min: 1, max: 100 }),
      above: fc.integer({ min: 0, max: 200 }),
      increase: fc.integer({ min: 1, max: 20 }),
      decrease: fc.constantFrom(0.33, 0.5, 0.7, 0.9),
      intervalMs: fc.integer({ min: 1, max: 2000 }),
    })
    .map((a) => ({
      ...spec,
      adaptive: {
        min: Math.max(1, Math.floor((a.minPct * spec.limit) / 100)),
        max: spec.limit + a.above,
        increase: Math.min(a.increase, spec.limit + a.above),
        decrease: a.decrease,
        intervalMs: a.intervalMs,
      },
    })),
);

/** ms the limiter's keys live after their last PEXPIRE (fs_config's ttl_ms). */
export const ttlOf = (spec: LimiterSpec): number => fairShareConfig(spec).ttlMs;

export function gapArb(spec: LimiterSpec): fc.Arbitrary<number> {
  const ttl = ttlOf(spec);
  return fc.oneof(
    { arbitrary: fc.constant(0), weight: 6 },
    { arbitrary: fc.integer({ min: 1, max: 20 }), weight: 6 },
    { arbitrary: fc.integer({ min: 1, max: spec.windowMs }), weight: 4 },
    { arbitrary: fc.integer({ min: spec.idleMs, max: 3 * ttl }), weight: 2 },
    // exactly on an expiry or trim boundary, after a fresh limiter set the TTL
    { arbitrary: fc.constantFrom(ttl - 1, ttl, ttl + 1, spec.idleMs, Math.ceil(spec.idleMs / 8)), weight: 2 },
    // a step back: time stands still for the limiter, not for the clock
    { arbitrary: fc.constant(-7), weight: 1 },
  );
}

export const timedStepsArb = (spec: LimiterSpec, names: readonly OperationName[], maxLength: number): fc.Arbitrary<Timed[]> =>
  fc.array(fc.record({ gapMs: gapArb(spec), step: stepArb(spec, names) }), { minLength: Math.ceil(maxLength / 2), maxLength });

type Outcome = { readonly value: unknown } | { readonly threw: true };

async function settle(run: () => Promise<unknown>): Promise<Outcome> {
  try {
    // JSON: absent and undefined fields compare equal, as they read the same to a caller
    return { value: JSON.parse(JSON.stringify(await run()) ?? 'null') as unknown };
  } catch {
    return { threw: true };
  }
}

function collectIds(value: unknown, into: Set<string>, leases?: Set<string>, reservations?: Set<string>): void {
  if (Array.isArray(value)) value.forEach((v) => collectIds(v, into, leases, reservations));
  else if (typeof value === 'object' && value !== null) {
    for (const [k, v] of Object.entries(value)) {
      if (k === 'id' && typeof v === 'string' && v !== '') into.add(v);
      else if (k === 'lease' && typeof v === 'string') leases?.add(v);
      else if (k === 'reservation' && typeof v === 'string') reservations?.add(v);
      else collectIds(v, into, leases, reservations);
    }
  }
}

async function sides(spec: LimiterSpec, clock: ManualClock, setup: Setup): Promise<{ lua: Side; memory: Side; oracle: OracleRedis }> {
  const oracle = new OracleRedis({ clock: clock.now, ...(setup.rewrite ? { rewrite: setup.rewrite } : {}) });
  const client = oracle.asClient();
  const tokens = (): Map<string, string[]> => new Map();
  if (setup.queueOnlyMaxDead !== undefined) {
    const maxDead = setup.queueOnlyMaxDead;
    const luaQueue = new RedisQueue({ client, spec, clock: clock.now, maxDead });
    const memoryQueue = new MemoryQueue({ spec, clock: clock.now, maxDead });
    return {
      oracle,
      lua: { name: 'lua', admit: undefined, queue: luaQueue, enqueue: (input) => luaQueue.enqueue(input), tokens: tokens() },
      memory: { name: 'memory', admit: undefined, queue: memoryQueue, enqueue: (input) => memoryQueue.enqueue(input), tokens: tokens() },
    };
  }
  const redisStore = new RedisStore({ client, clock: clock.now });
  const memoryStore = new MemoryStore({ clock: clock.now });
  const lua = redisStore.bind(spec);
  const memory = memoryStore.bind(spec);
  // another process's options under the same name (the drift operation)
  const otherSpec = { ...spec, limit: spec.limit + 1 };
  return {
    oracle,
    lua: {
      name: 'lua',
      ...admission(lua),
      queue: lua.queue,
      enqueue: (input) => lua.queue.enqueue(input),
      tokens: tokens(),
      other: redisStore.bind(otherSpec),
    },
    memory: {
      name: 'memory',
      ...admission(memory),
      queue: memory.queue,
      enqueue: (input) => memory.queue.enqueue(input),
      tokens: tokens(),
      other: memoryStore.bind(otherSpec),
    },
  };
}

const admission = (
  store: LimiterStore,
): Pick<
  Side,
  'admit' | 'peek' | 'reset' | 'release' | 'settle' | 'report' | 'configDrift' | 'setOverride' | 'getOverride' | 'deleteOverride' | 'listOverrides'
> => ({
  admit: store.admit,
  peek: store.peek,
  reset: store.reset,
  release: store.release,
  settle: store.settle,
  report: store.report,
  configDrift: store.configDrift,
  setOverride: store.setOverride,
  getOverride: store.getOverride,
  deleteOverride: store.deleteOverride,
  listOverrides: store.listOverrides,
});

const show = (o: Outcome): string => ('threw' in o ? 'threw' : JSON.stringify(o.value));

export interface RunReport {
  /** What each step returned (the same on both sides). */
  readonly results: unknown[];
  /** Script calls the oracle ran and the time they took (ms). */
  readonly calls: number;
  readonly busyMs: number;
  /** Redis keys that expired on the way (the limiter state after a long gap). */
  readonly expiredKeys: number;
  /** The scripts that ran (defineCommand names, bl_<file>_v1_<sha8>). */
  readonly commands: ReadonlySet<string>;
}

/** Runs the steps on both sides; throws at the first observable difference. */
export async function runBoth(spec: LimiterSpec, steps: readonly Timed[], setup: Setup = {}): Promise<RunReport> {
  const clock = new ManualClock();
  const { lua, memory, oracle } = await sides(spec, clock, setup);
  const seen = new Set<string>();
  const leases = new Set<string>();
  const reservations = new Set<string>();
  const world: World = { ids: [], leases: [], reservations: [], advance: (ms) => clock.advance(ms), spec };
  const results: unknown[] = [];
  const same = async (label: string, run: (side: Side) => Promise<unknown>): Promise<void> => {
    const start = clock.ms;
    // a check that saw another config starts a call of its own: settled with the step, on both sides
    const a = await settle(() => run(lua).finally(() => settleDrift(lua)));
    const end = clock.ms;
    clock.ms = start; // the same instants for the other side
    const b = await settle(() => run(memory).finally(() => settleDrift(memory)));
    clock.ms = end;
    if (!isDeepStrictEqual(a, b)) throw new Error(`${label} at t+${clock.ms - new ManualClock().ms}ms:\n  lua    ${show(a)}\n  memory ${show(b)}`);
    results.push('value' in a ? a.value : a);
    const before = seen.size;
    const leasesBefore = leases.size;
    const reservationsBefore = reservations.size;
    collectIds('value' in a ? a.value : undefined, seen, leases, reservations);
    if (seen.size > before) world.ids.splice(0, world.ids.length, ...seen);
    if (leases.size > leasesBefore) world.leases.splice(0, world.leases.length, ...leases);
    if (reservations.size > reservationsBefore) world.reservations.splice(0, world.reservations.length, ...reservations);
  };
  for (const [i, { gapMs, step }] of steps.entries()) {
    clock.advance(gapMs);
    if (step.admits && !lua.admit) {
      results.push(undefined);
      continue;
    }
    await same(`step ${i}: ${step.label}`, (side) => step.run(side, world));
  }
  await same('final counts', (side) => side.queue.counts());
  for (const id of world.ids) await same(`final getJob ${id}`, (side) => side.queue.getJob(id));
  return { results, calls: oracle.calls, busyMs: oracle.busyMs, expiredKeys: oracle.model.expired, commands: oracle.commandsRun };
}
