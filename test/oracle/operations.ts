/**
 * The operations the differential tests run on both stores: one entry per store operation (an arbitrary for
 * its arguments and how to run it on one side). A step's result is what a caller can observe, normalised
 * where the two backends legitimately differ (claim tokens are opaque and differ in form: each side acks
 * with its own). Adding an operation is one entry here.
 */
import fc from 'fast-check';
import type { LimiterSpec } from '../../src/types';
import { ruleLanes } from '../../src/redis/plan-lanes';
import type { EnqueueInput, EnqueueResult } from '../../src/types';
import type { ClaimedJob, QueueStore } from '../../src/types';
import type { AdaptiveStatus, AdmitInput, Decision, GroupStatus, PeekInput, ReportInput, SettleInput, SettleResult } from '../../src/types';
import type { ConfigDrift, LimiterStore } from '../../src/types';
import type { OverrideInput, OverrideSettings, OverrideWrite } from '../../src/types';
import { resolveOverride } from '../../src/limiter/override-options';

/** One backend under test. */
export interface Side {
  readonly name: string;
  /** Absent when the queue runs on its own (no admission in front of it); so are peek and reset. */
  readonly admit: ((input: AdmitInput) => Promise<Decision>) | undefined;
  readonly peek?: ((input: PeekInput) => Promise<GroupStatus>) | undefined;
  readonly reset?: ((group: string) => Promise<boolean>) | undefined;
  readonly queue: QueueStore;
  /** enqueue: a queue method (MemoryQueue, RedisQueue), not one of the bound store's. */
  readonly enqueue: (input: EnqueueInput) => Promise<EnqueueResult>;
  /** Each job's claim tokens on this side, oldest first. */
  readonly tokens: Map<string, string[]>;
  /** release.lua / MemoryStore release (absent when the queue runs on its own). */
  readonly release?: ((lease: string) => Promise<boolean>) | undefined;
  /** settle.lua / MemoryStore settle (absent when the queue runs on its own). */
  readonly settle?: ((input: SettleInput) => Promise<SettleResult>) | undefined;
  /** report.lua / MemoryStore report (absent without an adaptive limit). */
  readonly report?: ((input: ReportInput) => Promise<AdaptiveStatus>) | undefined;
  /** What the limiter's checks saw of other options (config-drift.lua, config-check.lua). */
  readonly configDrift?: ConfigDrift | undefined;
  /** Another process's binding: the same name and store, another `limit` (absent when the queue runs on its own). */
  readonly other?: LimiterStore | undefined;
  /** override-set.lua, override-get.lua, override-delete.lua, override-list.lua (absent when the queue runs on its own). */
  readonly setOverride?: ((input: OverrideInput) => Promise<OverrideWrite>) | undefined;
  readonly getOverride?: ((group: string) => Promise<string | undefined>) | undefined;
  readonly deleteOverride?: ((group: string) => Promise<boolean>) | undefined;
  readonly listOverrides?: ((cursor: string, count: number) => Promise<Array<[string, string]>>) | undefined;
}

/** Job ids seen so far (the same on both sides, or a step has already failed), and the shared clock. */
export interface World {
  readonly ids: string[];
  /** Concurrency leases handed out so far (the same on both sides, or a step has already failed). */
  readonly leases: string[];
  /** Reservations handed out so far (the same on both sides, or a step has already failed). */
  readonly reservations: string[];
  /** Moves the clock within a step (the runner rewinds it before the other side runs the step). */
  advance(ms: number): void;
  /** The limiter under test (its plans name an override's plan). */
  readonly spec?: LimiterSpec;
}

/** A generated step: run it on one side; its label shows in fast-check's counterexample. */
export interface Step {
  readonly label: string;
  readonly admits: boolean;
  run(side: Side, world: World): Promise<unknown>;
}

interface Operation<A> {
  readonly weight: number;
  /** Needs the limiter's admission (skipped when the queue runs on its own). */
  readonly admits?: boolean;
  args(spec: LimiterSpec): fc.Arbitrary<A>;
  run(side: Side, args: A, world: World): Promise<unknown>;
}

const GROUPS = ['g0', 'g1', 'g2', 'g3', 'g4', 'a b', 'é/"x', '群'];
const PAYLOADS = ['{"n":1}', '"x/y"', '[1,2,{"a":null}]', '{"s":"\\u00e9\\n"}', '0.5'];

const group = fc.oneof({ arbitrary: fc.constantFrom(...GROUPS.slice(0, 3)), weight: 3 }, { arbitrary: fc.constantFrom(...GROUPS), weight: 1 });
const weight = fc.oneof({ arbitrary: fc.constant(1), weight: 3 }, { arbitrary: fc.integer({ min: 1, max: 4 }), weight: 1 });
const costOf = (spec: LimiterSpec) =>
  fc.oneof({ arbitrary: fc.constant(1), weight: 3 }, { arbitrary: fc.integer({ min: 1, max: Math.max(1, spec.burst) }), weight: 1 });
const idem: fc.Arbitrary<string | undefined> = fc.option(fc.constantFrom('k1', 'k2', 'k3'), { nil: undefined, freq: 3 });
const deferArgs = fc.record({
  payload: fc.constantFrom(...PAYLOADS),
  idempotencyKey: idem,
  maxBacklog: fc.integer({ min: 1, max: 6 }),
  maxDeferMs: fc.oneof(fc.integer({ min: 0, max: 2000 }), fc.constant(1e9)),
});
/** A check's plan: none, or one of the spec's (each plan's rules are a config block of their own on Redis). */
const planOf = (spec: LimiterSpec): fc.Arbitrary<string | undefined> =>
  spec.plans ? fc.option(fc.constantFrom(...spec.plans.keys()), { nil: undefined, freq: 2 }) : fc.constant(undefined);
/** A check's class: none ('default'), or one of the spec's (each class is a config block of its own on Redis). */
const classOf = (spec: LimiterSpec): fc.Arbitrary<string | undefined> =>
  spec.classes ? fc.option(fc.constantFrom(...spec.classes.keys()), { nil: undefined, freq: 3 }) : fc.constant(undefined);
/**
 * A turn's checks as the RedisStore sends them: one call per plan rule set (src/redis/plan-lanes.ts), the lanes
 * in the order of their first check. The batch is given to both sides in that order (the checks of one turn are
 * concurrent: any order is a valid one), so the lanes' calls are compared with the same checks one by one.
 */
const inLaneOrder = <I extends AdmitInput>(spec: LimiterSpec, inputs: I[]): I[] => {
  const laneOf = ruleLanes(spec).laneOf;
  if (laneOf === undefined) return inputs;
  const lanes = new Map<number, I[]>();
  for (const input of inputs) lanes.set(laneOf(input), [...(lanes.get(laneOf(input)) ?? []), input]);
  return [...lanes.values()].flat();
};
/** A request-concurrency cap on a third of the checks (0: a cap of none, as a plan without one sends). */
const concurrency: fc.Arbitrary<number | undefined> = fc.option(fc.integer({ min: 0, max: 3 }), { nil: undefined, freq: 2 });
const admitArgs = (spec: LimiterSpec) =>
  fc.record(
    { group, weight, cost: costOf(spec), plan: planOf(spec), class: classOf(spec), concurrency },
    { requiredKeys: ['group', 'weight', 'cost', 'plan'] },
  );
const deferringArgs = (spec: LimiterSpec) =>
  fc
    .record(
      { group, weight, cost: costOf(spec), plan: planOf(spec), class: classOf(spec), defer: deferArgs, concurrency },
      { requiredKeys: ['group', 'weight', 'cost', 'plan', 'defer'] },
    )
    .map(({ defer, ...input }) => ({ ...input, defer: { type: 't', ...defer } }));
const pick = fc.nat({ max: 40 });
const keepMs = fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 300 }), fc.constant(86_400_000));

const jobId = (world: World, at: number): string => (world.ids.length === 0 ? '1-000001' : world.ids[at % world.ids.length]!);

/** The side's token for a job: its latest claim's, its first (stale once claimed again), or none at all. */
function tokenOf(side: Side, id: string, which: 'latest' | 'first' | 'none'): string {
  const tokens = side.tokens.get(id);
  if (!tokens || which === 'none') return '0:0 none';
  return which === 'first' ? tokens[0]! : tokens[tokens.length - 1]!;
}
const which = fc.constantFrom('latest', 'latest', 'latest', 'first', 'none');

/** Claims as the caller sees them, minus the opaque token (kept per side for its acks). */
function claimed(side: Side, jobs: readonly ClaimedJob[]): Array<Omit<ClaimedJob, 'token'>> {
  return jobs.map(({ token, ...job }) => {
    side.tokens.set(job.id, [...(side.tokens.get(job.id) ?? []), token]);
    return job;
  });
}

const admitOf = (side: Side): ((input: AdmitInput) => Promise<Decision>) => {
  if (!side.admit) throw new Error(`${side.name} has no admission`);
  return side.admit;
};

const peekOf = (side: Side): ((input: PeekInput) => Promise<GroupStatus>) => {
  if (!side.peek) throw new Error(`${side.name} has no admission`);
  return side.peek;
};
const resetOf = (side: Side): ((group: string) => Promise<boolean>) => {
  if (!side.reset) throw new Error(`${side.name} has no admission`);
  return side.reset;
};

const op = <A>(o: Operation<A>): Operation<A> => o;

/** Waits for the config-check calls under way (each side's in its own microtask hops). */
export async function settleDrift(side: Side): Promise<void> {
  await side.configDrift?.mismatch();
  await side.other?.configDrift?.mismatch();
}
/** An override's settings for this limiter: a block, a weight, rules (none, or one or two), a cap, a job cap, a plan. */
const overrideSettings = (spec: LimiterSpec): fc.Arbitrary<OverrideSettings> =>
  fc
    .record(
      {
        blocked: fc.constant(true as const),
        weight: fc.integer({ min: 1, max: 6 }),
        rules: fc.oneof(
          fc.constant([]),
          fc.uniqueArray(
            fc.record({
              name: fc.constantFrom('o0', 'o1', 'r0'),
              limit: fc.integer({ min: 1, max: 20 }),
              windowMs: fc.integer({ min: 20, max: 20_000 }),
              algorithm: fc.constantFrom('token-bucket', 'sliding-window', 'fixed-window') as fc.Arbitrary<'token-bucket'>,
            }),
            { selector: (r) => r.name, minLength: 1, maxLength: 2 },
          ),
        ),
        concurrency: fc.integer({ min: 1, max: 3 }),
        groupConcurrency: fc.integer({ min: 1, max: 2 }),
        ...(spec.plans ? { plan: fc.constantFrom(...spec.plans.keys()) } : {}),
      },
      { requiredKeys: [] },
    )
    .filter((s) => Object.keys(s).length > 0)
    // a block a fifth as often as anything else, so the other settings decide often enough
    .filter((s) => s.blocked === undefined || Object.keys(s).length > 1 || s.weight === undefined);

export const OPERATIONS = {
  /** admit.lua (a check alone in its event-loop turn). */
  admit: op({ weight: 6, admits: true, args: admitArgs, run: (side, input) => admitOf(side)(input) }),
  /** admit-many.lua: checks made in one turn share one call. */
  admitMany: op({
    weight: 2,
    admits: true,
    args: (spec) => fc.array(admitArgs(spec), { minLength: 2, maxLength: 5 }).map((inputs) => inLaneOrder(spec, inputs)),
    run: (side, inputs) => Promise.all(inputs.map((input) => admitOf(side)(input))),
  }),
  /** A dense run of arrivals (admit.lua each, a few ms apart): where the admission constants show. */
  arrivals: op({
    weight: 3,
    admits: true,
    // two or three groups, so each sends several requests while the others are active
    args: (spec) =>
      fc.shuffledSubarray(GROUPS.slice(0, 4), { minLength: 2, maxLength: 3 }).chain((pool) =>
        fc.array(
          fc.record({
            dtMs: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 3 })),
            input: fc.record({ group: fc.constantFrom(...pool), weight: fc.constant(1), cost: costOf(spec) }),
          }),
          { minLength: 5, maxLength: 40 },
        ),
      ),
    run: async (side, arrivals, world) => {
      const out: Decision[] = [];
      for (const { dtMs, input } of arrivals) {
        world.advance(dtMs);
        out.push(await admitOf(side)(input));
      }
      return out;
    },
  }),
  /** More groups than one trim page (FS_TRIM_PAGE = 100) at once: after a long gap they go idle together. */
  crowd: op({
    weight: 1,
    admits: true,
    args: () => fc.integer({ min: 101, max: 140 }),
    run: async (side, n) => {
      const out: Decision[] = [];
      for (let i = 0; i < n; i++) out.push(await admitOf(side)({ group: `c${i}`, weight: 1 + (i % 3), cost: 1 }));
      return out;
    },
  }),
  /** peek.lua: a group's state, writing nothing (a write would show in the steps after it). */
  peek: op({
    weight: 3,
    admits: true,
    args: (spec) => fc.record({ group, weight, class: classOf(spec) }, { requiredKeys: ['group', 'weight'] }),
    run: (side, input) => peekOf(side)(input),
  }),
  /** override-set.lua: a group's override (with a ttl or without), under a small cap so the cap is met. */
  setOverride: op({
    weight: 10,
    admits: true,
    args: (spec) =>
      fc.record({
        group,
        settings: overrideSettings(spec),
        ttlMs: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 3000 })),
        maxOverrides: fc.integer({ min: 1, max: 4 }),
        reason: fc.option(fc.constantFrom('upgrade', 'abuse "x"/é'), { nil: undefined }),
      }),
    run: (side, { group: g, settings, ttlMs, maxOverrides, reason }, world) => {
      const { text, spanMs } = resolveOverride(settings, reason === undefined ? { ttlMs } : { ttlMs, reason }, {
        plans: world.spec?.plans,
        maxWeight: 1000,
      });
      return side.setOverride!({ group: g, settings: text, ttlMs, maxOverrides, spanMs });
    },
  }),
  /** override-get.lua. */
  getOverride: op({ weight: 1, admits: true, args: () => group, run: (side, g) => side.getOverride!(g) }),
  /** override-delete.lua. */
  deleteOverride: op({ weight: 1, admits: true, args: () => group, run: (side, g) => side.deleteOverride!(g) }),
  /** override-list.lua: a page after a cursor. */
  listOverrides: op({
    weight: 1,
    admits: true,
    args: () => fc.record({ cursor: fc.oneof(fc.constant(''), group), count: fc.integer({ min: 1, max: 5 }) }),
    run: (side, { cursor, count }) => side.listOverrides!(cursor, count),
  }),
  /** reset.lua: forgets one group (its jobs stay). */
  reset: op({ weight: 1, admits: true, args: () => group, run: (side, g) => resetOf(side)(g) }),
  /** report.lua: outcomes for the adaptive limit, a few ms to an interval apart (absent without `adaptive`). */
  report: op({
    weight: 3,
    admits: true,
    args: () =>
      fc.array(
        fc.record({
          dtMs: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 50 }), fc.integer({ min: 0, max: 2500 })),
          outcome: fc.constantFrom('ok', 'ok', 'throttled', 'read') as fc.Arbitrary<ReportInput['outcome']>,
          retryAfterMs: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 3000 })),
        }),
        { minLength: 1, maxLength: 8 },
      ),
    run: async (side, reports, world) => {
      if (!side.report) return null;
      const out: AdaptiveStatus[] = [];
      for (const { dtMs, ...input } of reports) {
        world.advance(dtMs);
        out.push(await side.report(input));
      }
      return out;
    },
  }),
  /**
   * Another process's options under the limiter's name: checks from it and from this limiter, seconds apart
   * (the stored fingerprint changes hands: config-drift.lua), then what each saw (config-check.lua names it).
   */
  drift: op({
    weight: 1,
    admits: true,
    args: (spec) =>
      fc.array(
        fc.record({
          fromOther: fc.boolean(),
          dtMs: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 400 }), fc.integer({ min: 1000, max: 12_000 })),
          input: admitArgs(spec),
        }),
        { minLength: 1, maxLength: 8 },
      ),
    run: async (side, checks, world) => {
      if (!side.other) return null;
      const out: unknown[] = [];
      for (const { fromOther, dtMs, input } of checks) {
        world.advance(dtMs);
        out.push(await (fromOther ? side.other.admit(input) : admitOf(side)(input)));
        // a check that saw the other config starts a call of its own: settled before the next check, on both sides
        await settleDrift(side);
      }
      out.push(await side.configDrift?.mismatch(), await side.other.configDrift?.mismatch());
      return out;
    },
  }),
  /** admit-defer.lua. */
  admitDefer: op({ weight: 6, admits: true, args: deferringArgs, run: (side, input) => admitOf(side)(input) }),
  /** admit-defer-many.lua. */
  admitDeferMany: op({
    weight: 2,
    admits: true,
    args: (spec) => fc.array(deferringArgs(spec), { minLength: 2, maxLength: 5 }).map((inputs) => inLaneOrder(spec, inputs)),
    run: (side, inputs) => Promise.all(inputs.map((input) => admitOf(side)(input))),
  }),
  /** Many capped checks, a token's time apart: more leases than one sweep page (CC_SWEEP = 10) to expire together. */
  slots: op({
    weight: 1,
    admits: true,
    args: (spec) =>
      fc.record({
        n: fc.integer({ min: 11, max: 30 }),
        dtMs: fc.constant(Math.ceil(spec.windowMs / spec.limit) + 1),
        // then, often, until they have all expired, and a check of each group (the sweeps, page by page)
        expireMs: fc.option(fc.constant((spec.concurrencyLeaseMs ?? 60_000) + 1), { nil: undefined }),
      }),
    run: async (side, { n, dtMs, expireMs }, world) => {
      const out: Decision[] = [];
      const admit = (group: string) => admitOf(side)({ group, weight: 1, cost: 1, concurrency: 5 });
      for (let i = 0; i < n; i++) {
        world.advance(dtMs);
        out.push(await admit(GROUPS[i % GROUPS.length]!));
      }
      if (expireMs === undefined) return out;
      world.advance(expireMs);
      for (const g of GROUPS) out.push(await admit(g));
      return out;
    },
  }),
  /** release.lua: a lease handed out (released before, expired, or held), or one never handed out. */
  release: op({
    weight: 2,
    admits: true,
    args: () => fc.option(pick, { nil: undefined, freq: 6 }),
    run: (side, at, world) => {
      const lease = at === undefined || world.leases.length === 0 ? '1-1:g0' : world.leases[at % world.leases.length]!;
      return side.release!(lease);
    },
  }),
  /** reserve.lua: a check that, when allowed, records a reservation (half of them with a concurrency cap). */
  reserve: op({
    weight: 3,
    admits: true,
    args: admitArgs,
    run: (side, input) => admitOf(side)({ ...input, reserve: true }),
  }),
  /**
   * settle.lua: a reservation handed out (settled before, lapsed, or open), or one never handed out, for less
   * than its cost, as much, or more; sometimes after a while.
   */
  settle: op({
    weight: 3,
    admits: true,
    args: (spec) =>
      fc.record({
        at: fc.option(pick, { nil: undefined, freq: 8 }),
        actual: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 2 * spec.burst + 2 })),
        waitMs: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: spec.windowMs })),
      }),
    run: (side, { at, actual, waitMs }, world) => {
      world.advance(waitMs);
      const reservation = at === undefined || world.reservations.length === 0 ? '1-1' : world.reservations[at % world.reservations.length]!;
      return side.settle!({ reservation, actual });
    },
  }),
  enqueue: op({
    weight: 4,
    args: (spec) =>
      fc
        .record(
          {
            group,
            weight,
            cost: costOf(spec),
            type: fc.constant('t'),
            payload: fc.constantFrom(...PAYLOADS),
            idempotencyKey: idem,
            maxBacklog: fc.integer({ min: 1, max: 6 }),
            delayMs: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 3000 })),
            maxDeferMs: fc.oneof(fc.integer({ min: 0, max: 3000 }), fc.constant(1e9)),
            groupConcurrency: fc.option(fc.integer({ min: 1, max: 2 }), { nil: undefined }),
            maxAttempts: fc.option(fc.integer({ min: 1, max: 3 }), { nil: undefined }),
            // a job of a plan: a claim decides it under that plan's rules
            plan: planOf(spec),
          },
          { requiredKeys: ['group', 'weight', 'cost', 'type', 'payload', 'maxBacklog', 'delayMs', 'maxDeferMs'] },
        )
        // a job of odd cost settles: its claim reserves (the reservation joins the settle op's); derived, so the
        // runs draw as before and the mutation checks' seeds keep meeting their mutations
        .map((input) => ({ ...input, settle: input.cost % 2 === 1 }))
        // with classes, a job of even weight (and cost) is of the first class: its claim decides it there
        .map((input) => (spec.classes && !input.settle && input.weight % 2 === 0 ? { ...input, class: [...spec.classes.keys()][0]! } : input)),
    run: (side, input) => side.enqueue(input),
  }),
  /** cancel.lua. */
  cancel: op({ weight: 1, args: () => pick, run: (side, at, world) => side.queue.cancel(jobId(world, at)) }),
  /** group-counts.lua. */
  groupCounts: op({ weight: 1, args: () => group, run: (side, g) => side.queue.groupCounts(g) }),
  dispatch: op({
    weight: 5,
    args: () =>
      fc.record({
        readyMax: fc.integer({ min: 1, max: 8 }),
        moveMax: fc.integer({ min: 1, max: 8 }),
        promoteMax: fc.integer({ min: 1, max: 8 }),
        scanMax: fc.integer({ min: 1, max: 16 }),
      }),
    run: (side, options) => side.queue.dispatch(options),
  }),
  claim: op({
    weight: 5,
    args: () => fc.record({ leaseMs: fc.integer({ min: 1, max: 3000 }), max: fc.integer({ min: 1, max: 4 }) }),
    run: async (side, { leaseMs, max }) => {
      const r = await side.queue.claimMany(leaseMs, max);
      return { claimed: claimed(side, r.claimed), wakeMs: r.wakeMs };
    },
  }),
  complete: op({
    weight: 3,
    args: () => fc.record({ at: pick, which, result: fc.option(fc.constant('{"ok":"a/b"}'), { nil: undefined }), keepMs }),
    run: (side, a, world) => {
      const id = jobId(world, a.at);
      return side.queue.complete(id, tokenOf(side, id, a.which), a.result, a.keepMs);
    },
  }),
  /** complete-claim.lua alone, complete-claim-many.lua when several acks share a turn. */
  completeAndClaim: op({
    weight: 3,
    args: () =>
      fc.array(fc.record({ at: pick, which, keepMs, leaseMs: fc.integer({ min: 1, max: 3000 }), max: fc.integer({ min: 1, max: 3 }) }), {
        minLength: 1,
        maxLength: 3,
      }),
    run: async (side, acks, world) => {
      const replies = await Promise.all(
        acks.map((a) => {
          const id = jobId(world, a.at);
          return side.queue.completeAndClaim(id, tokenOf(side, id, a.which), undefined, a.keepMs, a.leaseMs, a.max);
        }),
      );
      return replies.map((r) => ({ completed: r.completed, claimed: claimed(side, r.claimed), wakeMs: r.wakeMs }));
    },
  }),
  fail: op({
    weight: 3,
    args: () => fc.record({ at: pick, which, delayMs: fc.integer({ min: 0, max: 2000 }), cap: fc.integer({ min: 0, max: 3 }), snooze: fc.boolean() }),
    run: (side, a, world) => {
      const id = jobId(world, a.at);
      return side.queue.fail(
        id,
        tokenOf(side, id, a.which),
        a.snooze
          ? { kind: 'snooze', delayMs: a.delayMs, maxSnoozes: a.cap }
          : { kind: 'error', error: 'boom/"x"', delayMs: a.delayMs, maxAttempts: a.cap },
      ); // 0: a permanent error
    },
  }),
  extendLease: op({
    weight: 1,
    args: () => fc.record({ at: pick, which, leaseMs: fc.integer({ min: 1, max: 3000 }) }),
    run: (side, a, world) => {
      const id = jobId(world, a.at);
      return side.queue.extendLease(id, tokenOf(side, id, a.which), a.leaseMs);
    },
  }),
  reclaim: op({
    weight: 2,
    args: () => fc.record({ maxStalls: fc.integer({ min: 0, max: 2 }), max: fc.integer({ min: 1, max: 6 }) }),
    run: (side, a) => side.queue.reclaimExpired(a.maxStalls, a.max),
  }),
  getJob: op({ weight: 2, args: () => pick, run: (side, at, world) => side.queue.getJob(jobId(world, at)) }),
  counts: op({ weight: 1, args: () => fc.constant(null), run: (side) => side.queue.counts() }),
  listDead: op({
    weight: 1,
    args: () => fc.record({ offset: fc.nat({ max: 3 }), count: fc.integer({ min: 1, max: 5 }) }),
    run: (side, a) => side.queue.listDead(a.offset, a.count),
  }),
  retryDead: op({ weight: 1, args: () => pick, run: (side, at, world) => side.queue.retryDead(jobId(world, at)) }),
  removeDead: op({ weight: 1, args: () => pick, run: (side, at, world) => side.queue.removeDead(jobId(world, at)) }),
  dispatcherLease: op({
    weight: 1,
    args: () => fc.record({ owner: fc.constantFrom('a', 'b'), ttlMs: fc.integer({ min: 1, max: 2000 }) }),
    run: (side, a) => side.queue.acquireDispatcherLease(a.owner, a.ttlMs),
  }),
};

export type OperationName = keyof typeof OPERATIONS;

/** Steps drawn from the named operations, with their arguments for this limiter. */
export function stepArb(spec: LimiterSpec, names: readonly OperationName[]): fc.Arbitrary<Step> {
  return fc.oneof(
    ...names.map((name) => {
      const o = OPERATIONS[name] as unknown as Operation<unknown>;
      return {
        weight: o.weight,
        arbitrary: o.args(spec).map((args): Step => ({
          label: `${name} ${JSON.stringify(args)}`,
          admits: o.admits === true,
          run: (side, world) => o.run(side, args, world),
        })),
      };
    }),
  );
}

type ArgsOf<N extends OperationName> = (typeof OPERATIONS)[N] extends Operation<infer A> ? A : never;

/** One step written by hand (the regression tests). */
export function stepOf<N extends OperationName>(name: N, args: ArgsOf<N>): Step {
  const o = OPERATIONS[name] as unknown as Operation<ArgsOf<N>>;
  return { label: `${name} ${JSON.stringify(args)}`, admits: o.admits === true, run: (side, world) => o.run(side, args, world) };
}
