/**
 * A 202 is a promise: with `durability: { replicas, timeoutMs }` a deferral (or an enqueue) is confirmed on
 * that many replicas (Redis WAIT) before it is answered. The job's writes go over a connection of their own
 * (WAIT confirms one connection's writes and blocks it meanwhile), so live checks never wait behind it.
 * Unconfirmed: `check()` answers a denial with reason 'store-error' and no job (the middleware's 503 +
 * Retry-After; a retry with the same Idempotency-Key finds the same job), `enqueue()` rejects.
 *
 * `queue` confirms claims and acknowledgements (completions and failures) too, so a failover runs no job twice
 * beyond those in flight and rolls back no retry: an unconfirmed claim is not run; an unconfirmed acknowledgement
 * is sent again (same token) to the master there is by then.
 */
import { ConfigError, StoreError } from '../errors';
import type { ClaimResult, Decision, DurableWrites, FailOutcome, FailResult, LimiterStore, QueueStore } from '../types';
import type { EnqueueInput, EnqueueResult } from '../types';
import { isIntegerIn, refuse } from '../util/validate';

export interface DurabilityOptions {
  /** Replicas that must acknowledge a job's write before it is answered (Redis WAIT). */
  readonly replicas: number;
  /** Longest wait for them. @defaultValue `1000` */
  readonly timeoutMs?: number;
}

export interface ResolvedDurability {
  readonly replicas: number;
  readonly timeoutMs: number;
}

export function resolveDurability(value: unknown): ResolvedDurability | undefined {
  if (value === undefined) return undefined;
  const d = value as Partial<DurabilityOptions> | null;
  const replicas = d?.replicas;
  const timeoutMs = d?.timeoutMs ?? 1000;
  if (typeof d !== 'object' || d === null || !isIntegerIn(replicas) || !isIntegerIn(timeoutMs)) {
    return refuse('durability', '{ replicas: integer ≥ 1, timeoutMs?: integer ≥ 1 }', value);
  }
  return Object.freeze({ replicas, timeoutMs });
}

/** How long a client told "not confirmed" should wait before retrying (it finds the same job by its key). */
const RETRY_AFTER_MS = 1000;

export interface Durability {
  /** The store the limiter admits through: deferring checks go over the durable connection. */
  readonly store: LimiterStore;
  /** A decision carrying a job, confirmed or turned into a 'store-error' denial. */
  confirm(decision: Decision): Promise<Decision>;
  enqueue(input: EnqueueInput): Promise<EnqueueResult>;
  /** `base` with its claims and acknowledgements confirmed (the rest unchanged). */
  queue(base: QueueStore): QueueStore;
  close(): Promise<void>;
}

/** Attempts, and the pause between them, to send an unconfirmed acknowledgement again. */
const ACK_ATTEMPTS = 20;
const ACK_RETRY_MS = 250;

export function createDurability(store: LimiterStore, options: ResolvedDurability): Durability {
  if (!store.durableWrites) {
    throw new ConfigError('ERR_BL_DURABILITY', '`durability` needs a RedisStore (standalone, Sentinel or Cluster): the MemoryStore has no replicas');
  }
  const writes: DurableWrites = store.durableWrites();
  const { replicas, timeoutMs } = options;
  const confirmed = (written: object): Promise<boolean> =>
    writes.confirm(written, replicas, timeoutMs).then(
      (n) => n >= replicas,
      () => false,
    );
  return {
    store: { ...store, admit: (input) => (input.defer ? writes.admit(input) : store.admit(input)) },
    async confirm(decision) {
      if (decision.job === undefined || (await confirmed(decision))) return decision;
      const { job: _unconfirmed, ...denied } = decision;
      return { ...denied, allowed: false, reason: 'store-error', retryAfterMs: Math.max(decision.retryAfterMs, RETRY_AFTER_MS) };
    },
    async enqueue(input) {
      const result = await writes.enqueue(input);
      if (result.status !== 'written' && result.status !== 'duplicate') return result;
      if (await confirmed(result)) return result;
      throw new StoreError(
        'ERR_BL_NOT_DURABLE',
        `The job was not confirmed on ${replicas} replica(s) within ${timeoutMs} ms; enqueue it again with the same idempotency key`,
      );
    },
    queue: (base) => confirmedQueue(base, writes, confirmed),
    close: () => writes.close(),
  };
}

function confirmedQueue(base: QueueStore, writes: DurableWrites, confirmed: (written: object) => Promise<boolean>): QueueStore {
  const claimed = async <R extends ClaimResult>(r: R): Promise<R> => (r.claimed.length === 0 || (await confirmed(r)) ? r : { ...r, claimed: [] });
  /** false: the master there is now says the run does not hold the job. */
  const ackAgain = async (id: string, token: string, resultJson: string | undefined, keepMs: number): Promise<boolean> => {
    for (let attempt = 0; attempt < ACK_ATTEMPTS; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, ACK_RETRY_MS));
      try {
        const again = await writes.complete(id, token, resultJson, keepMs);
        // Refused: the first one counted after all (then confirm it: WAIT covers the writes before this reply), or
        // the run lost the job.
        if (!again.completed && (await base.getJob(id))?.state !== 'completed') return false;
        if (await confirmed(again)) return true;
      } catch {
        // the failover is still under way: try again
      }
    }
    return false;
  };
  /** A failure's acknowledgement not confirmed, sent again the same way; `first` is what the unconfirmed one did. */
  const failAgain = async (id: string, token: string, outcome: FailOutcome, first: FailResult): Promise<FailResult> => {
    for (let attempt = 0; attempt < ACK_ATTEMPTS; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, ACK_RETRY_MS));
      try {
        const again = await writes.fail(id, token, outcome);
        // Stale: the first one counted after all (the job no longer runs; confirmed like the completion above), or
        // the run lost the job.
        const counted = again.state !== 'stale' || (await base.getJob(id))?.state !== 'active';
        if (!counted) return again;
        if (await confirmed(again)) return again.state === 'stale' ? first : again;
      } catch {
        // the failover is still under way: try again
      }
    }
    throw new StoreError(
      'ERR_BL_NOT_DURABLE',
      `The failure of job ${id} was not confirmed on the replicas after ${ACK_ATTEMPTS} attempts; the job runs again when its lease ends`,
    );
  };
  const overrides: Partial<QueueStore> = {
    claimMany: (leaseMs, max) => writes.claimMany(leaseMs, max).then(claimed),
    async completeAndClaim(id, token, resultJson, keepMs, leaseMs, max) {
      const r = await writes.completeAndClaim(id, token, resultJson, keepMs, leaseMs, max);
      if (!r.completed) return claimed(r);
      if (await confirmed(r)) return r;
      return { completed: await ackAgain(id, token, resultJson, keepMs), claimed: [], wakeMs: 0 };
    },
    async complete(id, token, resultJson, keepMs) {
      const r = await writes.complete(id, token, resultJson, keepMs);
      if (!r.completed || (await confirmed(r))) return r.completed;
      return ackAgain(id, token, resultJson, keepMs);
    },
    async fail(id, token, outcome) {
      const r = await writes.fail(id, token, outcome);
      if (r.state === 'stale' || (await confirmed(r))) return r;
      return failAgain(id, token, outcome, r);
    },
  };
  return new Proxy(base, {
    get: (target, prop, receiver) => {
      const own = overrides[prop as keyof QueueStore];
      if (own !== undefined) return own;
      const value: unknown = Reflect.get(target, prop, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
