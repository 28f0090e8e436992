/**
 * An ioredis-shaped client whose scripts run in the Lua oracle: `defineCommand` (what src/redis/admission-scripts.ts
 * registers, includes already expanded), `eval` and `del`. RedisStore and RedisQueue run over it unchanged, so the
 * differential tests compare the whole Redis path (argument encoding, scripts, reply decoding) with the
 * MemoryStore. Arguments and replies are converted as ioredis converts them (UTF-8 strings, String(number)).
 */
import type { Redis } from 'ioredis';
import type { Clock } from '../../src/types';
import { sharedLuaHost, type LuaHost } from './lua-vm';
import { binaryToUtf8, utf8ToBinary } from './lua-strings';
import { RedisModel, type Reply } from './redis-model';

export interface OracleOptions {
  /** The injected clock (ms): TIME, key expiry and TTLs run on it. */
  readonly clock: Clock;
  /** Rewrites a script's source before it is compiled (tests that break one constant on purpose). */
  readonly rewrite?: (lua: string, command: string) => string;
  /** @defaultValue the Lua state shared by the test file */
  readonly host?: LuaHost;
}

type Arg = string | number | Buffer;
type ScriptMethod = (...args: Arg[]) => Promise<unknown>;

/** What ioredis hands back for a reply: bulk strings decoded as UTF-8, a status as its text. */
function toIoredis(reply: Reply): unknown {
  if (reply === null || typeof reply === 'number') return reply;
  if (typeof reply === 'string') return binaryToUtf8(reply);
  if (Array.isArray(reply)) return reply.map(toIoredis);
  if ('error' in reply) throw new Error(reply.error);
  return reply.status;
}

const toBinary = (a: Arg): string => (Buffer.isBuffer(a) ? a.toString('latin1') : utf8ToBinary(String(a)));

export class OracleRedis {
  readonly model: RedisModel;
  private readonly host: LuaHost;
  private readonly rewrite: (lua: string, command: string) => string;
  /** Script calls made and the time spent in them (ms), for the test's report. */
  calls = 0;
  busyMs = 0;
  /** The commands (defineCommand names) that ran at least once. */
  readonly commandsRun = new Set<string>();

  constructor(options: OracleOptions) {
    this.model = new RedisModel(options.clock);
    this.host = options.host ?? sharedLuaHost();
    this.rewrite = options.rewrite ?? ((lua) => lua);
  }

  /** This object where RedisStore and RedisQueue expect an ioredis client (they use defineCommand and del). */
  asClient(): Redis {
    return this as unknown as Redis;
  }

  defineCommand(name: string, definition: { numberOfKeys?: number; lua: string }): void {
    const ref = this.host.compile(this.rewrite(definition.lua, name));
    const method: ScriptMethod = (...args) => {
      const flat = args.flat().map(toBinary);
      const numberOfKeys = definition.numberOfKeys ?? Number(flat.shift());
      this.commandsRun.add(name);
      return this.run(ref, flat.slice(0, numberOfKeys), flat.slice(numberOfKeys));
    };
    Object.defineProperty(this, name, { value: method, configurable: true });
  }

  /** EVAL, as ioredis sends it: the script, the number of keys, then keys and arguments. */
  eval(lua: string, numberOfKeys: number, ...args: Arg[]): Promise<unknown> {
    const flat = args.map(toBinary);
    return this.run(this.host.compile(lua), flat.slice(0, numberOfKeys), flat.slice(numberOfKeys));
  }

  /** One script call, executed at once (Redis runs commands in the order they arrive). */
  private run(ref: number, keys: string[], args: string[]): Promise<unknown> {
    const started = performance.now();
    try {
      return Promise.resolve(toIoredis(this.host.run(this.model, ref, keys, args)));
    } catch (e) {
      return Promise.reject(e);
    } finally {
      this.calls += 1;
      this.busyMs += performance.now() - started;
    }
  }

  async del(...keys: string[]): Promise<number> {
    this.model.freezeTime();
    return this.model.call(['DEL', ...keys.map(utf8ToBinary)]) as number;
  }
}
