/**
 * Loaded before fengari: Redis runs Lua 5.1, which prints every number with "%.14g" ("3", "1e+15"), where
 * Lua 5.3 prints "3.0" and fengari "1000000000000000". fengari reads FENGARICONF, and its number printer,
 * once, when it loads (tostring, `..`, error messages all go through that printer).
 */
import { formatDouble } from './redis-values';

const conf: Record<string, unknown> = process.env.FENGARICONF ? (JSON.parse(process.env.FENGARICONF) as Record<string, unknown>) : {};
process.env.FENGARICONF = JSON.stringify({ ...conf, LUA_COMPAT_FLOATSTRING: true });
// require, not import: the printer must be replaced on the module object itself before fengari's lobject.js
// copies it (an import would give a copy of the exports).
// defs.js first: it and luaconf.js require each other, and defs.js must be the one loaded first.
// eslint-disable-next-line @typescript-eslint/no-require-imports
require('fengari/src/defs.js');
// eslint-disable-next-line @typescript-eslint/no-require-imports
const luaconf = require('fengari/src/luaconf.js') as { lua_number2str: (n: number) => string };
luaconf.lua_number2str = (n) => formatDouble(n, 14);
