/**
 * RedisQueue's side of the queue scripts' boundary: its inputs as the scripts' typed arguments and the decoded
 * replies (src/redis/lua-sources.generated.ts, from the headers in lua/) as the QueueStore answers them.
 */
import { STATUS, type CompleteClaimReply, type EnqueueArgs, type EnqueueReply, type LeasedJob } from './lua-sources.generated';
import { decodeRecord } from '../queue/job-record';
import type { EnqueueInput, EnqueueResult } from '../types';
import type { ClaimedJob, CompleteAndClaimResult } from '../types';

/** A claimed job (the record is decoded here, not in Redis). */
function toClaimedJob({ id, record, token, leaseUntil, reservation }: LeasedJob): ClaimedJob {
  const r = decodeRecord(record);
  const job = { id, type: r.type, group: r.group, payload: r.payload, attempts: Number(r.attempts), token, leaseUntil };
  return reservation === '' ? job : { ...job, reservation };
}

export const toClaimed = (leased: LeasedJob[]): ClaimedJob[] => leased.map(toClaimedJob);

/** complete-claim.lua's reply as the queue answers it. */
export function toCompleteAndClaim(reply: CompleteClaimReply): CompleteAndClaimResult {
  return { completed: reply.completed, claimed: toClaimed(reply.claimed), wakeMs: reply.wakeMs };
}

/** How long a completed record is kept: whole ms, never negative. */
export const keepOf = (keepMs: number): number => Math.max(0, Math.floor(keepMs));

export function enqueueArgs(nowMs: number, input: EnqueueInput): EnqueueArgs {
  return {
    nowMs,
    group: input.group,
    weight: input.weight,
    cost: input.cost,
    type: input.type,
    payload: input.payload,
    idempotencyKey: input.idempotencyKey ?? '',
    maxBacklog: input.maxBacklog,
    delayMs: input.delayMs,
    maxDeferMs: input.maxDeferMs,
    groupConcurrency: input.groupConcurrency ?? 0,
    maxAttempts: input.maxAttempts ?? 0,
    plan: input.plan ?? '',
    settle: input.settle === true,
    class: input.class ?? '',
  };
}

export function toEnqueueResult({ status, id, runAt }: EnqueueReply): EnqueueResult {
  switch (status) {
    case STATUS.WRITTEN:
      return { status: 'written', id, runAt };
    case STATUS.DUPLICATE:
      return { status: 'duplicate', id, runAt };
    case STATUS.BACKLOG_FULL:
      return { status: 'backlog-full' };
    case STATUS.DEFER_HORIZON:
      return { status: 'defer-horizon' };
  }
}
