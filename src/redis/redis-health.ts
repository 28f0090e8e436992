/**
 * What a RedisStore reports outside of admissions (the store contract's optional `probe`, `firstConnection`
 * and `serverInfo`): the breaker's probe, the first-connection gate and INFO's role, version and eviction policy.
 */
import type { ServerInfo } from '../types';
import { reopenIfEndedUnasked, watchForUnaskedEnd, type Reopenable } from './reopen';

/** What these read of an ioredis Redis or Cluster (structural: the declarations need no ioredis types). */
export interface HealthClient extends Reopenable {
  readonly status: string;
  once(event: 'ready', listener: () => void): unknown;
  info(): Promise<string>;
  exists(...keys: string[]): Promise<number>;
  set(key: string, value: string, px: 'PX', ms: number): Promise<unknown>;
}

/** The breaker's probe: EXISTS on one of the limiter's keys (routed to its slot on a Cluster). */
export function redisProbe(client: HealthClient, key: string): (closed: () => boolean) => Promise<unknown> {
  // A client ioredis ended unasked (a failover race) is reopened here; see ./reopen.ts.
  watchForUnaskedEnd(client);
  return (closed) => {
    if (!closed()) reopenIfEndedUnasked(client);
    return client.exists(key);
  };
}

/** The breaker's probe while Redis refuses writes: a SET of a key under the limiter's hash tag, for a second. */
export function redisWriteProbe(client: HealthClient, key: string): () => Promise<unknown> {
  return () => client.set(key, '1', 'PX', 1000);
}

/**
 * Resolves when a client still making its first connection is ready; undefined when it is ready (or connects
 * lazily, on its first command). Until then a failed command means "not connected yet", not an outage.
 */
export function firstConnection(client: HealthClient): Promise<void> | undefined {
  if (client.status !== 'connecting' && client.status !== 'connect' && client.status !== 'reconnecting') return undefined;
  // One listener per client, however many limiters share it.
  let ready = readyOf.get(client);
  if (ready === undefined) {
    ready = new Promise((resolve) => client.once('ready', () => resolve()));
    readyOf.set(client, ready);
  }
  return ready;
}
const readyOf = new WeakMap<HealthClient, Promise<void>>();

/** INFO, parsed: role, version, eviction policy and whether maxmemory is set. */
export async function readRedisInfo(client: Pick<HealthClient, 'info'>): Promise<ServerInfo> {
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
