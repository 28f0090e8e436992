/**
 * ioredis ends a Sentinel client for good (status 'end', no more reconnects) when its failover detector fires
 * while the client is still asking the sentinels for the master: connect() rejects with "Connection is closed."
 * and the client gives up. Seen in test/redis/sentinel-failover.test.ts under load. A limiter must not stay
 * down until a restart for that: connections bulk-limiter opens itself are reopened at their next use, and the
 * user's client is reopened by the breaker's probe (src/limiter/health.ts), but only when it ended unasked: never after
 * the user's own quit() or disconnect().
 */

/** What reopening needs of an ioredis Redis or Cluster client (structural: the declarations import no ioredis). */
export interface Reopenable {
  readonly status: string;
  connect(): Promise<void>;
  on?(event: string, listener: () => void): unknown;
}

/** Reopens `client` when it has ended and was not closed on purpose (`closed()`); its retryStrategy does the rest. */
export function reopenIfEnded(client: Reopenable, closed: () => boolean = () => false): void {
  if (client.status !== 'end' || closed()) return;
  client.connect().catch(() => undefined); // a failure here is retried at the next use or probe
}

/**
 * Watches a client the user owns. A quit() or disconnect() ends it through 'close' (or with `manuallyClosing`
 * set); the failover race ends a connecting client. Only the latter counts as ended unasked.
 */
export function watchForUnaskedEnd(client: Reopenable): void {
  if (watched.has(client) || typeof client.on !== 'function') return;
  watched.set(client, false);
  let previous = client.status;
  for (const status of ['connecting', 'connect', 'ready', 'close', 'reconnecting', 'end'] as const) {
    client.on(status, () => {
      if (status === 'end') watched.set(client, previous !== 'close' && !(client as { manuallyClosing?: boolean }).manuallyClosing);
      else if (status === 'ready') watched.set(client, false);
      previous = status;
    });
  }
}
const watched = new WeakMap<Reopenable, boolean>();

/** Reopens the user's client only when `watchForUnaskedEnd` saw it end unasked. */
export function reopenIfEndedUnasked(client: Reopenable): void {
  if (watched.get(client) === true) reopenIfEnded(client);
}
