/**
 * Lua scripts: compiled in from lua/ by scripts/build-lua.js (`--!include includes/<file>.lua` lines expanded
 * there, so no file is read at run time and bundlers work), registered per ioredis
 * client with defineCommand under a versioned name (EVALSHA, EVAL again on NOSCRIPT). Never call them
 * inside MULTI (no NOSCRIPT fallback there). Every script runs through its generated binding (runBound), the keys,
 * arguments and reply its header declares.
 */
import { join } from 'node:path';
import type { ScriptBinding } from './lua-sources.generated';

/**
 * The ioredis calls the stores make on the client they are given, declared here so the package's declarations
 * need no ioredis types (a MemoryStore user may not have ioredis). An ioredis `Redis` or `Cluster` fits.
 */
export interface RedisClient {
  defineCommand(name: string, definition: { lua: string; numberOfKeys?: number }): void;
  del(...keys: string[]): Promise<number>;
}
export type ScriptArg = string | number | Buffer;

/** The scripts in the repository (for tests; the library reads LUA_SOURCES). Works from src/redis and dist/redis. */
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

const cache = new Map<string, LoadedScript>();

/** A script's binding as ioredis registers it (its includes expanded, its key count from its header). */
export function loadScript(binding: Pick<ScriptBinding<unknown, unknown, unknown, never>, 'file' | 'lua' | 'sha1' | 'numberOfKeys'>): LoadedScript {
  const cached = cache.get(binding.file);
  if (cached) return cached;
  const { file, lua, sha1, numberOfKeys } = binding;
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

/** The script's ioredis method (defined on the client on first use); call it with the client as `this`. */
function commandOf(client: RedisClient, script: LoadedScript): ScriptCommand {
  defineScripts(client, [script]);
  return (client as unknown as Record<string, ScriptCommand>)[script.command]!;
}

/**
 * Runs one script through its generated binding (lua-sources.generated.ts, from the script's header): EVALSHA,
 * with EVAL on NOSCRIPT (ioredis); `keys` as its keys() built them, typed arguments, the reply's shape checked.
 * One array per call, no spreads.
 */
export function runBound<K, A, R>(client: RedisClient, binding: ScriptBinding<K, A, R>, keys: readonly string[], args: A): Promise<R> {
  return commandOf(client, loadScript(binding)).apply(client, binding.argv(keys, args)).then(binding.decode);
}

/** runBound for a script whose decoder must be told `params` (its header's @params: rule count, cap, …). */
export function runDecoded<K, A, R, P>(
  client: RedisClient,
  binding: ScriptBinding<K, A, R, P>,
  keys: readonly string[],
  args: A,
  params: P,
): Promise<R> {
  return commandOf(client, loadScript(binding))
    .apply(client, binding.argv(keys, args))
    .then((reply) => binding.decode(reply, params));
}
