/**
 * Every Redis key name is built here. All keys of one limiter share one hash tag, `{<prefix>:<name>}`,
 * so multi-key scripts never cross a Cluster slot. Group ids and job ids are never part of a key name:
 * they are only hash fields and set members, so untrusted input cannot shape a key.
 */

export interface LimiterKeys {
  /** HASH: the queue's counters (job id and lease token sequences). */
  readonly counters: string;
  /**
   * HASH: group → packed per-group state, and under the field `''` (never a group id) the limiter's own
   * state: global bucket, Σweights, water level, epoch and trim bookkeeping, dispatcher virtual time.
   */
  readonly groups: string;
  /** ZSET: group → last-seen ms (trimmed inside the scripts). */
  readonly seen: string;
  /** ZSET: job member → due ms (not yet due). */
  readonly delayed: string;
  /** ZSET: job member → fair-queueing start tag (due, waiting for budget). */
  readonly pending: string;
  /** LIST: jobs admitted by the dispatcher, bounded by readyMax. */
  readonly ready: string;
  /** HASH: job id → job record. */
  readonly jobs: string;
  /** ZSET: leased job id → lease deadline ms. */
  readonly active: string;
  /** ZSET: dead job id → time it died. */
  readonly dead: string;
  /** ZSET: completed job id → time its record expires. */
  readonly completed: string;
  /** HASH: idempotency key → job id. */
  readonly idempotency: string;
  /** HASH: group → jobs it has waiting (not completed, not dead), for maxBacklog. */
  readonly backlog: string;
  /** STRING: the dispatcher lease (one dispatcher busy, the others idle). */
  readonly dispatcherLease: string;
  /** LIST: wake-up tokens for blocked workers. */
  readonly wake: string;
  /** HASH: group → its jobs with a group concurrency cap now in ready or active. */
  readonly inflight: string;
  /** ZSET (score 0, lex order): capped jobs waiting for a slot of their group, one lex range per group. */
  readonly held: string;
  /** ZSET: every job not started → the ms it waits to start from (its due time), for the oldest waiting. */
  readonly since: string;
  /** ZSET (score 0, lex order): the same per group, "<#group>:<group> <since> <id>", one lex range per group. */
  readonly groupSince: string;
  /** ZSET: request-concurrency lease '<ms>-<seq>:<group>' → expiry ms (lua/includes/concurrency.lua). */
  readonly leases: string;
  /** HASH: group → its request-concurrency leases held; '' → the lease sequence. */
  readonly slots: string;
  /** HASH: reservation id → its record (lua/includes/settle.lua); '' → the id sequence. */
  readonly reservations: string;
  /** ZSET: reservation id → the ms its record lapses. */
  readonly reservationsDue: string;
  /** HASH: group → its override, '<expiresMs>|<setMs>|<settings JSON>' (lua/includes/overrides.lua). */
  readonly overrides: string;
  /** ZSET: group → the ms its override expires (overrides with a ttl only). */
  readonly overridesDue: string;
  /** ZSET (score 0, lex order): every group with an override, for paging. */
  readonly overridesIndex: string;
}

export function limiterKeys(prefix: string, name: string): LimiterKeys {
  const tag = `{${prefix}:${name}}`;
  return {
    counters: `${tag}:counters`,
    groups: `${tag}:groups`,
    seen: `${tag}:seen`,
    delayed: `${tag}:delayed`,
    pending: `${tag}:pending`,
    ready: `${tag}:ready`,
    jobs: `${tag}:jobs`,
    active: `${tag}:active`,
    dead: `${tag}:dead`,
    completed: `${tag}:completed`,
    idempotency: `${tag}:idempotency`,
    backlog: `${tag}:backlog`,
    dispatcherLease: `${tag}:dispatcher`,
    wake: `${tag}:wake`,
    inflight: `${tag}:inflight`,
    held: `${tag}:held`,
    since: `${tag}:since`,
    groupSince: `${tag}:gsince`,
    leases: `${tag}:leases`,
    slots: `${tag}:slots`,
    reservations: `${tag}:reservations`,
    reservationsDue: `${tag}:rdue`,
    overrides: `${tag}:overrides`,
    overridesDue: `${tag}:odue`,
    overridesIndex: `${tag}:oindex`,
  };
}

/** Every key of a limiter, for teardown. */
export function allKeys(keys: LimiterKeys): string[] {
  return Object.values(keys);
}
