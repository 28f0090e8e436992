/**
 * What the limiter asks its store outside of admissions, through the store contract's optional methods: the
 * breaker's probe, and `limiter.health()` with the server's role, version and eviction policy (`serverInfo`).
 * A store without a probe is probed with a queue read (`queue.counts()`), which changes nothing.
 */
import { StoreError } from '../errors';
import type { OutageGuard } from './outage/outage';
import { toStoreError, withTimeout } from '../util/store-call';
import { realScheduler, type Scheduler } from '../util/scheduler';
import type { ConfigMismatch, LimiterStore, Logger, ServerInfo } from '../types';

export type HealthStatus = 'up' | 'degraded' | 'down';

/** What the Redis server behind a RedisStore says about itself. */
export type RedisHealth = Pick<ServerInfo, 'role' | 'version' | 'maxmemoryPolicy'>;

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
  /**
   * Another process wrote other options under this limiter's name, seen by a check in the last minute
   * (docs/operations.md "Config drift"): `options` names what differs. It does not change `status`.
   */
  readonly configMismatch?: ConfigMismatch;
}

/** The breaker's probe: the store's own (`LimiterStore.probe`), or a queue read, which changes nothing. */
export function storeProbe(bound: LimiterStore, closed: () => boolean = () => false): () => Promise<unknown> {
  const probe = bound.probe?.bind(bound);
  return probe ? () => probe(closed) : () => bound.queue.counts();
}

/**
 * Whether Redis may evict the limiter's keys: only once `maxmemory` is set (0 = no limit, nothing is evicted),
 * and under any policy but `noeviction`. The limiter's keys carry TTLs, so `volatile-*` policies may evict
 * them too (admission state, queued jobs).
 */
export function mayEvict(info: { readonly maxmemoryPolicy: string; readonly maxmemory: number }): boolean {
  return info.maxmemory > 0 && info.maxmemoryPolicy !== 'noeviction';
}

/** How often INFO is read for the eviction policy (it may change at runtime). */
export const EVICTION_CHECK_MS = 10_000;

export interface HealthCheck {
  health(): Promise<Health>;
  watchEviction(connecting: Promise<void> | undefined): void;
  /** While Redis may evict: the error deferrals and enqueue fail with. */
  readonly evicting: StoreError | undefined;
  close(): void;
}

export function createHealthCheck(options: {
  readonly store: LimiterStore;
  readonly probe: () => Promise<unknown>;
  readonly guard: OutageGuard;
  readonly timeoutMs: number;
  readonly logger: Logger;
  readonly name: string;
  /** Time and timers of the health check's timeout. @defaultValue the real one */
  readonly scheduler?: Scheduler;
}): HealthCheck {
  const { store, probe, guard, timeoutMs, logger, name, scheduler } = options;
  const serverInfo = store.serverInfo?.bind(store);
  const drift = store.configDrift;
  const clock = scheduler ?? realScheduler;
  let evicting: StoreError | undefined;
  let stopWatch: (() => void) | undefined;
  let closed = false;
  const warnIfEvicting = (info: { readonly maxmemoryPolicy: string; readonly maxmemory: number }): void => {
    if (!mayEvict(info)) {
      evicting = undefined;
      return;
    }
    if (evicting) return;
    evicting = new StoreError(
      'ERR_BL_MAY_EVICT',
      `Redis may evict the queue's keys (maxmemory-policy ${info.maxmemoryPolicy}, maxmemory ${info.maxmemory}): ` +
        `deferrals and enqueue are refused until maxmemory-policy is noeviction (limiter "${name}")`,
    );
    logger.warn(
      `WRN_BL_MAXMEMORY_POLICY: ${evicting.message}; the limiter's keys carry TTLs, so even volatile-* policies may drop its state and ` +
        `queued jobs. Set maxmemory-policy noeviction.`,
    );
  };
  const readEviction = (): Promise<void> =>
    serverInfo ? withTimeout(serverInfo(), timeoutMs, clock).then(warnIfEvicting, () => undefined) : Promise.resolve();
  const watch = (): void => {
    if (closed) return;
    stopWatch = clock.setTimeout(() => void readEviction().then(watch), EVICTION_CHECK_MS, { unref: true });
  };

  return {
    async health(): Promise<Health> {
      const started = performance.now();
      try {
        const [, info, configMismatch] = await withTimeout(Promise.all([probe(), serverInfo?.(), drift?.mismatch()]), timeoutMs, scheduler);
        const latencyMs = performance.now() - started;
        if (info) warnIfEvicting(info);
        const redis = info && { role: info.role, version: info.version, maxmemoryPolicy: info.maxmemoryPolicy };
        const replica = redis !== undefined && redis.role !== 'master';
        const status: HealthStatus = guard.failing || replica || evicting ? 'degraded' : 'up';
        const lastError =
          status === 'up'
            ? undefined
            : ((guard.failing ? guard.lastError?.message : undefined) ?? evicting?.message ?? `Redis is a ${redis?.role ?? 'replica'}`);
        return {
          status,
          latencyMs,
          ...(lastError === undefined ? {} : { lastError }),
          ...(redis ? { redis } : {}),
          ...(configMismatch ? { configMismatch } : {}),
        };
      } catch (error) {
        return { status: 'down', latencyMs: performance.now() - started, lastError: toStoreError(error).message };
      }
    },
    watchEviction(connecting) {
      if (!serverInfo) return;
      void (connecting ?? Promise.resolve()).then(readEviction).then(watch, () => undefined);
    },
    get evicting() {
      return evicting;
    },
    close() {
      closed = true;
      stopWatch?.();
    },
  };
}

/**
 * WRN_BL_CONFIG_MISMATCH, once per limiter: another process wrote other options under this limiter's name
 * (docs/operations.md "Config drift"). `health()` keeps reporting it while the checks see it.
 */
export function watchConfigDrift(store: LimiterStore, name: string, logger: Logger): void {
  let warned = false;
  store.configDrift?.watch((mismatch) => {
    if (warned) return;
    warned = true;
    const what = mismatch.options.length > 0 ? mismatch.options.join('; ') : 'which options differ is not known yet';
    logger.warn(
      `WRN_BL_CONFIG_MISMATCH: another process uses other options under the limiter name "${name}": ${what}. ` +
        `Each process decides with its own options against the shared state until they agree (docs/operations.md#config-drift).`,
    );
  });
}
