/**
 * Redis's cjson library over fengari's stack: numbers as %.14g, '/' escaped as '\/', an empty table as {},
 * a table with keys 1..n as an array, strings as raw bytes (binary strings here: one char per byte).
 */
import { lua, type LuaState } from 'fengari';
import { formatDouble } from './redis-values';
import { fromLua, toLua } from './lua-strings';

/** cjson.null: a light userdata, as in Redis. */
export const CJSON_NULL = Object.freeze({ cjsonNull: true });

const ESCAPES: Record<string, string> = { '"': '\\"', '\\': '\\\\', '/': '\\/', '\b': '\\b', '\f': '\\f', '\n': '\\n', '\r': '\\r', '\t': '\\t' };

function encodeString(s: string): string {
  return `"${s.replace(/["\\/\u0000-\u001f]/g, (c) => ESCAPES[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)}"`;
}

function encodeNumber(n: number): string {
  if (!Number.isFinite(n)) throw new Error('Cannot serialise number: must not be NaN or Inf');
  return formatDouble(n, 14);
}

/** The JSON text of the value at `idx` (a binary string). */
export function cjsonEncode(L: LuaState, idx: number, depth = 0): string {
  if (depth > 1000) throw new Error('Cannot serialise, excessive nesting (1001)');
  switch (lua.lua_type(L, idx)) {
    case lua.LUA_TSTRING:
      return encodeString(fromLua(lua.lua_tostring(L, idx)!));
    case lua.LUA_TNUMBER:
      return encodeNumber(lua.lua_tonumber(L, idx));
    case lua.LUA_TBOOLEAN:
      return lua.lua_toboolean(L, idx) ? 'true' : 'false';
    case lua.LUA_TNIL:
      return 'null';
    case lua.LUA_TLIGHTUSERDATA:
      if (lua.lua_touserdata(L, idx) === CJSON_NULL) return 'null';
      break;
    case lua.LUA_TTABLE:
      return encodeTable(L, idx, depth);
  }
  throw new Error('Cannot serialise: type not supported');
}

function encodeTable(L: LuaState, idxIn: number, depth: number): string {
  const idx = idxIn < 0 ? lua.lua_gettop(L) + idxIn + 1 : idxIn;
  const entries: Array<[string | number, string]> = [];
  let arrayMax = 0;
  let isArray = true;
  lua.lua_pushnil(L);
  while (lua.lua_next(L, idx)) {
    let key: string | number;
    if (lua.lua_type(L, -2) === lua.LUA_TNUMBER) {
      key = lua.lua_tonumber(L, -2);
      if (Number.isInteger(key) && key >= 1) arrayMax = Math.max(arrayMax, key);
      else isArray = false;
    } else if (lua.lua_type(L, -2) === lua.LUA_TSTRING) {
      key = fromLua(lua.lua_tostring(L, -2)!);
      isArray = false;
    } else {
      throw new Error('Cannot serialise table: table key must be a number or string');
    }
    entries.push([key, cjsonEncode(L, -1, depth + 1)]);
    lua.lua_pop(L, 1);
  }
  if (isArray && entries.length > 0) {
    // cjson's sparse-array guard (ratio 2, safe 10)
    if (arrayMax > entries.length * 2 && arrayMax > 10) throw new Error('Cannot serialise table: excessively sparse array');
    const items = new Array<string>(arrayMax).fill('null');
    for (const [k, v] of entries) items[(k as number) - 1] = v;
    return `[${items.join(',')}]`;
  }
  return `{${entries.map(([k, v]) => `${encodeString(typeof k === 'number' ? encodeNumber(k) : k)}:${v}`).join(',')}}`;
}

/** Parses JSON text (a binary string) and pushes the value; \u escapes become UTF-8 bytes, like cjson. */
export function cjsonDecode(L: LuaState, text: string): void {
  let at = 0;
  const fail = (what: string): never => {
    throw new Error(`Expected ${what} but found invalid token at character ${at + 1}`);
  };
  const space = (): void => {
    while (at < text.length && ' \t\r\n'.includes(text[at]!)) at++;
  };
  const str = (): string => {
    let out = '';
    at++;
    for (;;) {
      const c = text[at++];
      if (c === undefined) return fail('string end');
      if (c === '"') return out;
      if (c !== '\\') {
        out += c;
        continue;
      }
      const e = text[at++];
      if (e === 'u') {
        let code = parseInt(text.slice(at, at + 4), 16);
        at += 4;
        if (code >= 0xd800 && code < 0xdc00 && text.slice(at, at + 2) === '\\u') {
          code = 0x10000 + ((code - 0xd800) << 10) + (parseInt(text.slice(at + 2, at + 6), 16) - 0xdc00);
          at += 6;
        }
        out += Buffer.from(String.fromCodePoint(code), 'utf8').toString('latin1');
      } else {
        const map: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };
        out += map[e ?? ''] ?? fail('escape');
      }
    }
  };
  const value = (): void => {
    space();
    const c = text[at];
    if (c === '{') {
      at++;
      lua.lua_createtable(L, 0, 0);
      space();
      if (text[at] === '}') {
        at++;
        return;
      }
      for (;;) {
        space();
        if (text[at] !== '"') fail('object key string');
        lua.lua_pushstring(L, toLua(str()));
        space();
        if (text[at++] !== ':') fail('colon');
        value();
        lua.lua_rawset(L, -3);
        space();
        const sep = text[at++];
        if (sep === '}') return;
        if (sep !== ',') fail('comma or object end');
      }
    }
    if (c === '[') {
      at++;
      lua.lua_createtable(L, 0, 0);
      space();
      if (text[at] === ']') {
        at++;
        return;
      }
      for (let i = 1; ; i++) {
        value();
        lua.lua_rawseti(L, -2, i);
        space();
        const sep = text[at++];
        if (sep === ']') return;
        if (sep !== ',') fail('comma or array end');
      }
    }
    if (c === '"') {
      lua.lua_pushstring(L, toLua(str()));
      return;
    }
    const word = /^(true|false|null|-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?)/.exec(text.slice(at, at + 400));
    if (!word) return fail('value');
    at += word[0].length;
    if (word[0] === 'true' || word[0] === 'false') lua.lua_pushboolean(L, word[0] === 'true');
    else if (word[0] === 'null') lua.lua_pushlightuserdata(L, CJSON_NULL);
    else lua.lua_pushnumber(L, Number(word[0]));
  };
  value();
  space();
  if (at !== text.length) fail('the end');
}
