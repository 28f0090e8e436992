'use strict';
/**
 * Machine instructions per call that a script spends on its top-level definitions alone (the closures of its
 * `local function`s, its constants), under valgrind's callgrind inside EVALSHA: Redis runs a script's whole top
 * level on every call, so this is what every call of claim.lua, dispatch.lua, … pays before doing its work, and
 * what the build's shaking (scripts/lua-shake.js) cuts. Each script is measured as its definitions followed by
 * `return 1`, with every script of the build loaded (a full GC walks them all); `--base=<dist/>` measures a build
 * made before a change in a server of its own, for a before → after table. Deterministic, not time.
 *
 *   npm run build && node bench/lua-definitions.js [--base=<dist/>] [--calls=500] [claim.lua dispatch.lua …]
 */
const { join, resolve } = require('node:path');
const luaparse = require('luaparse');
const { startCallgrindRedis } = require('./lib/callgrind-redis');

const ROOT = join(__dirname, '..');
const option = (name) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
const CALLS = Number(option('calls') ?? 500);
const BASE = option('base');
const named = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const SCRIPTS = named.length > 0 ? named : ['admit.lua', 'admit-many.lua', 'reserve.lua', 'claim.lua', 'complete-claim.lua', 'dispatch.lua'];

const sourcesOf = (dist) => require(join(resolve(dist), 'redis', 'lua-sources.generated.js')).LUA_SOURCES;

/** The script's definitions before its first statement that does something, then `return 1`. */
function definitionsOf(src) {
  const body = luaparse.parse(src, { luaVersion: '5.1', ranges: true }).body;
  const inert = (n) => /Literal$|^TableConstructorExpression$|^FunctionDeclaration$/.test(n.type) || n.type === 'MemberExpression';
  const definition = (s) => (s.type === 'FunctionDeclaration' && s.isLocal) || (s.type === 'LocalStatement' && s.init.every(inert));
  const end = body.findIndex((s) => !definition(s));
  return `${body
    .slice(0, end < 0 ? body.length : end)
    .map((s) => src.slice(...s.range))
    .join('\n')}\nreturn 1`;
}

/** Instructions per call of each script's definitions, in one redis-server under callgrind. */
async function measure(sources) {
  const { client, count, stop } = await startCallgrindRedis();
  try {
    for (const lua of Object.values(sources)) await client.script('LOAD', lua);
    const out = new Map();
    for (const file of SCRIPTS) {
      const sha = await client.script('LOAD', definitionsOf(sources[file]));
      for (let k = 0; k < 5; k++) await client.evalsha(sha, 0);
      const total = await count(async () => {
        for (let k = 0; k < CALLS; k++) await client.evalsha(sha, 0);
      });
      out.set(file, total / CALLS);
    }
    return out;
  } finally {
    stop();
  }
}

async function main() {
  const after = await measure(sourcesOf(join(ROOT, 'dist')));
  const before = BASE ? await measure(sourcesOf(BASE)) : undefined;
  console.log(`top-level definitions, instructions per call (callgrind, EVALSHA only, ${CALLS} calls)`);
  for (const file of SCRIPTS) {
    const now = Math.round(after.get(file)).toLocaleString('en');
    console.log(`${file.padEnd(20)} ${before ? `${Math.round(before.get(file)).toLocaleString('en').padStart(8)} → ` : ''}${now.padStart(8)}`);
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
