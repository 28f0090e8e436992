/**
 * RedisStore over ioredis (Redis, Cluster, or Sentinel through ioredis options). Checks made in one event-loop
 * turn share one script call (lua/admit-many.lua; a lone check uses lua/admit.lua; see src/redis/script-batcher.ts); a
 * check that may be deferred is one call of lua/admit-defer.lua. Time comes from redis TIME unless a test
 * clock is injected. All keys of a limiter share one hash tag, so they live in one Cluster slot.
 */
import { inClass, toDecision, toGroupStatus, type AdmitReply } from '../core/decision';
import { OVERFLOW_GROUP } from '../core/fair-share-state';
import { ConfigError, StoreError } from '../errors';
import { refusesWrites } from '../util/store-call';
import type {
  AdmitInput,
  Clock,
  Decision,
  GroupStatus,
  LimiterSpec,
  LimiterStore,
  OverrideInput,
  PeekInput,
  ReportInput,
  SettleInput,
  SettleResult,
  Store,
} from '../types';
import { planOfReservation, reservationHoldMs } from '../core/settle';
import { allKeys, limiterKeys, type LimiterKeys } from './keys';
import { firstConnection, readRedisInfo, redisProbe, redisWriteProbe, type HealthClient } from './redis-health';
import { withDeferral } from '../queue/defer-decision';
import type { EnqueueResult } from '../types';
import { RedisQueue, readOnlyError } from './redis-queue';
import { rulesOfCheck } from '../core/plan-rules';
import { laneBatcher, ruleLanes } from './plan-lanes';
import { ScriptBatcher } from './script-batcher';
import { openDurableWrites } from './durable-writes';
import { STATUS, admitManyScript, admitScript, type Admission, type Deferral } from './lua-sources.generated';
import {
  admitCommand,
  admitDeferCommand,
  admitDeferManyCommand,
  admitManyCommand,
  admissionConfigBlock,
  configCheckCommand,
  overrideCommands,
  peekCommand,
  releaseCommand,
  reportCommand,
  reserveCommand,
  resetCommand,
  settleCommand,
  type DeferringInput,
  type Lane,
  type RedisClient,
} from './admission-scripts';
import { NAME_PATTERN, func, integer, optional, refuse } from '../util/validate';
import { configIdentity } from '../core/config-drift';
import { createConfigWatch } from '../core/config-watch';
import { defineScripts, loadScript } from './script-loader';

export interface RedisStoreOptions {
  /** An ioredis `Redis` or `Cluster` client. The store never closes it. */
  readonly client: RedisClient;
  /** Key prefix inside the hash tag `{<prefix>:<name>}`. @defaultValue `'bl'` */
  readonly prefix?: string;
  /**
   * Most checks sent in one script call: the checks of one limiter made in the same event-loop turn go
   * together, which cuts Redis CPU and commands per check several-fold under load. 1 sends each on its own.
   * @defaultValue `64`
   */
  readonly maxBatch?: number;
  /** Tests only: a clock (ms) passed to the scripts instead of redis TIME. */
  readonly clock?: Clock;
}

const DEFAULT_MAX_BATCH = 64;

const MAX_BATCH_LIMIT = 1000;

/** Keep the caller's string (bytes round-trip through UTF-8); only the overflow group is renamed. */
function ownGroup(reply: AdmitReply, input: AdmitInput | PeekInput): AdmitReply {
  return reply.group === OVERFLOW_GROUP || reply.group === input.group ? reply : { ...reply, group: input.group };
}

const deferring = (input: AdmitInput): input is DeferringInput => input.defer !== undefined;

/** What admit-defer.lua's deferral step did; undefined when the check was admitted (no job). */
function deferOutcome(d: Deferral): EnqueueResult | undefined {
  switch (d.deferStatus) {
    case STATUS.ADMITTED:
      return undefined;
    case STATUS.WRITTEN:
      return { status: 'written', id: d.jobId, runAt: d.runAtMs };
    case STATUS.DUPLICATE:
      return { status: 'duplicate', id: d.jobId, runAt: d.runAtMs };
    case STATUS.BACKLOG_FULL:
      return { status: 'backlog-full' };
    case STATUS.DEFER_HORIZON:
      return { status: 'defer-horizon' };
  }
}

export class RedisStore implements Store {
  readonly client: RedisClient;
  readonly prefix: string;
  private readonly clock: Clock | undefined;
  private readonly maxBatch: number;

  constructor(options: RedisStoreOptions) {
    if (typeof (options as unknown as RedisClient | undefined)?.defineCommand === 'function') {
      throw new ConfigError('ERR_BL_CLIENT', 'Expected options with a `client`, got an ioredis client itself: pass `new RedisStore({ client })`');
    }
    const client: unknown = options?.client;
    if (typeof client !== 'object' || client === null || typeof (client as RedisClient).defineCommand !== 'function') {
      refuse('client', 'an ioredis Redis or Cluster', client);
    }
    const prefix = options.prefix ?? 'bl';
    if (typeof prefix !== 'string' || !NAME_PATTERN.test(prefix)) refuse('prefix', '1–64 letters, digits or ._-:/', options.prefix);
    func('clock', options.clock, optional);
    const maxBatch = integer('maxBatch', options.maxBatch, { max: MAX_BATCH_LIMIT, fallback: DEFAULT_MAX_BATCH });
    this.client = options.client;
    this.prefix = prefix;
    this.clock = options.clock;
    this.maxBatch = maxBatch;
    defineScripts(this.client, [loadScript(admitScript), loadScript(admitManyScript)]);
  }

  /** The keys of one limiter (the queue store builds on the same names). */
  keys(name: string): LimiterKeys {
    return limiterKeys(this.prefix, name);
  }

  /** Time passed to scripts in ms, to the µs (a test clock's fraction); 0 = the script reads redis TIME. */
  nowMs(): number {
    return this.clock ? Math.floor(this.clock() * 1000) / 1000 : 0;
  }

  /** The limiter's admission and its queue (RedisQueue over the same keys). */
  bind(spec: LimiterSpec): LimiterStore {
    const keys = this.keys(spec.name);
    // one config block per lane: the limiter's rules, then each plan's that differ (./plan-lanes.ts), each
    // starting with the limiter's fingerprint (docs/operations.md "Config drift")
    const lanes = ruleLanes(spec);
    const { fingerprint, description } = configIdentity(spec);
    const configs = lanes.rules.map((rules, i): Lane => ({
      config: admissionConfigBlock(fingerprint, spec, rules, lanes.classes?.[i]),
      rules: rules?.length ?? 0,
    }));
    const configCheck = configCheckCommand(this.client, keys, fingerprint, description);
    const configDrift = createConfigWatch({
      description,
      now: this.clock ?? Date.now,
      check: (other) => configCheck(this.nowMs(), other),
    });
    // every admission reply says what its check saw of the stored fingerprint ('' agrees: nothing to do)
    const seen = <R extends { readonly config: string }>(reply: R): R => {
      configDrift.saw(reply.config);
      return reply;
    };
    const leaseMs = spec.concurrencyLeaseMs;
    const checks = laneBatcher<AdmitInput, Admission, Lane>(
      lanes,
      configs,
      (lane) => admitCommand(this.client, keys, lane, leaseMs),
      (lane) => admitManyCommand(this.client, keys, lane, leaseMs),
      this.maxBatch,
    );
    const deferringChecks = laneBatcher<DeferringInput, Deferral, Lane>(
      lanes,
      configs,
      (lane) => admitDeferCommand(this.client, keys, lane, leaseMs),
      (lane) => admitDeferManyCommand(this.client, keys, lane, leaseMs),
      this.maxBatch,
    );
    // the releases of one turn share a call too (release.lua takes any number)
    const releaseMany = releaseCommand(this.client, keys);
    const releases = new ScriptBatcher<string, boolean>((now, lease) => releaseMany(now, [lease]).then((r) => r[0]!), releaseMany, this.maxBatch);
    const queue = new RedisQueue({ client: this.client, spec, prefix: this.prefix, ...(this.clock ? { clock: this.clock } : {}) });
    const failedTo =
      (what: string) =>
      (error: unknown): never => {
        if (error instanceof StoreError) throw error;
        if (refusesWrites(error)) throw readOnlyError(spec.name, error);
        throw new StoreError('ERR_BL_STORE_FAILED', `Redis ${what} failed for limiter ${spec.name}: ${(error as Error)?.message ?? String(error)}`, {
          cause: error,
        });
      };
    const failed = failedTo('admit');
    // reserve.lua (checks with `reserve`, one call each: they are not batched) and settle.lua, per lane
    const holdMs = reservationHoldMs(spec);
    const reserves = configs.map((lane) => reserveCommand(this.client, keys, lane, leaseMs, holdMs));
    const settles = configs.map((lane) => settleCommand(this.client, keys, lane));
    const planLane = (plan: string | undefined): number => lanes.laneOf?.({ plan }) ?? 0;
    const admitReserving = (input: AdmitInput): Promise<Decision> =>
      reserves[lanes.laneOf?.(input) ?? 0]!(this.nowMs(), input).then((reply) => {
        const decision = toDecision(ownGroup(seen(reply), input), rulesOfCheck(spec, input), input.concurrency);
        return reply.reservation === '' ? decision : { ...decision, reservation: reply.reservation };
      }, failed);
    const peeks = configs.map((lane) => peekCommand(this.client, keys, lane));
    const reset = resetCommand(this.client, keys);
    const overrides = overrideCommands(this.client, keys);
    // the adaptive limit's reports (lua/report.lua) carry the limiter's own config block (lane 0)
    const report = spec.adaptive ? reportCommand(this.client, keys, configs[0]!.config) : undefined;
    // One promise per check on the hot path (no async wrappers): this runs on every request.
    const admitNow = (input: AdmitInput): Promise<Decision> =>
      checks
        .submit(this.nowMs(), input)
        .then((reply) => toDecision(ownGroup(seen(reply), input), rulesOfCheck(spec, input), input.concurrency), failed);
    const admitOrDefer = (input: DeferringInput): Promise<Decision> =>
      deferringChecks
        .submit(this.nowMs(), input)
        .then(
          (reply) => withDeferral(toDecision(ownGroup(seen(reply), input), rulesOfCheck(spec, input), input.concurrency), deferOutcome(reply)),
          failed,
        );
    return {
      queue,
      configDrift,
      admit: (input: AdmitInput): Promise<Decision> => {
        const decided = deferring(input) ? admitOrDefer(input) : input.reserve ? admitReserving(input) : admitNow(input);
        return input.class === undefined ? decided : decided.then(inClass(input.class));
      },
      settle: (input: SettleInput): Promise<SettleResult> => {
        const plan = planOfReservation(input.reservation);
        // a plan this limiter does not have: no lane (the id names no reservation of this limiter)
        const lane = plan === undefined || spec.plans?.has(plan) ? planLane(plan) : 0;
        return settles[lane]!(this.nowMs(), input).then(({ status, refunded, debt }) => ({ status, refunded, debt }), failedTo('settle'));
      },
      peek: (input: PeekInput): Promise<GroupStatus> =>
        peeks[lanes.laneOf?.(input) ?? 0]!(this.nowMs(), input).then(
          (reply) => toGroupStatus(ownGroup(seen(reply), input), rulesOfCheck(spec, input)),
          failedTo('peek'),
        ),
      reset: (group: string): Promise<boolean> => reset(group).catch(failedTo('reset')),
      release: (lease: string): Promise<boolean> => releases.submit(0, lease).catch(failedTo('release')),
      setOverride: (input: OverrideInput) => overrides.set(this.nowMs(), input).catch(failedTo('setOverride')),
      getOverride: (group: string) => overrides.get(this.nowMs(), group).catch(failedTo('getOverride')),
      deleteOverride: (group: string) => overrides.delete(this.nowMs(), group).catch(failedTo('deleteOverride')),
      listOverrides: (cursor: string, count: number) => overrides.list(this.nowMs(), cursor, count).catch(failedTo('listOverrides')),
      ...(report ? { report: (input: ReportInput) => report(this.nowMs(), input).catch(failedTo('report')) } : {}),
      destroy: async (): Promise<void> => {
        // One slot (one hash tag), so one DEL works on Cluster too.
        await this.client.del(...allKeys(keys));
      },
      close: () => queue.close(),
      probe: redisProbe(this.client as unknown as HealthClient, keys.groups),
      writeProbe: redisWriteProbe(this.client as unknown as HealthClient, `${keys.groups}:probe`),
      firstConnection: () => firstConnection(this.client as unknown as HealthClient),
      serverInfo: () => readRedisInfo(this.client as unknown as HealthClient),
      // WAIT confirms the writes of the connection it runs on, and blocks that connection meanwhile: deferrals
      // get a connection of their own (on Cluster, to the slot's master), so live checks never queue behind a WAIT.
      durableWrites: () =>
        openDurableWrites(this.client, keys.jobs, (client) => {
          const writes = laneBatcher<DeferringInput, Deferral, Lane>(
            lanes,
            configs,
            (lane) => admitDeferCommand(client, keys, lane, leaseMs),
            (lane) => admitDeferManyCommand(client, keys, lane, leaseMs),
            this.maxBatch,
          );
          const writeQueue = new RedisQueue({ client, spec, prefix: this.prefix, ...(this.clock ? { clock: this.clock } : {}) });
          return {
            admit: (input) =>
              writes
                .submit(this.nowMs(), input as DeferringInput)
                .then(
                  (reply) =>
                    withDeferral(toDecision(ownGroup(seen(reply), input), rulesOfCheck(spec, input), input.concurrency), deferOutcome(reply)),
                  failed,
                ),
            enqueue: (input) => writeQueue.enqueue(input),
            queue: writeQueue,
          };
        }),
    };
  }
}
