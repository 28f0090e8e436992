/**
 * RedisQueue: the QueueStore of one limiter on Redis (standalone, Sentinel or Cluster through ioredis).
 * Every operation is one Lua script over the limiter's keys (one hash tag); time comes from Redis TIME
 * unless a test clock is given. Workers block on a duplicated connection, never on the shared one.
 */
import type { Redis } from 'ioredis';
import { ConfigError, StoreError, describeValue } from '../errors';
import { DEFAULT_MAX_GROUPS, type FairShareSpec } from '../core/fair-share';
import { ScriptBatcher } from '../store/admit-batch';
import { limiterKeys, NAME_PATTERN, type LimiterKeys } from '../store/keys';
import { fairShareConfig, loadScript, runScript, type RedisClient, type ScriptArg } from '../store/scripts';
import type { Clock } from '../types';
import { decodeRecord, toJobInfo, type EnqueueInput, type EnqueueResult } from './job-record';
import { queueKeyBlock } from './queue-keys';
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
  JobState,
  QueueStore,
} from './types';
import { claimCount, deadPage } from './validate';

export interface RedisQueueOptions {
  readonly client: RedisClient;
  /** The limiter whose budget the dispatcher spends (its name names the keys). */
  readonly spec: FairShareSpec;
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

type ClaimTuple = [string, string, string, number];

/** A claim's jobs: a list of {id, record JSON, token, leaseUntil} (the record is decoded here, not in Redis). */
function toClaimed(reply: unknown): ClaimedJob[] {
  return (reply as ClaimTuple[]).map(([id, raw, token, leaseUntil]) => {
    const r = decodeRecord(raw);
    return { id, type: r.type, group: r.group, payload: r.payload, attempts: Number(r.attempts), token, leaseUntil: Number(leaseUntil) };
  });
}

/** claim.lua's reply: {{claimed jobs}, wakeMs}. */
function toClaimResult(reply: unknown): ClaimResult {
  const [claimed, wakeMs] = reply as [unknown, number];
  return { claimed: toClaimed(claimed), wakeMs: Number(wakeMs) };
}

/** complete-claim.lua's reply: {completed (1 | 0 stale), {claimed jobs}, wakeMs}. */
function toCompleteAndClaim(reply: unknown): CompleteAndClaimResult {
  const [completed, claimed, wakeMs] = reply as [number, unknown, number];
  return { completed: completed === 1, claimed: toClaimed(claimed), wakeMs: Number(wakeMs) };
}

/** complete.lua's ARGV after nowMs. */
function completeArgs(id: string, token: string, resultJson: string | undefined, keepMs: number): ScriptArg[] {
  return [id, token, resultJson === undefined ? 0 : 1, resultJson ?? '', Math.max(0, Math.floor(keepMs)), TRIM_PAGE];
}

export class RedisQueue implements QueueStore {
  readonly keys: LimiterKeys;
  private readonly client: RedisClient;
  private readonly block: string[];
  private readonly clock: Clock | undefined;
  private readonly maxDead: number;
  private readonly config: string;
  private blocking: Redis | undefined;
  private readonly errorListeners = new Set<(error: unknown) => void>();
  private blockingWait: Promise<string | null | false> | undefined;

  constructor(options: RedisQueueOptions) {
    const prefix = options.prefix ?? 'bl';
    for (const [field, value] of [
      ['prefix', prefix],
      ['name', options.spec.name],
    ] as const) {
      if (typeof value !== 'string' || !NAME_PATTERN.test(value)) {
        throw new ConfigError(
          `ERR_BL_${field.toUpperCase()}`,
          `Expected \`${field}\` to be 1–64 of A-Z a-z 0-9 . _ - : /, got ${describeValue(value)}`,
        );
      }
    }
    const maxDead = options.maxDead ?? 10_000;
    if (!Number.isInteger(maxDead) || maxDead < 1) {
      throw new ConfigError('ERR_BL_MAX_DEAD', `Expected \`maxDead\` to be a positive integer, got ${describeValue(maxDead)}`);
    }
    this.client = options.client;
    this.keys = limiterKeys(prefix, options.spec.name);
    this.config = fairShareConfig(options.spec, DEFAULT_MAX_GROUPS);
    this.block = queueKeyBlock(this.keys);
    this.clock = options.clock;
    this.maxDead = maxDead;
  }

  private now(): number {
    return this.clock ? Math.floor(this.clock()) : 0;
  }

  private run(script: string, args: readonly ScriptArg[], now = this.now()): Promise<unknown> {
    return runScript(this.client, loadScript(`${script}.lua`, this.block.length), this.block, [now, ...args]);
  }

  /** Writes a job straight into the fair queue (the write a deferred admission makes). */
  async enqueue(input: EnqueueInput): Promise<EnqueueResult> {
    const reply = (await this.run('enqueue', [
      input.group,
      input.weight,
      input.cost,
      input.type,
      input.payload,
      input.idempotencyKey ?? '',
      input.maxBacklog,
      input.delayMs,
      input.maxDeferMs,
      input.groupConcurrency ?? 0,
      input.maxAttempts ?? 0,
    ])) as [number, string, number];
    const [status, id, runAt] = reply;
    if (status === 1 || status === 2) return { status: status === 1 ? 'written' : 'duplicate', id, runAt: Number(runAt) };
    return { status: status === -2 ? 'backlog-full' : 'defer-horizon' };
  }

  async cancel(id: string): Promise<boolean> {
    return (await this.run('cancel', [id])) === 1;
  }

  async groupCounts(group: string): Promise<GroupJobCounts> {
    const [waiting, active, oldestWaitingMs] = (await this.run('group-counts', [group])) as [number, number, number];
    return { waiting, active, oldestWaitingMs };
  }

  async dispatch(options: DispatchOptions): Promise<DispatchResult> {
    const [moved, promoted, wakeMs, readyFull] = (await this.run('dispatch', [
      this.config,
      options.readyMax,
      options.moveMax,
      options.promoteMax,
      options.scanMax,
    ])) as [number, number, number, number];
    return { moved, promoted, wakeMs, readyFull: readyFull === 1 };
  }

  async acquireDispatcherLease(owner: string, ttlMs: number): Promise<boolean> {
    const script = loadScript('dispatcher-lease.lua', 1);
    return (await runScript(this.client, script, [this.keys.dispatcherLease], [owner, Math.ceil(ttlMs)])) === 1;
  }

  async claim(leaseMs: number): Promise<ClaimedJob | null> {
    return (await this.claimMany(leaseMs, 1)).claimed[0] ?? null;
  }

  async claimMany(leaseMs: number, max: number): Promise<ClaimResult> {
    return toClaimResult(await this.run('claim', [this.config, Math.ceil(leaseMs), claimCount(max)]));
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
    // An ended connection never comes back by itself (see store/reopen.ts): a new one replaces it.
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

  onError(listener: (error: unknown) => void): () => void {
    this.errorListeners.add(listener);
    return () => void this.errorListeners.delete(listener);
  }

  async complete(id: string, token: string, resultJson: string | undefined, keepMs: number): Promise<boolean> {
    return (await this.run('complete', completeArgs(id, token, resultJson, keepMs))) === 1;
  }

  completeAndClaim(
    id: string,
    token: string,
    resultJson: string | undefined,
    keepMs: number,
    leaseMs: number,
    max: number,
  ): Promise<CompleteAndClaimResult> {
    return this.acks.submit(this.now(), [...completeArgs(id, token, resultJson, keepMs), Math.ceil(leaseMs), claimCount(max)]);
  }

  /** The acknowledgements made in one event-loop turn (each worker slot finishing a job) share one call. */
  private readonly acks = new ScriptBatcher<ScriptArg[], CompleteAndClaimResult>(
    (now, args) => this.run('complete-claim', [this.config, ...args], now).then(toCompleteAndClaim),
    (now, batch) =>
      this.run('complete-claim-many', [this.config, ...batch.flat()], now).then((reply) => {
        if (!Array.isArray(reply) || reply.length !== batch.length) {
          throw new StoreError('ERR_BL_STORE_REPLY', `Unexpected complete-claim-many reply for ${batch.length} jobs`);
        }
        return reply.map(toCompleteAndClaim);
      }),
    ACK_BATCH,
  );

  async fail(id: string, token: string, outcome: FailOutcome): Promise<FailResult> {
    const args: ScriptArg[] =
      outcome.kind === 'error'
        ? [id, token, 'error', outcome.error, Math.max(0, Math.ceil(outcome.delayMs)), outcome.maxAttempts, this.maxDead]
        : [id, token, 'snooze', '', Math.max(0, Math.ceil(outcome.delayMs)), outcome.maxSnoozes, this.maxDead];
    return (await this.run('fail', args)) as FailResult;
  }

  async extendLease(id: string, token: string, leaseMs: number): Promise<boolean> {
    return (await this.run('extend-lease', [id, token, Math.ceil(leaseMs)])) === 1;
  }

  async reclaimExpired(maxStalls: number, max: number): Promise<{ requeued: number; dead: number }> {
    const [requeued, dead] = (await this.run('reclaim', [maxStalls, max, this.maxDead, TRIM_PAGE])) as [number, number];
    return { requeued, dead };
  }

  async getJob(id: string): Promise<JobInfo | null> {
    const reply = (await this.run('get-job', [id])) as [string, JobState, number] | null;
    if (!reply) return null;
    return toJobInfo(decodeRecord(reply[0]), reply[1], Number(reply[2]));
  }

  async counts(): Promise<JobCounts> {
    const [delayed, pending, ready, active, completed, dead, oldestWaitingMs] = (await this.run('counts', [TRIM_PAGE])) as number[];
    return {
      delayed: delayed!,
      pending: pending!,
      ready: ready!,
      active: active!,
      completed: completed!,
      dead: dead!,
      oldestWaitingMs: oldestWaitingMs!,
    };
  }

  async listDead(offset: number, count: number): Promise<JobInfo[]> {
    const page = deadPage(offset, count);
    const raws = (await this.run('dead-letters', ['list', page.offset, page.count])) as string[];
    return raws.map((raw) => {
      const r = decodeRecord(raw);
      return toJobInfo(r, 'dead', r.runAt);
    });
  }

  async retryDead(id: string): Promise<boolean> {
    return (await this.run('dead-letters', ['retry', id])) === 1;
  }

  async removeDead(id: string): Promise<boolean> {
    return (await this.run('dead-letters', ['remove', id])) === 1;
  }

  /** Closes the blocking connection (the shared client is the caller's). */
  async close(): Promise<void> {
    const blocking = this.blocking;
    this.blocking = undefined;
    blocking?.disconnect();
  }
}
