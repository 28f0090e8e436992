/**
 * A 202 is a promise: with `durability: { replicas, timeoutMs }` a deferral (or an enqueue) is confirmed on
 * that many replicas (Redis WAIT) before it is answered. The job's writes go over a connection of their own
 * (WAIT confirms one connection's writes and blocks it meanwhile), so live checks never wait behind it.
 * Unconfirmed: `check()` answers a denial with reason 'store-error' and no job (the middleware's 503 +
 * Retry-After; a retry with the same Idempotency-Key finds the same job), `enqueue()` rejects.
 */
import { ConfigError, StoreError } from '../errors';
import type { Decision, DurableWrites, LimiterStore } from '../types';
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
  close(): Promise<void>;
}

export function createDurability(store: LimiterStore, options: ResolvedDurability): Durability {
  if (!store.durableWrites) {
    throw new ConfigError('ERR_BL_DURABILITY', '`durability` needs a RedisStore (standalone, Sentinel or Cluster): the MemoryStore has no replicas');
  }
  const writes: DurableWrites = store.durableWrites();
  const { replicas, timeoutMs } = options;
  const confirmed = (written: Decision | EnqueueResult): Promise<boolean> =>
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
    close: () => writes.close(),
  };
}
