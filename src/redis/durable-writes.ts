/**
 * The connection a 202's writes go over (see src/queue/durability.ts). Redis WAIT confirms the writes made on
 * the connection it runs on, so a write counts as confirmed only when WAIT answered on the very session (one
 * TCP connection) that carried it: after a reconnect or a failover, WAIT on the new session would confirm
 * nothing about the old one's writes, so those stay unconfirmed (the client's retry finds the job again).
 * Standalone and Sentinel: a duplicate of the user's client. Cluster: all keys of a limiter share one hash
 * tag, so one slot and one master; the writes go over a standalone connection to that master, found in the
 * Cluster client's slot table, and found again after a MOVED reply or a lost connection (a failover
 * promotes a replica). That connection never reconnects by itself (as ioredis's own node connections), so
 * ioredis cannot end it in a way nobody notices: an ended one is replaced at the next write.
 *
 * WAIT blocks its connection, so writes go over lanes (up to MAX_LANES connections), each on one with no WAIT
 * in flight; a lane's confirmations share a WAIT sent after their replies.
 */
import { StoreError } from '../errors';
import type { AdmitInput, Decision, DurableWrites } from '../types';
import type { EnqueueInput, EnqueueResult, QueueStore } from '../types';
import { reopenIfEnded } from './reopen';
import type { RedisClient } from './admission-scripts';

/** What durable writes need of an ioredis `Redis` connection (structural: the declarations import no ioredis). */
export interface WriteConnection extends RedisClient {
  on(event: 'error' | 'close' | 'end', listener: (error?: unknown) => void): unknown;
  call(command: string, ...args: Array<string | number>): Promise<unknown>;
  disconnect(): void;
  readonly status: string;
  connect(): Promise<void>;
  duplicate(override?: Record<string, unknown>): WriteConnection;
}

/** What durable writes need of an ioredis `Cluster` (its slot table: slot → [master "host:port", replicas…]). */
interface ClusterClient extends RedisClient {
  readonly isCluster: true;
  readonly slots: ReadonlyArray<readonly string[] | undefined>;
  nodes(role: 'master' | 'all'): Array<WriteConnection & { readonly options: { host?: string; port?: number } }>;
  refreshSlotsCache(callback?: (error?: unknown) => void): void;
  cluster(subcommand: 'KEYSLOT', key: string): Promise<unknown>;
}

/** The writes of one limiter over one connection (its own script batcher and queue on that connection). */
export interface Writer {
  admit(input: AdmitInput): Promise<Decision>;
  enqueue(input: EnqueueInput): Promise<EnqueueResult>;
  /** The queue's claims and acknowledgements on this connection. */
  readonly queue: Pick<QueueStore, 'claimMany' | 'completeAndClaim' | 'complete' | 'fail'>;
}

/** One TCP session of a connection: broken once that socket closed. */
interface Session {
  broken: boolean;
}

interface Link {
  readonly connection: WriteConnection;
  readonly writer: Writer;
  session: Session;
  /** Cluster: no longer the slot's master connection (ended, or answered MOVED). */
  stale: boolean;
  /** Writes answered on this connection so far. */
  replies: number;
  /** The WAIT in flight: it confirms every write answered before it was sent (`covers` of them). */
  waiting: { readonly covers: number; readonly timeoutMs: number; readonly acknowledged: Promise<number> } | undefined;
}

/** Most connections durable writes open. */
export const MAX_LANES = 8;

function openLink(connection: WriteConnection, writerOn: (client: RedisClient) => Writer): Link {
  const link: Link = { connection, writer: writerOn(connection), session: { broken: false }, stale: false, replies: 0, waiting: undefined };
  connection.on('error', () => undefined); // its failures reach the caller as rejected writes
  connection.on('close', () => {
    link.session.broken = true;
    link.session = { broken: false };
  });
  return link;
}

/**
 * A MOVED reply (also wrapped in a StoreError): the slot has another master now (a failover, a finished
 * resharding). An ASK reply (a resharding under way) changes nothing yet: that write fails and the next one
 * tries the same master again.
 */
const isMoved = (error: unknown): boolean =>
  /(^|: )MOVED \d+ /.test((error as Error)?.message ?? '') || (error instanceof StoreError && isMoved(error.cause));

/** The connection writes go over now, and how to let it go. */
interface Links {
  current(): Link | Promise<Link>;
  close(): void;
}

/** One lane: its connection (replaced after a failover), and how many confirmations wait on it. */
interface Lane {
  readonly links: Links;
  waits: number;
}

/**
 * Durable writes over `client` (a `Redis` or a `Cluster`) for the limiter whose keys hash like `slotKey`.
 * `writerOn` builds the limiter's writes on a given connection.
 */
export function openDurableWrites(client: RedisClient, slotKey: string, writerOn: (client: RedisClient) => Writer): DurableWrites {
  let closed = false;
  const written = new WeakMap<object, { link: Link; session: Session; lane: Lane; reply: number }>();
  const openLinks = (): Links =>
    (client as Partial<ClusterClient>).isCluster
      ? slotMasterLinks(client as ClusterClient, slotKey, writerOn, () => closed)
      : duplicateLink(client as unknown as WriteConnection, writerOn, () => closed);
  const lanes: Lane[] = [];
  const freeLane = (): Lane => {
    const idle = lanes.find((lane) => lane.waits === 0);
    if (idle) return idle;
    if (lanes.length < MAX_LANES) {
      const lane: Lane = { links: openLinks(), waits: 0 };
      lanes.push(lane);
      return lane;
    }
    return lanes.reduce((least, lane) => (lane.waits < least.waits ? lane : least));
  };

  const send = async <T extends object>(write: (writer: Writer) => Promise<T>): Promise<T> => {
    if (closed) throw new StoreError('ERR_BL_LIMITER_CLOSED', 'The limiter is closed');
    const lane = freeLane();
    const link = await lane.links.current();
    const session = link.session;
    try {
      const result = await write(link.writer);
      written.set(result, { link, session, lane, reply: ++link.replies });
      return result;
    } catch (error) {
      if (isMoved(error)) link.stale = true;
      throw error;
    }
  };

  /** The WAIT in flight if sent after the `reply`-th reply on `link`, else a new one. */
  const waitFor = (link: Link, reply: number, replicas: number, timeoutMs: number): Promise<number> => {
    const inFlight = link.waiting;
    if (inFlight && inFlight.covers >= reply && inFlight.timeoutMs >= timeoutMs) return inFlight.acknowledged;
    const acknowledged = link.connection.call('WAIT', replicas, timeoutMs).then(Number);
    const waiting = { covers: link.replies, timeoutMs, acknowledged };
    link.waiting = waiting;
    const done = (): void => {
      if (link.waiting === waiting) link.waiting = undefined;
    };
    acknowledged.then(done, done);
    return acknowledged;
  };

  return {
    admit: (input) => send((writer) => writer.admit(input)),
    enqueue: (input) => send((writer) => writer.enqueue(input)),
    claimMany: (leaseMs, max) => send((writer) => writer.queue.claimMany(leaseMs, max)),
    completeAndClaim: (id, token, resultJson, keepMs, leaseMs, max) =>
      send((writer) => writer.queue.completeAndClaim(id, token, resultJson, keepMs, leaseMs, max)),
    complete: (id, token, resultJson, keepMs) => send(async (writer) => ({ completed: await writer.queue.complete(id, token, resultJson, keepMs) })),
    fail: (id, token, outcome) => send((writer) => writer.queue.fail(id, token, outcome)),
    async confirm(result, replicas, timeoutMs) {
      const at = written.get(result);
      if (at === undefined || at.session.broken) return 0;
      at.lane.waits += 1;
      try {
        const acknowledged = await waitFor(at.link, at.reply, replicas, timeoutMs);
        // The reply came over the write's own session only if that session is still unbroken now.
        return at.session.broken ? 0 : acknowledged;
      } finally {
        at.lane.waits -= 1;
      }
    },
    close: async () => {
      closed = true;
      for (const lane of lanes) lane.links.close();
    },
  };
}

/** Standalone and Sentinel: one duplicate of the user's client, reconnecting as the user's client does. */
function duplicateLink(client: WriteConnection, writerOn: (client: RedisClient) => Writer, closed: () => boolean): Links {
  const link = openLink(client.duplicate(), writerOn);
  return {
    current: () => (reopenIfEnded(link.connection, closed), link),
    close: () => link.connection.disconnect(),
  };
}

/**
 * Cluster: a standalone connection to the master of the limiter's slot, from the Cluster client's slot table
 * (refreshed first when the last connection ended or was MOVED). A connection of ioredis's own to that node
 * is duplicated, so it has the user's options (password, TLS, NAT mapping already applied to host and port).
 */
function slotMasterLinks(cluster: ClusterClient, slotKey: string, writerOn: (client: RedisClient) => Writer, closed: () => boolean): Links {
  let slot: number | undefined;
  let link: Link | undefined;
  let resolving: Promise<Link> | undefined;
  let refresh = false;

  const resolve = async (): Promise<Link> => {
    slot ??= Number(await cluster.cluster('KEYSLOT', slotKey));
    if (refresh) await new Promise<void>((done) => cluster.refreshSlotsCache(() => done())); // errors: use the table as it is
    refresh = true; // any later resolution follows a failure
    const master = cluster.slots[slot]?.[0];
    const nodes = cluster.nodes('all');
    const [host, port] = master === undefined ? [] : [master.slice(0, master.lastIndexOf(':')), Number(master.slice(master.lastIndexOf(':') + 1))];
    const node = nodes.find((n) => n.options.host === host && n.options.port === port) ?? nodes[0];
    if (master === undefined || node === undefined) {
      throw new StoreError('ERR_BL_STORE_FAILED', `No master is known for slot ${slot} of Redis Cluster yet`);
    }
    if (closed()) throw new StoreError('ERR_BL_LIMITER_CLOSED', 'The limiter is closed');
    // retryStrategy null (as ioredis's node connections): a lost connection ends, and the next write looks again.
    const connection = node.duplicate({ host, port, readOnly: false, retryStrategy: null, lazyConnect: true });
    const opened = openLink(connection, writerOn);
    connection.on('end', () => {
      opened.stale = true;
    });
    return opened;
  };

  return {
    current: () => {
      if (link !== undefined && !link.stale) return link;
      if (resolving === undefined) {
        link?.connection.disconnect();
        link = undefined;
        resolving = resolve().then(
          (opened) => {
            link = opened;
            resolving = undefined;
            return opened;
          },
          (error: unknown) => {
            resolving = undefined;
            throw error;
          },
        );
      }
      return resolving;
    },
    close: () => {
      link?.connection.disconnect();
      void resolving?.then(
        (opened) => opened.connection.disconnect(),
        () => undefined,
      );
    },
  };
}
