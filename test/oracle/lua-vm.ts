/**
 * The scripts in lua/ run unmodified in fengari (Lua 5.3) the way Redis 7 runs them in Lua 5.1: the redis
 * table over the RedisModel, cjson, struct, a global `unpack`, `%d` truncating a float, integral floats printed
 * without ".0" (./lua51-config), Lua 5.3-only functions removed, globals read-only, and Redis's reply
 * conversion: a number truncated to an integer, a table read as an array up to its first nil, false as nil,
 * {ok = ...} and {err = ...} as status and error replies.
 */
import './lua51-config';
import { lauxlib, lua, lualib, to_luastring, type LuaState } from 'fengari';
import { cjsonDecode, cjsonEncode, CJSON_NULL } from './lua-cjson';
import { fromLua, toLua } from './lua-strings';
import type { RedisModel } from './redis-model';
import { formatDouble, RedisError, type Reply } from './redis-values';

let shared: LuaHost | undefined;
/** The Lua state this test file's oracles share (compiling fair-share.lua costs tens of ms). */
export function sharedLuaHost(): LuaHost {
  shared ??= new LuaHost();
  return shared;
}

const PRELUDE = `
unpack = table.unpack
local spack, sunpack, ssize, format = string.pack, string.unpack, string.packsize, string.format
-- Redis's struct library, for the formats the scripts use (doubles, fixed-size strings 'c<n>', n > 0); anything
-- else must fail loudly.
local function sfmt(fmt)
  if string.gsub(string.gsub(fmt, '^[<>=!]', ''), 'c[1-9]%d*', ''):find('[^d]') then
    error('oracle: struct format not modelled: ' .. fmt, 3)
  end
  if string.find(fmt, '^[<>=]') then return fmt end
  return '<' .. string.gsub(fmt, '^!', '')
end
-- 'c<n>' packs a string of exactly n bytes (Redis's struct fails on a shorter one and cuts a longer one; Lua 5.3
-- pads and refuses: the scripts must never rely on either)
local function sstrings(fmt, ...)
  local k = 0
  for kind, n in string.gmatch(string.gsub(fmt, '^[<>=!]', ''), '([dc])(%d*)') do
    k = k + 1
    local v = select(k, ...)
    if kind == 'c' and (type(v) ~= 'string' or #v ~= tonumber(n)) then
      error('oracle: struct.pack c' .. n .. ' given ' .. type(v) .. (type(v) == 'string' and (' of ' .. #v .. ' bytes') or ''), 3)
    end
  end
end
struct = {
  pack = function(fmt, ...) sstrings(fmt, ...); return spack(sfmt(fmt), ...) end,
  unpack = function(fmt, s, pos) return sunpack(sfmt(fmt), s, pos) end,
  size = function(fmt) return ssize(sfmt(fmt)) end,
}
-- Every Lua 5.1 number is a double; fengari's integers are 32-bit and wrap. Numbers that come from data
-- (tonumber, math.floor/ceil; redis.call and cjson replies are pushed as floats) are floats here too.
local tonum, floor, ceil = tonumber, math.floor, math.ceil
tonumber = function(...) local n = tonum(...); if n then return n + 0.0 end return n end
math.floor = function(x) return floor(x) + 0.0 end
math.ceil = function(x) return ceil(x) + 0.0 end
-- Lua 5.1's %d truncates a double of any size; printed through %.0f (fengari's %d takes 32-bit integers only).
string.format = function(fmt, ...)
  local args, i = table.pack(...), 0
  local spec = string.gsub(fmt, '%%([-+ #0]*%d*)(%.?%d*)(.)', function(flags, precision, conv)
    if conv == '%' then return nil end
    i = i + 1
    if conv ~= 'd' and conv ~= 'i' then return nil end
    if precision ~= '' then error('oracle: %d with a precision is not modelled', 2) end
    local v = tonum(args[i])
    if not v then error("bad argument #" .. (i + 1) .. " to 'format' (number expected)", 2) end
    if v >= 0 then args[i] = floor(v) + 0.0 else args[i] = ceil(v) + 0.0 end
    return '%' .. flags .. '.0f'
  end)
  return format(spec, table.unpack(args, 1, args.n))
end
-- Only what Lua 5.1 in Redis has.
string.pack, string.unpack, string.packsize = nil, nil, nil
math.type, math.tointeger, math.ult, math.maxinteger, math.mininteger = nil, nil, nil, nil, nil
table.move, utf8, io, os, package, require, dofile, loadfile = nil, nil, nil, nil, nil, nil, nil, nil
KEYS, ARGV = {}, {}
setmetatable(_G, {
  __index = function(_, k) error("Script attempted to access nonexistent global variable '" .. tostring(k) .. "'", 2) end,
  __newindex = function(_, k) error("Attempt to modify a readonly table: " .. tostring(k), 2) end,
})
`;

const S = (s: string) => to_luastring(s);
const KEYS = S('KEYS');
const ARGV = S('ARGV');
const OK = S('ok');
const ERR = S('err');

/**
 * One Lua state: scripts compiled once (by source, as Redis caches them by sha) and run over any RedisModel.
 * The state holds no data between calls (the scripts keep theirs in Redis), so tests share one.
 */
export class LuaHost {
  private readonly L: LuaState;
  private readonly compiled = new Map<string, number>();
  /** The model of the call running now. */
  private redis: RedisModel | undefined;

  constructor() {
    const L = lauxlib.luaL_newstate();
    this.L = L;
    lualib.luaL_openlibs(L);
    lua.lua_createtable(L, 0, 4);
    this.setFunction('call', () => this.redisCall(false));
    this.setFunction('pcall', () => this.redisCall(true));
    this.setFunction('replicate_commands', () => {
      lua.lua_pushboolean(L, true);
      return 1;
    });
    this.setFunction('error_reply', () => this.replyTable(ERR));
    this.setFunction('status_reply', () => this.replyTable(OK));
    lua.lua_setglobal(L, S('redis'));
    lua.lua_createtable(L, 0, 3);
    this.setFunction('encode', () => {
      lua.lua_pushstring(L, toLua(cjsonEncode(L, 1)));
      return 1;
    });
    this.setFunction('decode', () => {
      cjsonDecode(L, fromLua(lua.lua_tostring(L, 1) ?? new Uint8Array()));
      return 1;
    });
    lua.lua_pushlightuserdata(L, CJSON_NULL);
    lua.lua_setfield(L, -2, S('null'));
    lua.lua_setglobal(L, S('cjson'));
    this.load('@oracle_prelude', PRELUDE);
    this.invoke();
    lua.lua_settop(L, 0);
  }

  /** A function in the table on top of the stack; a JS error becomes a Lua error (with its message). */
  private setFunction(name: string, f: () => number): void {
    const L = this.L;
    lua.lua_pushjsfunction(L, () => {
      let message: string;
      try {
        return f();
      } catch (e) {
        message = e instanceof Error ? e.message : String(e);
      }
      lua.lua_pushstring(L, toLua(message));
      return lua.lua_error(L);
    });
    lua.lua_setfield(L, -2, S(name));
  }

  private replyTable(field: Uint8Array): number {
    lua.lua_createtable(this.L, 0, 1);
    lua.lua_pushvalue(this.L, 1);
    lua.lua_setfield(this.L, -2, field);
    return 1;
  }

  /** Compiles a chunk onto the stack (Redis names a script's chunk @user_script). */
  private load(name: string, source: string): void {
    const code = toLua(Buffer.from(source, 'utf8').toString('latin1'));
    if (lauxlib.luaL_loadbuffer(this.L, code, null, S(name)) !== lua.LUA_OK) {
      throw new Error(`Lua compile error: ${fromLua(lua.lua_tostring(this.L, -1)!)}`);
    }
  }

  /** Compiles a script (once per source); returns its registry reference. */
  compile(source: string): number {
    let ref = this.compiled.get(source);
    if (ref === undefined) {
      this.load('@user_script', source);
      ref = lauxlib.luaL_ref(this.L, lua.LUA_REGISTRYINDEX);
      this.compiled.set(source, ref);
    }
    return ref;
  }

  /** Runs a compiled script with KEYS and ARGV (binary strings) on `redis`: one atomic call, time frozen at its start. */
  run(redis: RedisModel, ref: number, keys: readonly string[], args: readonly string[]): Reply {
    const L = this.L;
    lua.lua_settop(L, 0);
    this.redis = redis;
    redis.freezeTime();
    this.pushArray(keys);
    lua.lua_setglobal(L, KEYS);
    this.pushArray(args);
    lua.lua_setglobal(L, ARGV);
    lua.lua_rawgeti(L, lua.LUA_REGISTRYINDEX, ref);
    try {
      this.invoke();
      const reply = this.toReply(-1);
      lua.lua_settop(L, 0);
      return reply;
    } finally {
      this.redis = undefined;
    }
  }

  /** Calls the chunk on top of the stack (no arguments, one result). */
  private invoke(): void {
    const L = this.L;
    if (lua.lua_pcall(L, 0, 1, 0) !== lua.LUA_OK) {
      const message = lua.lua_type(L, -1) === lua.LUA_TSTRING ? fromLua(lua.lua_tostring(L, -1)!) : 'non-string error';
      lua.lua_settop(L, 0);
      throw new RedisError(`ERR Error running script: ${message}`);
    }
  }

  private pushArray(items: readonly string[]): void {
    lua.lua_createtable(this.L, items.length, 0);
    items.forEach((s, i) => {
      lua.lua_pushstring(this.L, toLua(s));
      lua.lua_rawseti(this.L, -2, i + 1);
    });
  }

  /** redis.call / redis.pcall: arguments must be strings or numbers (a number as %.17g, like Redis 7.0). */
  private redisCall(protectedCall: boolean): number {
    const L = this.L;
    const n = lua.lua_gettop(L);
    if (n === 0) throw new Error('Please specify at least one argument for this redis lib call');
    const args: string[] = [];
    for (let i = 1; i <= n; i++) {
      const t = lua.lua_type(L, i);
      if (t === lua.LUA_TNUMBER) args.push(formatDouble(lua.lua_tonumber(L, i)));
      else if (t === lua.LUA_TSTRING) args.push(fromLua(lua.lua_tostring(L, i)!));
      else throw new Error('Lua redis lib command arguments must be strings or integers');
    }
    if (!this.redis) throw new Error('redis.call outside a script run');
    let reply: Reply;
    try {
      reply = this.redis.call(args);
    } catch (e) {
      if (!(e instanceof RedisError)) throw e;
      reply = { error: e.message };
    }
    if (typeof reply === 'object' && reply !== null && 'error' in reply && !protectedCall) throw new Error(reply.error);
    this.pushReply(reply);
    return 1;
  }

  /** A Redis reply as Lua sees it: integer → number, nil → false, status/error → {ok}/{err}. */
  private pushReply(reply: Reply): void {
    const L = this.L;
    if (reply === null) lua.lua_pushboolean(L, false);
    else if (typeof reply === 'number') lua.lua_pushnumber(L, reply);
    else if (typeof reply === 'string') lua.lua_pushstring(L, toLua(reply));
    else if (Array.isArray(reply)) {
      lua.lua_createtable(L, reply.length, 0);
      reply.forEach((r, i) => {
        this.pushReply(r);
        lua.lua_rawseti(L, -2, i + 1);
      });
    } else {
      lua.lua_createtable(L, 0, 1);
      lua.lua_pushstring(L, toLua('status' in reply ? reply.status : reply.error));
      lua.lua_setfield(L, -2, 'status' in reply ? OK : ERR);
    }
  }

  /** The script's return value as Redis replies it. */
  private toReply(at: number): Reply {
    const L = this.L;
    const idx = at < 0 ? lua.lua_gettop(L) + at + 1 : at;
    switch (lua.lua_type(L, idx)) {
      case lua.LUA_TSTRING:
        return fromLua(lua.lua_tostring(L, idx)!);
      case lua.LUA_TNUMBER:
        return Math.trunc(lua.lua_tonumber(L, idx));
      case lua.LUA_TBOOLEAN:
        return lua.lua_toboolean(L, idx) ? 1 : null;
      case lua.LUA_TTABLE:
        break;
      default:
        return null;
    }
    for (const [field, make] of [
      [ERR, (s: string) => ({ error: s })],
      [OK, (s: string) => ({ status: s })],
    ] as const) {
      const t = lua.lua_getfield(L, idx, field);
      const text = t === lua.LUA_TSTRING ? fromLua(lua.lua_tostring(L, -1)!) : undefined;
      lua.lua_pop(L, 1);
      if (text !== undefined) return make(text);
    }
    const out: Reply[] = [];
    for (let i = 1; ; i++) {
      const t = lua.lua_rawgeti(L, idx, i);
      if (t === lua.LUA_TNIL) {
        lua.lua_pop(L, 1);
        return out;
      }
      out.push(this.toReply(-1));
      lua.lua_pop(L, 1);
    }
  }
}
