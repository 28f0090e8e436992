/**
 * The admission scripts' callers (admit, admit-many, admit-defer, admit-defer-many, peek, reset, release), over
 * their generated bindings (lua-sources.generated.ts, from each script's header): a check's fields become the
 * typed arguments, and the decoder is told what the reply holds (the lane's rule count, whether the call had a cap).
 */
import { plansSpanMs } from '../core/fair-share';
import { classConfigText } from '../core/fair-share-class';
import { adaptiveConfigText } from '../core/adaptive';
import { rulesConfigText } from '../core/rules';
import type { RuleSpec } from '../types';
import type { RunMany, RunOne } from './script-batcher';
import * as lua from './lua-sources.generated';
import type {
  AdaptiveStatus,
  AdmitInput,
  DeferInput,
  LimiterSpec,
  OverrideInput,
  OverrideWrite,
  PeekInput,
  ReportInput,
  SettleInput,
} from '../types';
import { reservationTail } from '../core/settle';
import { runBound, runDecoded, type RedisClient } from './script-loader';

export type { LoadedScript, RedisClient, ScriptArg } from './script-loader';

/**
 * The config block every fair-share script takes (fs_config in lua/includes/fair-share.lua): one argument of
 * 9 comma-separated numbers (10 with plans: their longest rule span), then the rules, built once per limiter
 * and, with plans, once per plan's rules (each script argument costs the client time on every call).
 */
export function fairShareConfigBlock(
  spec: LimiterSpec,
  rules: readonly RuleSpec[] | undefined = spec.rules,
  className?: string,
  claims = false,
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
      spec.maxGroups,
      spec.probationMs,
      ...(spec.plans ? [plansSpanMs(spec)] : []),
    ].join(',') +
    classConfigText(spec, className, claims) +
    adaptiveConfigText(spec) +
    rulesConfigText(rules)
  );
}

/**
 * An admission lane's config block: the limiter's fingerprint first (lua/includes/config-drift.lua; the same in
 * every lane), so each check notices another process's options in the call it makes anyway.
 */
export function admissionConfigBlock(fingerprint: string, spec: LimiterSpec, rules: readonly RuleSpec[] | undefined, className?: string): string {
  return `${fingerprint}#${fairShareConfigBlock(spec, rules, className)}`;
}

/** config-check.lua: publishes this process's description, answers the one published under `other` ('' = unknown). */
export function configCheckCommand(
  client: RedisClient,
  keys: lua.ConfigCheckKeys,
  fingerprint: string,
  description: string,
): (nowMs: number, other: string) => Promise<string> {
  const k = lua.configCheckScript.keys(keys);
  return (nowMs, other) =>
    runBound(client, lua.configCheckScript, k, { nowMs: Math.floor(nowMs), fingerprint, description, other }).then((r) => r.description);
}

/** One lane's config block (./plan-lanes.ts) and how many rules it carries (each adds its mark to a reply). */
export interface Lane {
  readonly config: string;
  readonly rules: number;
}

/** admit.lua on one client for one lane: with a concurrency cap the cap and `leaseMs` go too. */
export function admitCommand(client: RedisClient, keys: lua.AdmitKeys, lane: Lane, leaseMs: number): RunOne<AdmitInput, lua.Admission> {
  const k = lua.admitScript.keys(keys);
  const { config, rules } = lane;
  const uncapped = { rules, capped: false };
  const capped = { rules, capped: true };
  return (nowMs, r) => {
    const cap = r.concurrency ?? 0;
    if (cap <= 0) return runDecoded(client, lua.admitScript, k, { nowMs, config, group: r.group, weight: r.weight, cost: r.cost }, uncapped);
    return runDecoded(client, lua.admitScript, k, { nowMs, config, group: r.group, weight: r.weight, cost: r.cost, cap, leaseMs }, capped);
  };
}

/** peek.lua on one client for one lane. */
export function peekCommand(client: RedisClient, keys: lua.PeekKeys, lane: Lane): (nowMs: number, r: PeekInput) => Promise<lua.Admission> {
  const k = lua.peekScript.keys(keys);
  const { config, rules } = lane;
  const params = { rules, capped: false };
  return (nowMs, r) => runDecoded(client, lua.peekScript, k, { nowMs, config, group: r.group, weight: r.weight }, params);
}

/** reserve.lua on one client for one lane: admit.lua's decision, and when allowed a reservation to settle later. */
export function reserveCommand(
  client: RedisClient,
  keys: lua.ReserveKeys,
  lane: Lane,
  leaseMs: number,
  holdMs: number,
): (nowMs: number, r: AdmitInput) => Promise<lua.Reserved> {
  const k = lua.reserveScript.keys(keys);
  const { config, rules } = lane;
  const uncapped = { rules, capped: false };
  const capped = { rules, capped: true };
  return (nowMs, r) => {
    const cap = r.concurrency ?? 0;
    const args = { nowMs, config, group: r.group, weight: r.weight, cost: r.cost, holdMs, tail: reservationTail(r.plan) };
    if (cap <= 0) return runDecoded(client, lua.reserveScript, k, args, uncapped);
    return runDecoded(client, lua.reserveScript, k, { ...args, cap, leaseMs }, capped);
  };
}

/** settle.lua on one client for one lane (the reservation's plan's). */
export function settleCommand(
  client: RedisClient,
  keys: lua.SettleKeys,
  lane: Lane,
): (nowMs: number, input: SettleInput) => Promise<lua.SettleReply> {
  const k = lua.settleScript.keys(keys);
  const { config } = lane;
  return (nowMs, input) =>
    runDecoded(client, lua.settleScript, k, { nowMs, config, reservation: input.reservation, actual: input.actual }, undefined);
}

/** reset.lua on one client for one limiter: true when the group had state. */
export function resetCommand(client: RedisClient, keys: lua.ResetKeys): (group: string) => Promise<boolean> {
  const k = lua.resetScript.keys(keys);
  return (group) => runBound(client, lua.resetScript, k, { group });
}

const OUTCOMES = { ok: 0, throttled: 1, read: 2 } as const;

/** report.lua: one upstream outcome moves the adaptive limit (the config block must carry `adaptive`). */
export function reportCommand(client: RedisClient, keys: lua.ReportKeys, config: string): (nowMs: number, r: ReportInput) => Promise<AdaptiveStatus> {
  const k = lua.reportScript.keys(keys);
  return (nowMs, r) =>
    runBound(client, lua.reportScript, k, { nowMs, config, outcome: OUTCOMES[r.outcome], retryAfterMs: r.retryAfterMs }).then((reply) => ({
      limit: reply.limit,
      change: reply.change,
    }));
}

/** release.lua: per lease, true when it was held. */
export function releaseCommand(client: RedisClient, keys: lua.ReleaseKeys): RunMany<string, boolean> {
  const k = lua.releaseScript.keys(keys);
  return (_now, leases) => runDecoded(client, lua.releaseScript, k, { leases }, { count: leases.length });
}

const capped = (requests: readonly AdmitInput[]): boolean => requests.some((r) => (r.concurrency ?? 0) > 0);

/** admit-many.lua on one client for one lane: several checks decided in one call, one reply each, in order. */
export function admitManyCommand(client: RedisClient, keys: lua.AdmitManyKeys, lane: Lane, leaseMs: number): RunMany<AdmitInput, lua.Admission> {
  const k = lua.admitManyScript.keys(keys);
  const { config, rules } = lane;
  return (nowMs, requests) => {
    // leaseMs 0 when no check of this call has a cap: the replies carry no concurrency fields then
    const withCap = capped(requests);
    const checks = requests.map((r): lua.AdmitCheck => ({ group: r.group, weight: r.weight, cost: r.cost, cap: r.concurrency ?? 0 }));
    const args = { nowMs, config, leaseMs: withCap ? leaseMs : 0, checks };
    return runDecoded(client, lua.admitManyScript, k, args, { checks: checks.length, rules, capped: withCap });
  };
}

/** A check that may be deferred. */
export type DeferringInput = AdmitInput & { readonly defer: DeferInput };

const deferCheck = (r: DeferringInput): lua.DeferCheck => ({
  group: r.group,
  weight: r.weight,
  cost: r.cost,
  type: r.defer.type,
  payload: r.defer.payload,
  idempotencyKey: r.defer.idempotencyKey ?? '',
  maxBacklog: r.defer.maxBacklog,
  maxDeferMs: r.defer.maxDeferMs,
  groupConcurrency: r.defer.groupConcurrency ?? 0,
  plan: r.plan ?? '',
  cap: r.concurrency ?? 0,
});

/** admit-defer.lua on one client for one lane: with a concurrency cap the cap and `leaseMs` go too. */
export function admitDeferCommand(client: RedisClient, keys: lua.AdmitDeferKeys, lane: Lane, leaseMs: number): RunOne<DeferringInput, lua.Deferral> {
  const k = lua.admitDeferScript.keys(keys);
  const { config, rules } = lane;
  const uncapped = { rules, capped: false };
  const withCap = { rules, capped: true };
  return (nowMs, r) => {
    const { cap, ...check } = deferCheck(r);
    if (cap <= 0) return runDecoded(client, lua.admitDeferScript, k, { nowMs, config, ...check }, uncapped);
    return runDecoded(client, lua.admitDeferScript, k, { nowMs, config, ...check, cap, leaseMs }, withCap);
  };
}

/** admit-defer-many.lua on one client for one lane: several deferring checks in one call, one reply each, in order. */
export function admitDeferManyCommand(
  client: RedisClient,
  keys: lua.AdmitDeferManyKeys,
  lane: Lane,
  leaseMs: number,
): RunMany<DeferringInput, lua.Deferral> {
  const k = lua.admitDeferManyScript.keys(keys);
  const { config, rules } = lane;
  return (nowMs, requests) => {
    const withCap = capped(requests);
    const args = { nowMs, config, leaseMs: withCap ? leaseMs : 0, checks: requests.map(deferCheck) };
    return runDecoded(client, lua.admitDeferManyScript, k, args, { checks: requests.length, rules, capped: withCap });
  };
}

/** override-set.lua, override-get.lua, override-delete.lua and override-list.lua on one client for one limiter. */
export function overrideCommands(client: RedisClient, keys: lua.OverrideSetKeys) {
  const all = lua.overrideSetScript.keys(keys);
  const one = lua.overrideGetScript.keys(keys);
  return {
    set: (nowMs: number, input: OverrideInput): Promise<OverrideWrite> =>
      runBound(client, lua.overrideSetScript, all, {
        nowMs,
        group: input.group,
        settings: input.settings,
        ttlMs: input.ttlMs,
        maxOverrides: input.maxOverrides,
        spanMs: input.spanMs,
      }),
    get: (nowMs: number, group: string): Promise<string | undefined> =>
      runBound(client, lua.overrideGetScript, one, { nowMs, group }).then((raw) => (raw === '' ? undefined : raw)),
    delete: (nowMs: number, group: string): Promise<boolean> => runBound(client, lua.overrideDeleteScript, all, { nowMs, group }),
    list: (nowMs: number, cursor: string, count: number): Promise<Array<[string, string]>> =>
      runBound(client, lua.overrideListScript, all, { nowMs, cursor, count }).then((flat) => {
        const out: Array<[string, string]> = [];
        for (let i = 0; i + 1 < flat.length; i += 2) out.push([flat[i]!, flat[i + 1]!]);
        return out;
      }),
  };
}
