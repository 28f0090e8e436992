/** What a store implements for one limiter: the admission side of the contract. */
import type { EnqueueInput, EnqueueResult, QueueStore } from './queue-store';
import type { Decision, GroupStatus, SettleResult } from './decision';
import type { AdaptiveStatus, LimiterSpec, ReportInput } from './limiter-spec';

/** A reservation settled (validated by the limiter). */
export interface SettleInput {
  readonly reservation: string;
  /** Integer ≥ 0: the units the work really took. */
  readonly actual: number;
}

/** An override to write (validated by the limiter): the group's settings as the scripts read them. */
export interface OverrideInput {
  readonly group: string;
  /** The settings JSON (lua/includes/overrides.lua). */
  readonly settings: string;
  /** 0: no expiry. */
  readonly ttlMs: number;
  /** Most overrides the limiter holds; a new group's override beyond it is not written. */
  readonly maxOverrides: number;
  /** The longest span (ms) the override's rules keep state for (0: none): the limiter's keys live that long. */
  readonly spanMs: number;
}

/** What writing an override did (lua/override-set.lua). */
export interface OverrideWrite {
  /** false: refused, the limiter holds `maxOverrides` already. */
  readonly written: boolean;
  /** When it expires, store clock ms; 0: never. */
  readonly expiresMs: number;
  /** When it was written, store clock ms. */
  readonly setMs: number;
  /** The overrides the limiter holds after the call. */
  readonly held: number;
}

/** What a store reads for `limiter.peek()` (validated by the limiter). */
export interface PeekInput {
  readonly group: string;
  /** Integer ≥ 1: the weight a check would bring (it sets the group's share). */
  readonly weight: number;
  /** The plan a check would name (its rules); absent: the limiter's own rules. */
  readonly plan?: string;
  /** The class a check would name; absent: 'default'. */
  readonly class?: string;
}

/** One admission request as the store sees it (validated and bounded by the limiter). */
export interface AdmitInput {
  readonly group: string;
  /** Integer ≥ 1. */
  readonly weight: number;
  /** Integer ≥ 1, ≤ the limiter's maximum admissible cost. */
  readonly cost: number;
  /** When present, a denied request is written as a job in the same store call. */
  readonly defer?: DeferInput;
  /** A plan of the limiter (`LimiterSpec.plans`): the check is decided under that plan's rules. */
  readonly plan?: string;
  /** A class of the limiter (`LimiterSpec.classes`): the check is decided in that class; absent: 'default'. */
  readonly class?: string;
  /**
   * Most requests of the group in flight at once (a slot is taken with the admission, all-or-nothing, and
   * lasts until `release` or the limiter's lease ends); absent or 0 = no cap.
   */
  readonly concurrency?: number;
  /** When allowed, record a reservation to settle later (`Decision.reservation`); not with `defer`. */
  readonly reserve?: boolean;
}

export interface DeferInput {
  /** Handler name the worker runs. */
  readonly type: string;
  /** The job's payload, already JSON-encoded and size-checked. */
  readonly payload: string;
  /** Same key → same job: a client retrying a request does not create a second job. */
  readonly idempotencyKey?: string;
  /** Most jobs one group may have waiting (not yet completed or dead). */
  readonly maxBacklog: number;
  /** Longest estimated wait (runAt − now) a job may have; beyond it the request is rejected instead. */
  readonly maxDeferMs: number;
  /** Most jobs of the group (with a cap) running at once, across all workers; absent or 0 = no cap. */
  readonly groupConcurrency?: number;
}

/**
 * A store bound to one limiter: the operations that limiter runs, each one atomic, and the limiter's queue
 * (deferred jobs, dispatcher, workers) over the same state, so a deferral and its admission share one call.
 */
export interface LimiterStore {
  /** The limiter's queue (`limiter.queue`): the same object for the life of the binding, `destroy()` included. */
  readonly queue: QueueStore;
  /** One atomic admission (and, when asked and denied, deferral). One round trip on Redis. */
  admit(input: AdmitInput): Promise<Decision>;
  /** A group's state as a check of cost 1 would see it now; writes nothing (lua/peek.lua). */
  peek(input: PeekInput): Promise<GroupStatus>;
  /**
   * Forgets one group's admission state (lua/reset.lua): its share and rule state, its probation sighting;
   * not its deferred jobs, nor any other group. True when there was state to forget. Idempotent.
   */
  reset(group: string): Promise<boolean>;
  /** Frees a concurrency slot (`decision.concurrency.lease`) at once: true when it was held. Idempotent. */
  release?(lease: string): Promise<boolean>;
  /**
   * Settles a reservation (`AdmitInput.reserve`) with its actual cost, at most once, atomically across the
   * policies that spent it (lua/settle.lua). Absent: the store cannot (checks with `reserve` are refused).
   */
  settle?(input: SettleInput): Promise<SettleResult>;
  /**
   * Per-group overrides (lua/override-*.lua), read by every admission in the same call as its decision. Values are
   * stored strings, '<expiresMs>|<setMs>|<settings JSON>'. Absent: the store has none (setOverride rejects).
   */
  setOverride?(input: OverrideInput): Promise<OverrideWrite>;
  /** The group's override in force (its stored value); undefined when none. */
  getOverride?(group: string): Promise<string | undefined>;
  /** Removes the group's override: true when it had one in force. */
  deleteOverride?(group: string): Promise<boolean>;
  /** Up to `count` overrides after `cursor` ('' = the first), by the byte order of their groups: [group, value]. */
  listOverrides?(cursor: string, count: number): Promise<Array<[string, string]>>;
  /** One upstream outcome for the adaptive limit (lua/report.lua); only with `spec.adaptive`. */
  report?(input: ReportInput): Promise<AdaptiveStatus>;
  /** Removes every key of this limiter, its queue's included (tests, teardown). */
  destroy(): Promise<void>;
  /** Releases what the store opened for this limiter (the workers' blocking connection); the client stays open. */
  close?(): Promise<void>;
  /**
   * Writes that can be confirmed on replicas (Redis WAIT): deferring checks and enqueues on a connection of
   * their own (on Redis Cluster, to the master of the limiter's slot), and `confirm` waiting for that
   * connection's writes. Absent where the store cannot (MemoryStore).
   */
  durableWrites?(): DurableWrites;
  /**
   * A cheap read the breaker sends while the store fails, to learn it answers again; absent: `queue.counts()`.
   * `closed()` is true once the limiter has closed (a store must not reopen connections for it then).
   */
  probe?(closed: () => boolean): Promise<unknown>;
  /** The breaker's probe while the store refuses writes. */
  writeProbe?(): Promise<unknown>;
  /** Resolves when the store's first connection is ready; undefined when there is nothing to wait for. */
  firstConnection?(): Promise<void> | undefined;
  /** What the server behind the store says about itself (`limiter.health()` reports it). */
  serverInfo?(): Promise<ServerInfo>;
  /**
   * Whether processes wrote other options under this limiter's name (docs/operations.md "Config drift"): the checks notice it
   * in the calls they make anyway, and the store names what differs at most about once a minute.
   */
  readonly configDrift?: ConfigDrift;
}

/** Another process's options under this limiter's name differ from this one's (`limiter.health()`). */
export interface ConfigMismatch {
  /** One line per option that differs, e.g. `limit: this process 100, another 200`; empty until known. */
  readonly options: readonly string[];
  /** When this process first saw it (ms since the epoch, on the store's clock). */
  readonly since: number;
}

/** See `LimiterStore.configDrift`. */
export interface ConfigDrift {
  /** `listener` is called when a check has seen another config and the store has named what differs. */
  watch(listener: (mismatch: ConfigMismatch) => void): void;
  /** The mismatch the checks saw in the last minute (after a naming under way ends); undefined: none. */
  mismatch(): Promise<ConfigMismatch | undefined>;
}

/** What a server-backed store reports about its server (Redis: INFO). */
export interface ServerInfo {
  /** `master` or `slave` (a replica: the limiter's writes fail there). */
  readonly role: string;
  readonly version: string;
  /** Redis `maxmemory-policy`: anything but `noeviction` may drop the limiter's keys once `maxmemory` is set. */
  readonly maxmemoryPolicy: string;
  /** Bytes; 0 = no limit. */
  readonly maxmemory: number;
}

/**
 * See `LimiterStore.durableWrites`. Claims and acknowledgements (a completion or a failure) go over the same
 * connections (`claimMany`, `completeAndClaim`, `fail` as the queue's).
 */
export interface DurableWrites extends Pick<QueueStore, 'claimMany' | 'completeAndClaim' | 'fail'> {
  admit(input: AdmitInput): Promise<Decision>;
  enqueue(input: EnqueueInput): Promise<EnqueueResult>;
  /**
   * How many replicas acknowledged `written` (what this object's `admit`, `enqueue`, claims or acknowledgements answered)
   * and every write before it on its connection, waiting at most `timeoutMs`. 0 when that connection was lost
   * since (WAIT on a new connection says nothing about the old one's writes).
   */
  confirm(written: object, replicas: number, timeoutMs: number): Promise<number>;
  complete(id: string, token: string, resultJson: string | undefined, keepMs: number): Promise<{ readonly completed: boolean }>;
  close(): Promise<void>;
}

/** A place to keep limiter state: `RedisStore` or `MemoryStore`. */
export interface Store {
  /** Binds the store to one limiter. Called once per limiter, at construction. */
  bind(spec: LimiterSpec): LimiterStore;
}
