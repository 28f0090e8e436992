/**
 * RedisQueue: the QueueStore of one limiter on Redis (standalone, Sentinel or Cluster through ioredis).
 * Every operation is one Lua script over the limiter's keys (one hash tag); time comes from Redis TIME
 * unless a test clock is given. Workers block on a duplicated connection, never on the shared one.
 */
import type { Redis } from 'ioredis';
import { StoreError } from '../errors';
import { refusesWrites } from '../util/store-call';
import { ScriptBatcher } from './script-batcher';
import { limiterKeys, type LimiterKeys } from './keys';
import * as lua from './lua-sources.generated';
import type { Ack, QueueKeys, ScriptBinding } from './lua-sources.generated';
import { claimPlansArg } from './plan-lanes';
import { fairShareConfigBlock, type RedisClient } from './admission-scripts';
import { runBound } from './script-loader';
import type { Clock, LimiterSpec } from '../types';
import { decodeRecord, toJobInfo } from '../queue/job-record';
import type { EnqueueInput, EnqueueResult } from '../types';
import { queueKeyBlock } from './queue-keys';
import { firstConnection, type HealthClient } from './redis-health';
import { enqueueArgs, keepOf, toClaimed, toCompleteAndClaim, toEnqueueResult } from './redis-queue-codec';
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
import { claimCount, deadPage } from '../queue/validate';
import { NAME_PATTERN, integer, refuse } from '../util/validate';

export interface RedisQueueOptions {
  readonly client: RedisClient;
  /** The limiter whose budget the dispatcher spends (its name names the keys). */
  readonly spec: LimiterSpec;
  /** @defaultValue 'bl' */
  readonly prefix?: string;
  /** Tests only: "now" in ms passed to every script instead of Redis TIME. */
  readonly clock?: Clock;
  /** Dead records kept; the oldest beyond it are deleted. @defaultValue 10_000 */
  readonly maxDead?: number;
}

/** Most expired completed records dropped per call. */
const TRIM_PAGE = 100;
/** Most acknowledgements sent in one script call. */
const ACK_BATCH = 16;

/** Redis refused a write (READONLY, NOREPLICAS, MASTERDOWN): nothing was written. */
export function readOnlyError(name: string, error: unknown): StoreError {
  return new StoreError('ERR_BL_STORE_READONLY', `Redis refuses writes for limiter ${name}: ${(error as Error)?.message}`, { cause: error });
}

export class RedisQueue implements QueueStore {
  readonly keys: LimiterKeys;
  private readonly name: string;
  private readonly client: RedisClient;
  /** The queue key block, in the scripts' KEYS order (`-- @keys queue`). */
  private readonly block: string[];
  private readonly leaseKeys: string[];
  private readonly clock: Clock | undefined;
  private readonly maxDead: number;
  private readonly config: string;
  /** The claim scripts' `plans`: each plan's rules that differ from the limiter's. */
  private readonly plans: string;
  private blocking: Redis | undefined;
  private readonly errorListeners = new Set<(error: unknown) => void>();
  private blockingWait: Promise<string | null | false> | undefined;

  constructor(options: RedisQueueOptions) {
    const prefix = options.prefix ?? 'bl';
    for (const [field, value] of [
      ['prefix', prefix],
      ['name', options.spec.name],
    ] as const) {
      if (typeof value !== 'string' || !NAME_PATTERN.test(value)) refuse(field, '1–64 letters, digits or ._-:/', value);
    }
    const maxDead = integer('maxDead', options.maxDead, { fallback: 10_000 });
    this.client = options.client;
    this.name = options.spec.name;
    this.keys = limiterKeys(prefix, options.spec.name);
    // the queue's claims decide each job in its own class: the block names every class
    this.config = fairShareConfigBlock(options.spec, options.spec.rules, undefined, true);
    this.plans = claimPlansArg(options.spec);
    this.block = queueKeyBlock(this.keys);
    this.leaseKeys = lua.dispatcherLeaseScript.keys(this.keys);
    this.clock = options.clock;
    this.maxDead = maxDead;
  }

  private now(): number {
    return this.clock ? Math.floor(this.clock()) : 0;
  }

  /** One queue script over the queue key block. */
  private run<A, R>(script: ScriptBinding<QueueKeys, A, R>, args: A): Promise<R> {
    return runBound(this.client, script, this.block, args).catch((error: unknown) => {
      throw refusesWrites(error) ? readOnlyError(this.name, error) : error;
    });
  }

  /** A claim script: the queue key block and the overrides (a claim reads the group's override). */
  private runClaim<A, R>(script: ScriptBinding<lua.ClaimKeys, A, R>, args: A): Promise<R> {
    this.claimBlock ??= lua.claimScript.keys(this.keys);
    return runBound(this.client, script, this.claimBlock, args).catch((error: unknown) => {
      throw refusesWrites(error) ? readOnlyError(this.name, error) : error;
    });
  }
  private claimBlock: string[] | undefined;

  /** Writes a job straight into the fair queue (the write a deferred admission makes). */
  async enqueue(input: EnqueueInput): Promise<EnqueueResult> {
    return toEnqueueResult(await this.run(lua.enqueueScript, enqueueArgs(this.now(), input)));
  }

  async cancel(id: string): Promise<boolean> {
    return this.run(lua.cancelScript, { nowMs: this.now(), id });
  }

  async groupCounts(group: string): Promise<GroupJobCounts> {
    return this.run(lua.groupCountsScript, { nowMs: this.now(), group });
  }

  async dispatch(options: DispatchOptions): Promise<DispatchResult> {
    const { readyMax, moveMax, promoteMax, scanMax } = options;
    return this.run(lua.dispatchScript, { nowMs: this.now(), config: this.config, readyMax, moveMax, promoteMax, scanMax });
  }

  async acquireDispatcherLease(owner: string, ttlMs: number): Promise<boolean> {
    return runBound(this.client, lua.dispatcherLeaseScript, this.leaseKeys, { owner, ttlMs: Math.ceil(ttlMs) });
  }

  async claim(leaseMs: number): Promise<ClaimedJob | null> {
    return (await this.claimMany(leaseMs, 1)).claimed[0] ?? null;
  }

  async claimMany(leaseMs: number, max: number): Promise<ClaimResult> {
    const { claimed, wakeMs } = await this.runClaim(lua.claimScript, {
      nowMs: this.now(),
      config: this.config,
      plans: this.plans,
      leaseMs: Math.ceil(leaseMs),
      max: claimCount(max),
    });
    return { claimed: toClaimed(claimed), wakeMs };
  }

  /**
   * BLPOP on one duplicated connection, never the shared one. Concurrent callers share the read in
   * flight; a caller whose own deadline is not reached when that read times out starts the next one.
   */
  async waitForReady(timeoutMs: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return;
    const deadline = Date.now() + timeoutMs;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
      signal?.addEventListener(
        'abort',
        () => {
          clearTimeout(timer);
          resolve(false);
        },
        { once: true },
      );
    });
    try {
      for (;;) {
        const left = deadline - Date.now();
        if (left <= 0) return;
        const woken = await Promise.race([this.blockingRead(left), timeout]);
        if (woken !== null) return;
      }
    } finally {
      clearTimeout(timer);
    }
  }

  /** One shared BLPOP: a token, null on its timeout, false when the connection failed (caller returns). */
  private blockingRead(timeoutMs: number): Promise<string | null | false> {
    if (this.blockingWait) return this.blockingWait;
    // An ended connection never comes back by itself (see ./reopen.ts): a new one replaces it.
    if (this.blocking?.status === 'end') this.blocking = undefined;
    if (!this.blocking) {
      this.blocking = (this.client as Redis).duplicate();
      // Its own connection: without a listener ioredis reports every reconnect failure as unhandled.
      this.blocking.on('error', (error: unknown) => this.errorListeners.forEach((listener) => listener(error)));
    }
    const read = this.blocking
      .blpop(this.keys.wake, Math.max(0.01, timeoutMs / 1000))
      .then(
        (reply) => (reply ? reply[1] : null),
        () => false as const,
      )
      .finally(() => {
        this.blockingWait = undefined;
      });
    this.blockingWait = read;
    return read;
  }

  firstConnection(): Promise<void> | undefined {
    return firstConnection(this.client as unknown as HealthClient);
  }

  onError(listener: (error: unknown) => void): () => void {
    this.errorListeners.add(listener);
    return () => void this.errorListeners.delete(listener);
  }

  async complete(id: string, token: string, resultJson: string | undefined, keepMs: number): Promise<boolean> {
    const hasResult = resultJson !== undefined;
    return this.run(lua.completeScript, {
      nowMs: this.now(),
      id,
      token,
      hasResult,
      result: resultJson ?? '',
      keepMs: keepOf(keepMs),
      trimPage: TRIM_PAGE,
    });
  }

  completeAndClaim(
    id: string,
    token: string,
    resultJson: string | undefined,
    keepMs: number,
    leaseMs: number,
    max: number,
  ): Promise<CompleteAndClaimResult> {
    const ack: Ack = {
      id,
      token,
      hasResult: resultJson !== undefined,
      result: resultJson ?? '',
      keepMs: keepOf(keepMs),
      trimPage: TRIM_PAGE,
      leaseMs: Math.ceil(leaseMs),
      max: claimCount(max),
    };
    return this.acks.submit(this.now(), ack);
  }

  /** The acknowledgements made in one event-loop turn (each worker slot finishing a job) share one call. */
  private readonly acks = new ScriptBatcher<Ack, CompleteAndClaimResult>(
    (nowMs, ack) => this.runClaim(lua.completeClaimScript, { nowMs, config: this.config, plans: this.plans, ack }).then(toCompleteAndClaim),
    (nowMs, acks) =>
      this.runClaim(lua.completeClaimManyScript, { nowMs, config: this.config, plans: this.plans, acks }).then((replies) => {
        if (replies.length !== acks.length) {
          throw new StoreError('ERR_BL_STORE_REPLY', `Unexpected complete-claim-many.lua reply: ${replies.length} replies for ${acks.length} jobs`);
        }
        return replies.map(toCompleteAndClaim);
      }),
    ACK_BATCH,
  );

  async fail(id: string, token: string, outcome: FailOutcome): Promise<FailResult> {
    const error = outcome.kind === 'error';
    const state = await this.run(lua.failScript, {
      nowMs: this.now(),
      id,
      token,
      kind: outcome.kind,
      error: error ? outcome.error : '',
      delayMs: Math.max(0, Math.ceil(outcome.delayMs)),
      cap: error ? outcome.maxAttempts : outcome.maxSnoozes,
      maxDead: this.maxDead,
    });
    return { state };
  }

  async extendLease(id: string, token: string, leaseMs: number): Promise<boolean> {
    return this.run(lua.extendLeaseScript, { nowMs: this.now(), id, token, leaseMs: Math.ceil(leaseMs) });
  }

  async reclaimExpired(maxStalls: number, max: number): Promise<{ requeued: number; dead: number }> {
    return this.run(lua.reclaimScript, { nowMs: this.now(), maxStalls, max, maxDead: this.maxDead, trimPage: TRIM_PAGE });
  }

  async getJob(id: string): Promise<JobInfo | null> {
    const job = await this.run(lua.getJobScript, { nowMs: this.now(), id });
    return job && toJobInfo(decodeRecord(job.record), job.state, job.runAt);
  }

  async counts(): Promise<JobCounts> {
    return this.run(lua.countsScript, { nowMs: this.now(), trimPage: TRIM_PAGE });
  }

  async listDead(offset: number, count: number): Promise<JobInfo[]> {
    const page = deadPage(offset, count);
    const raws = await this.run(lua.listDeadScript, page);
    return raws.map((raw) => {
      const r = decodeRecord(raw);
      return toJobInfo(r, 'dead', r.runAt);
    });
  }

  async retryDead(id: string): Promise<boolean> {
    return this.run(lua.deadLettersScript, { nowMs: this.now(), op: 'retry', id });
  }

  async removeDead(id: string): Promise<boolean> {
    return this.run(lua.deadLettersScript, { nowMs: this.now(), op: 'remove', id });
  }

  /** Closes the blocking connection (the shared client is the caller's). */
  async close(): Promise<void> {
    const blocking = this.blocking;
    this.blocking = undefined;
    blocking?.disconnect();
  }
}
