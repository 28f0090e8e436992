/**
 * What the limiter asks its store outside of admissions: the breaker's probe, the first-connection gate, and
 * `limiter.health()` with the Redis server's role, version and eviction policy (read with INFO). A RedisStore
 * is recognised by its `client`; any other store is probed with a queue read (`queue.counts()`), which changes nothing.
 */
import type { OutageGuard } from './outage';
import { toStoreError, withTimeout } from './store-call';
import type { Scheduler } from './scheduler';
import { RedisStore } from './redis/redis-store';
import { reopenIfEndedUnasked, watchForUnaskedEnd, type Reopenable } from './redis/reopen';
import type { LimiterStore, Logger, Store } from './types';

export type HealthStatus = 'up' | 'degraded' | 'down';

/** What the Redis server behind a RedisStore says about itself. */
export interface RedisHealth {
  /** `master` or `slave` (a replica: the limiter's writes fail there). */
  readonly role: string;
  readonly version: string;
  readonly maxmemoryPolicy: string;
}

/** `limiter.health()`: answered within `timeoutMs`, never rejected. */
export interface Health {
  /**
   * `'up'`: the store answers and the breaker is closed. `'degraded'`: the store answers, but the breaker is
   * still open (checks are answered by `onStoreError` until the next probe) or Redis is a replica.
   * `'down'`: the store did not answer within `timeoutMs`.
   */
  readonly status: HealthStatus;
  /** How long the store took to answer (ms); `timeoutMs` when it did not. */
  readonly latencyMs: number;
  /** Why the status is not `'up'`: the store's last error. */
  readonly lastError?: string;
  /** On a RedisStore whose server answered. */
  readonly redis?: RedisHealth;
}

/** What health reads of an ioredis Redis or Cluster (structural: the declarations need no ioredis types). */
interface Client extends Reopenable {
  readonly status: string;
  once(event: 'ready', listener: () => void): unknown;
  info(): Promise<string>;
  exists(...keys: string[]): Promise<number>;
}

/** The ioredis client behind a RedisStore (typed structurally there, so declarations need no ioredis). */
function clientOf(store: Store): Client | undefined {
  return store instanceof RedisStore ? (store.client as unknown as Client) : undefined;
}

/** The breaker's probe: EXISTS on one of the limiter's keys (routed to its slot on a Cluster), or `queue.counts()`. */
export function storeProbe(store: Store, bound: LimiterStore, name: string, closed: () => boolean = () => false): () => Promise<unknown> {
  const client = clientOf(store);
  if (store instanceof RedisStore && client) {
    const key = store.keys(name).groups;
    // A client ioredis ended unasked (a failover race) is reopened here; see redis/reopen.ts.
    watchForUnaskedEnd(client);
    return () => {
      if (!closed()) reopenIfEndedUnasked(client);
      return client.exists(key);
    };
  }
  return () => bound.queue.counts();
}

/**
 * Resolves when a Redis client still making its first connection is ready; undefined when it is ready (or
 * connects lazily, on its first command). Until then a failed command means "not connected yet", not an outage.
 */
export function firstConnection(store: Store): Promise<void> | undefined {
  const client = clientOf(store);
  if (client === undefined) return undefined;
  if (client.status !== 'connecting' && client.status !== 'connect' && client.status !== 'reconnecting') return undefined;
  // One listener per client, however many limiters share it.
  let ready = readyOf.get(client);
  if (ready === undefined) {
    ready = new Promise((resolve) => client.once('ready', () => resolve()));
    readyOf.set(client, ready);
  }
  return ready;
}
const readyOf = new WeakMap<Client, Promise<void>>();

/** INFO, parsed: role, version, eviction policy and whether maxmemory is set. */
export async function readRedisInfo(client: Client): Promise<RedisHealth & { readonly maxmemory: number }> {
  const text = await client.info();
  const fields = new Map<string, string>();
  for (const line of text.split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon > 0 && !line.startsWith('#')) fields.set(line.slice(0, colon), line.slice(colon + 1));
  }
  return {
    role: fields.get('role') ?? 'unknown',
    version: fields.get('redis_version') ?? 'unknown',
    maxmemoryPolicy: fields.get('maxmemory_policy') ?? 'unknown',
    maxmemory: Number(fields.get('maxmemory') ?? 0),
  };
}

/**
 * Whether Redis may evict the limiter's keys: only once `maxmemory` is set (0 = no limit, nothing is evicted),
 * and under any policy but `noeviction`. The limiter's keys carry TTLs, so `volatile-*` policies may evict
 * them too (admission state, queued jobs).
 */
export function mayEvict(info: { readonly maxmemoryPolicy: string; readonly maxmemory: number }): boolean {
  return info.maxmemory > 0 && info.maxmemoryPolicy !== 'noeviction';
}

export interface HealthCheck {
  health(): Promise<Health>;
  /** Reads INFO once in the background (after the first connection) to warn about eviction early. */
  checkEvictionSoon(connecting: Promise<void> | undefined): void;
}

export function createHealthCheck(options: {
  readonly store: Store;
  readonly probe: () => Promise<unknown>;
  readonly guard: OutageGuard;
  readonly timeoutMs: number;
  readonly logger: Logger;
  readonly name: string;
  /** Time and timers of the health check's timeout. @defaultValue the real one */
  readonly scheduler?: Scheduler;
}): HealthCheck {
  const { store, probe, guard, timeoutMs, logger, name, scheduler } = options;
  const client = clientOf(store);
  let warned = false;
  const warnIfEvicting = (info: { readonly maxmemoryPolicy: string; readonly maxmemory: number }): void => {
    if (warned || !mayEvict(info)) return;
    warned = true;
    logger.warn(
      `WRN_BL_MAXMEMORY_POLICY: Redis evicts keys under memory pressure (maxmemory-policy ${info.maxmemoryPolicy}, ` +
        `maxmemory ${info.maxmemory}); the limiter's keys carry TTLs, so even volatile-* policies may drop its state and queued jobs ` +
        `(limiter "${name}"). Set maxmemory-policy noeviction.`,
    );
  };

  return {
    async health(): Promise<Health> {
      const started = performance.now();
      try {
        const [, info] = await withTimeout(Promise.all([probe(), client ? readRedisInfo(client) : undefined]), timeoutMs, scheduler);
        const latencyMs = performance.now() - started;
        if (info) warnIfEvicting(info);
        const redis = info && { role: info.role, version: info.version, maxmemoryPolicy: info.maxmemoryPolicy };
        const replica = redis !== undefined && redis.role !== 'master';
        const status: HealthStatus = guard.failing || replica ? 'degraded' : 'up';
        const lastError =
          status === 'up' ? undefined : ((guard.failing ? guard.lastError?.message : undefined) ?? `Redis is a ${redis?.role ?? 'replica'}`);
        return { status, latencyMs, ...(lastError === undefined ? {} : { lastError }), ...(redis ? { redis } : {}) };
      } catch (error) {
        return { status: 'down', latencyMs: performance.now() - started, lastError: toStoreError(error).message };
      }
    },
    checkEvictionSoon(connecting) {
      if (!client) return;
      void (connecting ?? Promise.resolve()).then(() => readRedisInfo(client)).then(warnIfEvicting, () => undefined);
    },
  };
}
