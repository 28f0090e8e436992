/**
 * Lua scripts: read from lua/ once, `--!include includes/<file>.lua` lines expanded, registered per ioredis
 * client with defineCommand under a versioned name (EVALSHA, EVAL again on NOSCRIPT). Never call them
 * inside MULTI (no NOSCRIPT fallback there). Other scripts (the queue's) reuse loadScript/runScript.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Cluster, Redis } from 'ioredis';
import type { AdmitReply } from '../core/decision';
import type { AdmitRequest } from './admit-batch';
import { StoreError } from '../errors';
import type { AdmitInput, DeferInput, LimiterSpec } from '../types';

export type RedisClient = Redis | Cluster;
export type ScriptArg = string | number | Buffer;

/** Works from src/store (ts) and dist/store (js). */
export const LUA_DIR = join(__dirname, '..', '..', 'lua');
const SCRIPT_VERSION = 'v1';

export interface LoadedScript {
  /** The defineCommand name: bl_<file>_v1_<sha8>, so two package versions never share a name. */
  readonly command: string;
  readonly file: string;
  readonly numberOfKeys: number;
  readonly lua: string;
  readonly sha1: string;
}

const INCLUDE = /^--!include\s+(\S+)\s*$/gm;

function expandIncludes(text: string, seen: Set<string>): string {
  return text.replace(INCLUDE, (_line, rel: string) => {
    if (seen.has(rel)) return `-- (already included: ${rel})`;
    seen.add(rel);
    return expandIncludes(readFileSync(join(LUA_DIR, rel), 'utf8'), seen);
  });
}

const cache = new Map<string, LoadedScript>();

/** Reads `lua/<file>` (once) with its includes expanded. */
export function loadScript(file: string, numberOfKeys: number): LoadedScript {
  const cached = cache.get(file);
  if (cached) return cached;
  const lua = expandIncludes(readFileSync(join(LUA_DIR, file), 'utf8'), new Set());
  const sha1 = createHash('sha1').update(lua).digest('hex');
  const base = file.replace(/\.lua$/, '').replace(/[^A-Za-z0-9]/g, '_');
  const script = { command: `bl_${base}_${SCRIPT_VERSION}_${sha1.slice(0, 8)}`, file, numberOfKeys, lua, sha1 };
  cache.set(file, script);
  return script;
}

type ScriptCommand = (...args: ScriptArg[]) => Promise<unknown>;

/** Registers scripts on a client (idempotent per client). */
export function defineScripts(client: RedisClient, scripts: readonly LoadedScript[]): void {
  const methods = client as unknown as Record<string, ScriptCommand | undefined>;
  for (const s of scripts) {
    if (typeof methods[s.command] !== 'function') client.defineCommand(s.command, { numberOfKeys: s.numberOfKeys, lua: s.lua });
  }
}

/** The script's command on a client (defined on first use): call it with `(...keys, ...args)`. */
export function scriptCommand(client: RedisClient, script: LoadedScript): ScriptCommand {
  defineScripts(client, [script]);
  const fn = (client as unknown as Record<string, ScriptCommand>)[script.command]!;
  return fn.bind(client);
}

/** Runs one script: EVALSHA, with EVAL on NOSCRIPT (ioredis). */
export function runScript(client: RedisClient, script: LoadedScript, keys: readonly string[], args: readonly ScriptArg[]): Promise<unknown> {
  defineScripts(client, [script]);
  const fn = (client as unknown as Record<string, ScriptCommand>)[script.command]!;
  return fn.call(client, ...keys, ...args);
}

/**
 * The config block every fair-share script takes (fs_config in lua/includes/fair-share.lua): one argument of
 * 8 comma-separated numbers, built once per limiter (each script argument costs the client ~0.3 µs per call).
 */
export function fairShareConfig(spec: LimiterSpec & { readonly maxGroups?: number }, defaultMaxGroups: number): string {
  return [spec.limit, spec.windowMs, spec.burst, spec.reserve, spec.idleMs, spec.epochMs, spec.sustained ? 1 : 0,
    spec.maxGroups ?? defaultMaxGroups].join(',');
}

export const admitScript = (): LoadedScript => loadScript('admit.lua', 2);

/**
 * admit.lua on one client for one limiter: KEYS groups, seen; ARGV config block, now override µs, group,
 * weight, cost. The hot path: the command is looked up once, and each call is one promise.
 */
export function admitCommand(client: RedisClient, keys: readonly [string, string], config: string):
  (nowUs: number, group: string, weight: number, cost: number) => Promise<AdmitReply> {
  const run = scriptCommand(client, admitScript());
  const [groupsKey, seenKey] = keys;
  return (nowUs, group, weight, cost) => run(groupsKey, seenKey, config, nowUs, group, weight, cost).then(parseAdmitReply);
}

export const admitManyScript = (): LoadedScript => loadScript('admit-many.lua', 2);

/** admit-many.lua on one client for one limiter: several checks decided in one call, one reply each, in order. */
export function admitManyCommand(client: RedisClient, keys: readonly [string, string], config: string):
  (nowUs: number, requests: readonly AdmitRequest[]) => Promise<AdmitReply[]> {
  const run = scriptCommand(client, admitManyScript());
  const [groupsKey, seenKey] = keys;
  return (nowUs, requests) => {
    const args: ScriptArg[] = [groupsKey, seenKey, config, nowUs];
    for (const r of requests) args.push(r.group, r.weight, r.cost);
    return run(...args).then((reply) => parseAdmitReplies(reply, requests.length));
  };
}

export const admitDeferScript = (): LoadedScript => loadScript('admit-defer.lua', 13);

/** What the deferral step of admit-defer.lua did: 0 admitted, 1 written, 2 duplicate, -2 backlog full, -3 horizon. */
export interface DeferReply {
  readonly status: 0 | 1 | 2 | -2 | -3;
  readonly id: string;
  readonly runAt: number;
}

/** admit-defer.lua: KEYS the queue key block; ARGV config block, now µs, group, weight, cost, job fields. */
export async function admitDefer(client: RedisClient, keys: readonly string[], config: string, nowUs: number,
  input: AdmitInput & { readonly defer: DeferInput }): Promise<{ admit: AdmitReply; defer: DeferReply }> {
  const d = input.defer;
  const reply = await runScript(client, admitDeferScript(), keys, [config, nowUs, input.group, input.weight, input.cost,
    d.type, d.payload, d.idempotencyKey ?? '', d.maxBacklog, d.maxDeferMs]);
  if (!Array.isArray(reply) || reply.length !== 15) throw new StoreError('ERR_BL_STORE_REPLY', `Unexpected admit-defer reply: ${String(reply)}`);
  const status: unknown = reply[11];
  if (status !== 0 && status !== 1 && status !== 2 && status !== -2 && status !== -3) {
    throw new StoreError('ERR_BL_STORE_REPLY', `Unexpected admit-defer status: ${String(status)}`);
  }
  return { admit: parseAdmitReply([...reply.slice(0, 11), reply[14]]), defer: { status, id: String(reply[12]), runAt: Number(reply[13]) } };
}

export function parseAdmitReply(reply: unknown): AdmitReply {
  if (!Array.isArray(reply) || reply.length !== ADMIT_FIELDS) throw new StoreError('ERR_BL_STORE_REPLY', `Unexpected admit reply: ${String(reply)}`);
  return admitFields(reply, 0);
}

/** admit-many.lua's reply: `count` admit replies, one after the other in one flat array. */
export function parseAdmitReplies(reply: unknown, count: number): AdmitReply[] {
  if (!Array.isArray(reply) || reply.length !== count * ADMIT_FIELDS) {
    throw new StoreError('ERR_BL_STORE_REPLY', `Unexpected admit-many reply for ${count} checks: ${Array.isArray(reply) ? `${reply.length} fields` : String(reply)}`);
  }
  const out: AdmitReply[] = new Array<AdmitReply>(count);
  for (let i = 0; i < count; i++) out[i] = admitFields(reply, i * ADMIT_FIELDS);
  return out;
}

const ADMIT_FIELDS = 12;

function admitFields(reply: unknown[], at: number): AdmitReply {
  const n = (i: number): number => {
    const v: unknown = reply[at + i];
    if (typeof v !== 'number') throw new StoreError('ERR_BL_STORE_REPLY', `Unexpected admit reply field ${i}: ${String(v)}`);
    return v;
  };
  const colour = n(1);
  const group: unknown = reply[at + 10];
  return {
    allowed: n(0) === 1, colour: colour === 0 || colour === 1 ? colour : 2, remaining: n(2), limit: n(3),
    guaranteed: n(4), retryMs: n(5), hintMs: n(6), resetMs: n(7), active: n(8), atMs: n(9), emptyMs: n(11),
    group: typeof group === 'string' ? group : String(group),
  };
}
