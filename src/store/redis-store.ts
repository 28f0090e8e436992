/**
 * RedisStore over ioredis (Redis, Cluster, or Sentinel through ioredis options). Checks made in one event-loop
 * turn share one script call (lua/admit-many.lua; a lone check uses lua/admit.lua; see src/redis/script-batcher.ts); a
 * check that may be deferred is one call of lua/admit-defer.lua. Time comes from redis TIME unless a test
 * clock is injected. All keys of a limiter share one hash tag, so they live in one Cluster slot.
 */
import { toDecision, toGroupStatus, type AdmitReply } from '../core/decision';
import { DEFAULT_LEASE_MS } from '../core/concurrency';
import { DEFAULT_MAX_GROUPS, OVERFLOW_GROUP } from '../core/fair-share';
import { StoreError } from '../errors';
import type { AdmitInput, Clock, Decision, GroupStatus, LimiterSpec, LimiterStore, PeekInput, Store } from '../types';
import { NAME_PATTERN, allKeys, limiterKeys, type LimiterKeys } from '../redis/keys';
import { withDeferral } from '../queue/defer-decision';
import type { EnqueueResult } from '../queue/job-record';
import { queueKeyBlock } from '../redis/queue-keys';
import { RedisQueue } from '../redis/redis-queue';
import { laneBatcher, ruleLanes, rulesOfCheck } from './plan-lanes';
import { ScriptBatcher } from '../redis/script-batcher';
import { openDurableWrites } from '../redis/durable-writes';
import {
  admitCommand,
  admitDeferCommand,
  admitDeferManyCommand,
  admitManyCommand,
  admitManyScript,
  admitScript,
  defineScripts,
  fairShareConfig,
  peekCommand,
  releaseCommand,
  resetCommand,
  type AdmitDeferReply,
  type DeferringInput,
  type DeferReply,
  type RedisClient,
} from './scripts';
import { func, integer, optional, refuse } from '../validate';

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
  if (reply.group !== OVERFLOW_GROUP) reply.group = input.group;
  return reply;
}

function deferOutcome(d: DeferReply): EnqueueResult | undefined {
  switch (d.status) {
    case 0:
      return undefined;
    case 1:
      return { status: 'written', id: d.id, runAt: d.runAt };
    case 2:
      return { status: 'duplicate', id: d.id, runAt: d.runAt };
    case -2:
      return { status: 'backlog-full' };
    case -3:
      return { status: 'defer-horizon' };
  }
}

export class RedisStore implements Store {
  readonly client: RedisClient;
  readonly prefix: string;
  private readonly clock: Clock | undefined;
  private readonly maxBatch: number;

  constructor(options: RedisStoreOptions) {
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
    defineScripts(this.client, [admitScript(), admitManyScript()]);
  }

  /** The keys of one limiter (the queue store builds on the same names). */
  keys(name: string): LimiterKeys {
    return limiterKeys(this.prefix, name);
  }

  /** Time passed to scripts in µs; 0 = the script reads redis TIME. */
  nowUs(): number {
    return this.clock ? Math.floor(this.clock() * 1000) : 0;
  }

  /** The limiter's admission and its queue (RedisQueue over the same keys). */
  bind(spec: LimiterSpec): LimiterStore {
    const keys = this.keys(spec.name);
    // one config block per lane: the limiter's rules, then each plan's that differ (./plan-lanes.ts)
    const lanes = ruleLanes(spec);
    const configs = lanes.rules.map((rules) => fairShareConfig(spec, DEFAULT_MAX_GROUPS, rules));
    const admitKeys = [keys.groups, keys.seen, keys.leases, keys.slots] as const;
    const block = [...queueKeyBlock(keys), keys.leases, keys.slots];
    const leaseMs = spec.concurrencyLeaseMs ?? DEFAULT_LEASE_MS;
    const checks = laneBatcher<AdmitInput, AdmitReply>(
      lanes,
      configs,
      (config) => admitCommand(this.client, admitKeys, config, leaseMs),
      (config) => admitManyCommand(this.client, admitKeys, config, leaseMs),
      this.maxBatch,
    );
    const deferringChecks = laneBatcher<DeferringInput, AdmitDeferReply>(
      lanes,
      configs,
      (config) => admitDeferCommand(this.client, block, config, leaseMs),
      (config) => admitDeferManyCommand(this.client, block, config, leaseMs),
      this.maxBatch,
    );
    // the releases of one turn share a call too (release.lua takes any number)
    const releaseMany = releaseCommand(this.client, keys.leases, keys.slots);
    const releases = new ScriptBatcher<string, boolean>((now, lease) => releaseMany(now, [lease]).then((r) => r[0]!), releaseMany, this.maxBatch);
    const queue = new RedisQueue({ client: this.client, spec, prefix: this.prefix, ...(this.clock ? { clock: this.clock } : {}) });
    const failedTo =
      (what: string) =>
      (error: unknown): never => {
        if (error instanceof StoreError) throw error;
        throw new StoreError('ERR_BL_STORE', `Redis ${what} failed for limiter ${spec.name}: ${(error as Error)?.message ?? String(error)}`, {
          cause: error,
        });
      };
    const failed = failedTo('admit');
    const peeks = configs.map((config) => peekCommand(this.client, [keys.groups, keys.seen], config));
    const reset = resetCommand(this.client, [keys.groups, keys.seen]);
    // One promise per check on the hot path (no async wrappers): this runs on every request.
    const admitNow = (input: AdmitInput): Promise<Decision> =>
      checks.submit(this.nowUs(), input).then((reply) => toDecision(ownGroup(reply, input), rulesOfCheck(spec, input), input.concurrency), failed);
    const admitOrDefer = (input: DeferringInput): Promise<Decision> =>
      deferringChecks
        .submit(this.nowUs(), input)
        .then(
          (reply) => withDeferral(toDecision(ownGroup(reply.admit, input), rulesOfCheck(spec, input), input.concurrency), deferOutcome(reply.defer)),
          failed,
        );
    return {
      queue,
      admit: (input: AdmitInput): Promise<Decision> => (input.defer ? admitOrDefer(input as DeferringInput) : admitNow(input)),
      peek: (input: PeekInput): Promise<GroupStatus> =>
        peeks[lanes.laneOf?.(input) ?? 0]!(this.nowUs(), input).then(
          (reply) => toGroupStatus(ownGroup(reply, input), rulesOfCheck(spec, input)),
          failedTo('peek'),
        ),
      reset: (group: string): Promise<boolean> => reset(group).catch(failedTo('reset')),
      release: (lease: string): Promise<boolean> => releases.submit(0, lease).catch(failedTo('release')),
      destroy: async (): Promise<void> => {
        // One slot (one hash tag), so one DEL works on Cluster too.
        await this.client.del(...allKeys(keys));
      },
      close: () => queue.close(),
      // WAIT confirms the writes of the connection it runs on, and blocks that connection meanwhile: deferrals
      // get a connection of their own (on Cluster, to the slot's master), so live checks never queue behind a WAIT.
      durableWrites: () =>
        openDurableWrites(this.client, keys.jobs, (client) => {
          const writes = laneBatcher<DeferringInput, AdmitDeferReply>(
            lanes,
            configs,
            (config) => admitDeferCommand(client, block, config, leaseMs),
            (config) => admitDeferManyCommand(client, block, config, leaseMs),
            this.maxBatch,
          );
          const writeQueue = new RedisQueue({ client, spec, prefix: this.prefix, ...(this.clock ? { clock: this.clock } : {}) });
          return {
            admit: (input) =>
              writes
                .submit(this.nowUs(), input as DeferringInput)
                .then(
                  (reply) =>
                    withDeferral(toDecision(ownGroup(reply.admit, input), rulesOfCheck(spec, input), input.concurrency), deferOutcome(reply.defer)),
                  failed,
                ),
            enqueue: (input) => writeQueue.enqueue(input),
          };
        }),
    };
  }
}
