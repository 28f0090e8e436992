/** The part of fengari (Lua 5.3 in JavaScript) the oracle uses. Lua strings are byte arrays. */
declare module 'fengari' {
  export type LuaState = { readonly __luaState: unique symbol };
  export type LuaString = Uint8Array;
  export type JsFunction = (L: LuaState) => number;

  export function to_luastring(s: string): LuaString;

  export const lua: {
    readonly LUA_OK: number;
    readonly LUA_MULTRET: number;
    readonly LUA_REGISTRYINDEX: number;
    readonly LUA_TNIL: number;
    readonly LUA_TBOOLEAN: number;
    readonly LUA_TNUMBER: number;
    readonly LUA_TSTRING: number;
    readonly LUA_TTABLE: number;
    readonly LUA_TLIGHTUSERDATA: number;
    lua_createtable(L: LuaState, narr: number, nrec: number): void;
    lua_error(L: LuaState): never;
    lua_getfield(L: LuaState, idx: number, k: LuaString): number;
    lua_getglobal(L: LuaState, name: LuaString): number;
    lua_gettop(L: LuaState): number;
    lua_isinteger(L: LuaState, idx: number): boolean;
    lua_next(L: LuaState, idx: number): boolean;
    lua_pcall(L: LuaState, nargs: number, nresults: number, msgh: number): number;
    lua_pop(L: LuaState, n: number): void;
    lua_pushboolean(L: LuaState, b: boolean): void;
    lua_pushinteger(L: LuaState, n: number): void;
    lua_pushjsfunction(L: LuaState, f: JsFunction): void;
    lua_pushlightuserdata(L: LuaState, p: object): void;
    lua_pushnil(L: LuaState): void;
    lua_pushnumber(L: LuaState, n: number): void;
    lua_pushstring(L: LuaState, s: LuaString): void;
    lua_pushvalue(L: LuaState, idx: number): void;
    lua_rawgeti(L: LuaState, idx: number, n: number): number;
    lua_rawset(L: LuaState, idx: number): void;
    lua_rawseti(L: LuaState, idx: number, n: number): void;
    lua_setfield(L: LuaState, idx: number, k: LuaString): void;
    lua_setglobal(L: LuaState, name: LuaString): void;
    lua_settop(L: LuaState, idx: number): void;
    lua_toboolean(L: LuaState, idx: number): boolean;
    lua_tonumber(L: LuaState, idx: number): number;
    lua_tostring(L: LuaState, idx: number): LuaString | null;
    lua_touserdata(L: LuaState, idx: number): unknown;
    lua_type(L: LuaState, idx: number): number;
  };

  export const lauxlib: {
    luaL_newstate(): LuaState;
    luaL_loadbuffer(L: LuaState, buff: LuaString, size: number | null, name: LuaString): number;
    luaL_ref(L: LuaState, t: number): number;
  };

  export const lualib: {
    luaL_openlibs(L: LuaState): void;
  };
}
