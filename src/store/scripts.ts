/**
 * The admission scripts' wrappers (admit, admit-many, admit-defer, admit-defer-many, peek, reset, release): their
 * arguments, and their replies read and checked (the queue's scripts have generated bindings instead).
 */
import type { AdmitReply } from '../core/decision';
import { plansSpanMs } from '../core/fair-share';
import { rulesConfigText, type RuleSpec } from '../core/rules';
import type { RunMany, RunOne } from '../redis/script-batcher';
import { StoreError } from '../errors';
import type { AdmitInput, DeferInput, LimiterSpec, PeekInput } from '../types';
import { loadScript, scriptCommand, type LoadedScript, type RedisClient, type ScriptArg } from './script-loader';

export { LUA_DIR, defineScripts, loadScript, runBound, scriptCommand } from './script-loader';
export type { LoadedScript, RedisClient, ScriptArg } from './script-loader';

/**
 * The config block every fair-share script takes (fs_config in lua/includes/fair-share.lua): one argument of
 * 9 comma-separated numbers (10 with plans: their longest rule span), then the rules, built once per limiter
 * and, with plans, once per plan's rules (each script argument costs the client time on every call).
 */
export function fairShareConfig(
  spec: LimiterSpec & { readonly maxGroups?: number; readonly probationMs?: number },
  defaultMaxGroups: number,
  rules: readonly RuleSpec[] | undefined = spec.rules,
): string {
  return (
    [
      spec.limit,
      spec.windowMs,
      spec.burst,
      spec.reserve,
      spec.idleMs,
      spec.epochMs,
      spec.sustained ? 1 : 0,
      spec.maxGroups ?? defaultMaxGroups,
      spec.probationMs ?? 0,
      ...(spec.plans ? [plansSpanMs(spec)] : []),
    ].join(',') + rulesConfigText(rules)
  );
}

/** How many rules a config block carries (each adds 2 fields, and the policy 1, to an admission reply). */
const ruleCountOf = (config: string): number => {
  const at = config.indexOf(';');
  return at < 0 ? 0 : (JSON.parse(config.slice(at + 1)) as number[]).length / 5;
};

export const admitScript = (): LoadedScript => loadScript('admit.lua', 4);

/** The keys admit.lua and admit-many.lua take: groups, seen, then the concurrency leases and slots. */
export type AdmitKeys = readonly [string, string, string, string];

/**
 * admit.lua on one client for one limiter: KEYS groups, seen, leases, slots; ARGV config block, now override µs,
 * group, weight, cost, and with a concurrency cap the cap and `leaseMs`.
 */
export function admitCommand(client: RedisClient, keys: AdmitKeys, config: string, leaseMs: number): RunOne<AdmitInput, AdmitReply> {
  const run = scriptCommand(client, admitScript());
  const [groupsKey, seenKey, leasesKey, slotsKey] = keys;
  const rules = ruleCountOf(config);
  return (nowUs, r) => {
    const cap = r.concurrency ?? 0;
    if (cap <= 0)
      return run(groupsKey, seenKey, leasesKey, slotsKey, config, nowUs, r.group, r.weight, r.cost).then((reply) => parseAdmitReply(reply, rules));
    return run(groupsKey, seenKey, leasesKey, slotsKey, config, nowUs, r.group, r.weight, r.cost, cap, leaseMs).then((reply) =>
      parseAdmitReply(reply, rules, true),
    );
  };
}

export const peekScript = (): LoadedScript => loadScript('peek.lua', 2);

/** peek.lua on one client for one limiter: KEYS groups, seen; ARGV config block, now override µs, group, weight. */
export function peekCommand(
  client: RedisClient,
  keys: readonly [string, string],
  config: string,
): (nowUs: number, r: PeekInput) => Promise<AdmitReply> {
  const run = scriptCommand(client, peekScript());
  const [groupsKey, seenKey] = keys;
  const rules = ruleCountOf(config);
  return (nowUs, r) => run(groupsKey, seenKey, config, nowUs, r.group, r.weight).then((reply) => parseAdmitReply(reply, rules));
}

export const resetScript = (): LoadedScript => loadScript('reset.lua', 2);

/** reset.lua on one client for one limiter: KEYS groups, seen; ARGV group. True when the group had state. */
export function resetCommand(client: RedisClient, keys: readonly [string, string]): (group: string) => Promise<boolean> {
  const run = scriptCommand(client, resetScript());
  const [groupsKey, seenKey] = keys;
  return (group) =>
    run(groupsKey, seenKey, group).then((reply) => {
      if (reply !== 0 && reply !== 1) throw new StoreError('ERR_BL_STORE_REPLY', `Unexpected reset reply: ${String(reply)}`);
      return reply === 1;
    });
}

export const admitManyScript = (): LoadedScript => loadScript('admit-many.lua', 4);

const capped = (requests: readonly AdmitInput[]): boolean => requests.some((r) => (r.concurrency ?? 0) > 0);

/** admit-many.lua on one client for one limiter: several checks decided in one call, one reply each, in order. */
export function admitManyCommand(client: RedisClient, keys: AdmitKeys, config: string, leaseMs: number): RunMany<AdmitInput, AdmitReply> {
  const run = scriptCommand(client, admitManyScript());
  const rules = ruleCountOf(config);
  const fields = ADMIT_FIELDS + ruleFields(rules);
  const parse = (reply: unknown[], at: number): AdmitReply => admitFields(reply, at, rules);
  const parseCapped = (reply: unknown[], at: number): AdmitReply => admitFields(reply, at, rules, true);
  return (nowUs, requests) => {
    // the concurrency fields only when a check of this call has a cap: a batch without costs what it did
    if (capped(requests)) {
      const args: ScriptArg[] = [...keys, config, nowUs, leaseMs];
      for (const r of requests) args.push(r.group, r.weight, r.cost, r.concurrency ?? 0);
      return run(...args).then((reply) => parseReplies(reply, requests.length, fields + CONCURRENCY_FIELDS, parseCapped));
    }
    const args: ScriptArg[] = [...keys, config, nowUs, 0];
    for (const r of requests) args.push(r.group, r.weight, r.cost);
    return run(...args).then((reply) => parseReplies(reply, requests.length, fields, parse));
  };
}

/** A check that may be deferred. */
export type DeferringInput = AdmitInput & { readonly defer: DeferInput };

/** What the deferral step of admit-defer.lua did: 0 admitted, 1 written, 2 duplicate, -2 backlog full, -3 horizon. */
export interface DeferReply {
  readonly status: 0 | 1 | 2 | -2 | -3;
  readonly id: string;
  readonly runAt: number;
}

export interface AdmitDeferReply {
  readonly admit: AdmitReply;
  readonly defer: DeferReply;
}

/** The queue key block's length (src/queue/queue-keys.ts, job_keys() in lua/includes/job.lua). */
const QUEUE_KEY_COUNT = 17;
/** The deferring scripts take the queue key block, then the concurrency leases and slots. */
export const admitDeferScript = (): LoadedScript => loadScript('admit-defer.lua', QUEUE_KEY_COUNT + 2);
export const admitDeferManyScript = (): LoadedScript => loadScript('admit-defer-many.lua', QUEUE_KEY_COUNT + 2);

const deferArgs = (r: DeferringInput): ScriptArg[] => [
  r.group,
  r.weight,
  r.cost,
  r.defer.type,
  r.defer.payload,
  r.defer.idempotencyKey ?? '',
  r.defer.maxBacklog,
  r.defer.maxDeferMs,
  r.defer.groupConcurrency ?? 0,
  r.plan ?? '',
];

/**
 * admit-defer.lua: KEYS the queue key block, leases, slots; ARGV config block, now µs, group, weight, cost, job
 * fields, and with a concurrency cap the cap and `leaseMs`.
 */
export function admitDeferCommand(
  client: RedisClient,
  keys: readonly string[],
  config: string,
  leaseMs: number,
): RunOne<DeferringInput, AdmitDeferReply> {
  const run = scriptCommand(client, admitDeferScript());
  const rules = ruleCountOf(config);
  return (nowUs, r) => {
    const cap = r.concurrency ?? 0;
    const args = cap > 0 ? [...deferArgs(r), cap, leaseMs] : deferArgs(r);
    return run(...keys, config, nowUs, ...args).then((reply) => {
      if (!Array.isArray(reply) || reply.length !== DEFER_FIELDS + ruleFields(rules) + (cap > 0 ? CONCURRENCY_FIELDS : 0)) {
        throw new StoreError('ERR_BL_STORE_REPLY', `Unexpected admit-defer reply: ${String(reply)}`);
      }
      return admitDeferFields(reply, 0, rules, cap > 0);
    });
  };
}

/** admit-defer-many.lua: several deferring checks in one call, one reply each, in order. */
export function admitDeferManyCommand(
  client: RedisClient,
  keys: readonly string[],
  config: string,
  leaseMs: number,
): RunMany<DeferringInput, AdmitDeferReply> {
  const run = scriptCommand(client, admitDeferManyScript());
  const rules = ruleCountOf(config);
  const fields = DEFER_FIELDS + ruleFields(rules);
  return (nowUs, requests) => {
    const withCap = capped(requests);
    const args: ScriptArg[] = [...keys, config, nowUs, withCap ? leaseMs : 0];
    for (const r of requests) {
      args.push(...deferArgs(r));
      if (withCap) args.push(r.concurrency ?? 0);
    }
    const parse = (reply: unknown[], at: number): AdmitDeferReply => admitDeferFields(reply, at, rules, withCap);
    return run(...args).then((reply) => parseReplies(reply, requests.length, fields + (withCap ? CONCURRENCY_FIELDS : 0), parse));
  };
}

const ADMIT_FIELDS = 12;
const DEFER_FIELDS = 15;
/** With a concurrency cap a reply ends with the lease ('' = none) and the group's leases held. */
const CONCURRENCY_FIELDS = 2;
/** With rules a reply carries the policy, then remaining and resetMs per rule. */
const ruleFields = (rules: number): number => (rules > 0 ? 1 + 2 * rules : 0);

/** admit-defer.lua's 15 fields at `at`: admit.lua's first 11, deferStatus, jobId, runAtMs, admit.lua's emptyMs. */
function admitDeferFields(reply: unknown[], at: number, rules: number, withCap = false): AdmitDeferReply {
  const status: unknown = reply[at + 11];
  if (status !== 0 && status !== 1 && status !== 2 && status !== -2 && status !== -3) {
    throw new StoreError('ERR_BL_STORE_REPLY', `Unexpected admit-defer status: ${String(status)}`);
  }
  const end = at + 15 + ruleFields(rules) + (withCap ? CONCURRENCY_FIELDS : 0);
  const admitted = [...reply.slice(at, at + 11), reply[at + 14], ...reply.slice(at + 15, end)];
  return { admit: admitFields(admitted, 0, rules, withCap), defer: { status, id: String(reply[at + 12]), runAt: Number(reply[at + 13]) } };
}

/** A *-many script's reply: `count` replies of `fields` values each, one after the other in one flat array. */
function parseReplies<T>(reply: unknown, count: number, fields: number, parse: (reply: unknown[], at: number) => T): T[] {
  if (!Array.isArray(reply) || reply.length !== count * fields) {
    throw new StoreError(
      'ERR_BL_STORE_REPLY',
      `Unexpected reply for ${count} checks: ${Array.isArray(reply) ? `${reply.length} fields` : String(reply)}`,
    );
  }
  const out = new Array<T>(count);
  for (let i = 0; i < count; i++) out[i] = parse(reply, i * fields);
  return out;
}

export function parseAdmitReply(reply: unknown, rules = 0, withCap = false): AdmitReply {
  if (!Array.isArray(reply) || reply.length !== ADMIT_FIELDS + ruleFields(rules) + (withCap ? CONCURRENCY_FIELDS : 0)) {
    throw new StoreError('ERR_BL_STORE_REPLY', `Unexpected admit reply: ${String(reply)}`);
  }
  return admitFields(reply, 0, rules, withCap);
}

function admitFields(reply: unknown[], at: number, rules: number, withCap = false): AdmitReply {
  const n = (i: number): number => {
    const v: unknown = reply[at + i];
    if (typeof v !== 'number') throw new StoreError('ERR_BL_STORE_REPLY', `Unexpected admit reply field ${i}: ${String(v)}`);
    return v;
  };
  const colour = n(1);
  const group: unknown = reply[at + 10];
  const parsed: AdmitReply = {
    allowed: n(0) === 1,
    colour: colour === 0 || colour === 1 ? colour : 2,
    remaining: n(2),
    limit: n(3),
    guaranteed: n(4),
    retryMs: n(5),
    hintMs: n(6),
    resetMs: n(7),
    active: n(8),
    atMs: n(9),
    emptyMs: n(11),
    group: typeof group === 'string' ? group : String(group),
    policy: rules > 0 ? n(12) : 0,
    rules: rules > 0 ? Array.from({ length: 2 * rules }, (_, i) => n(13 + i)) : false,
  };
  if (withCap) {
    const c = ADMIT_FIELDS + ruleFields(rules);
    const lease: unknown = reply[at + c];
    parsed.lease = typeof lease === 'string' ? lease : String(lease);
    parsed.held = n(c + 1);
  }
  return parsed;
}

export const releaseScript = (): LoadedScript => loadScript('release.lua', 2);

/** release.lua: KEYS leases, slots; ARGV the leases. Per lease, true when it was held. */
export function releaseCommand(client: RedisClient, leasesKey: string, slotsKey: string): RunMany<string, boolean> {
  const run = scriptCommand(client, releaseScript());
  return (_now, leases) =>
    run(leasesKey, slotsKey, ...leases).then((reply) => {
      if (!Array.isArray(reply) || reply.length !== leases.length)
        throw new StoreError('ERR_BL_STORE_REPLY', `Unexpected release reply: ${String(reply)}`);
      return reply.map((r) => r === 1);
    });
}
