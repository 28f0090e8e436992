#!/usr/bin/env node
/**
 * Generates src/redis/lua-sources.generated.ts from lua/: every script's source with its `--!include` lines
 * expanded, only the statements it needs kept (scripts/lua-shake.js) and comments removed, as string constants
 * compiled into the JS (the library reads no file at run time: bundlers, single-file deployments), and the typed
 * bindings its header declares (scripts/lua-headers.js: keys, typed arguments, a reply decoder that checks the
 * shape; STATUS from lua/includes/status.lua). Fails when a header and its script disagree. Run by build,
 * typecheck and jest's globalSetup; writes only when the output changes.
 */
'use strict';
const { createHash } = require('node:crypto');
const { readFileSync, readdirSync, writeFileSync, existsSync } = require('node:fs');
const { join } = require('node:path');
const { declarationsOf, headerOf, HeaderError } = require('./lua-headers');
const { checkScript } = require('./lua-check');
const { renderBindings, renderStatus, camel } = require('./lua-bindings');
const { stripLuaComments } = require('./lua-strip');
const { shake } = require('./lua-shake');

const ROOT = join(__dirname, '..');
const OUT = join(ROOT, 'src', 'redis', 'lua-sources.generated.ts');
const CONSTANTS_OUT = join(ROOT, 'src', 'core', 'constants.generated.ts');
const CONSTANT = /^local ([A-Z][A-Z0-9_]*) = (-?[0-9][0-9.e+-]*|'[^'\\]*')\s*$/gm;
const INCLUDE = /^--!include\s+(\S+)\s*$/gm;

/**
 * The script with its includes expanded, each include once (Lua would redefine its locals), and `where(offset)`:
 * the file and line an offset of the expansion comes from.
 */
function expand(luaDir, file, text) {
  const parts = []; // [offset in the expansion, file, line in that file]
  let out = '';
  const seen = new Set();
  const add = (name, body) => {
    let start = 0;
    let line = 1;
    const copy = (chunk) => {
      parts.push([out.length, name, line]);
      out += chunk;
      line += chunk.split('\n').length - 1;
    };
    for (const m of body.matchAll(INCLUDE)) {
      copy(body.slice(start, m.index));
      start = m.index + m[0].length;
      line += m[0].split('\n').length - 1;
      const rel = m[1];
      if (seen.has(rel)) continue;
      seen.add(rel);
      add(rel, readFileSync(join(luaDir, rel), 'utf8'));
      out += '\n';
    }
    copy(body.slice(start));
  };
  add(file, text);
  const where = (at) => {
    const [offset, name, line] = parts.findLast(([o]) => o <= at) ?? parts[0];
    return `${name}:${line + (out.slice(offset, at).match(/\n/g)?.length ?? 0)}`;
  };
  return { text: out, where };
}

/** The statements script `f` ships ({ source, code }: lua-shake.js); `edit` changes the expanded text first. */
function shakenScript(luaDir, f, text, edit = (expanded) => expanded) {
  const expanded = expand(luaDir, f, text);
  return shake(edit(expanded.text), expanded.where);
}

/**
 * Script file name → the Lua it ships, as in the generated module, with `edit` applied to each script's text
 * (includes expanded, comments in) before it is shaken: a test's change to a constant that the build writes in
 * where it is read.
 */
function shippedSources(edit, luaDir = join(ROOT, 'lua')) {
  const files = readdirSync(luaDir).filter((f) => f.endsWith('.lua'));
  const lua = (f) =>
    shakenScript(luaDir, f, readFileSync(join(luaDir, f), 'utf8'), edit)
      .map((s) => stripLuaComments(s.code))
      .join('\n');
  return new Map(files.map((f) => [f, lua(f)]));
}

/** The generated module's text for the scripts in `luaDir` (each must have a header); `errorsImport`: where the module finds src/errors.ts. */
function render(luaDir = join(ROOT, 'lua'), { errorsImport = '../errors' } = {}) {
  const files = readdirSync(luaDir)
    .filter((f) => f.endsWith('.lua'))
    .sort();
  const incDir = join(luaDir, 'includes');
  const includes = existsSync(incDir)
    ? readdirSync(incDir)
        .filter((f) => f.endsWith('.lua'))
        .sort()
        .map((f) => [`includes/${f}`, readFileSync(join(incDir, f), 'utf8')])
    : [];
  const decl = declarationsOf(includes, includes.find(([f]) => f === 'includes/status.lua')?.[1]);
  const sources = new Map();
  const headers = [];
  // Shipped without comments (the package carries code, lua/ the prose) and only the statements each script needs
  // (scripts/lua-shake.js): a piece is one top-level statement, shipped once however many scripts use it.
  const pieces = new Map(); // statement's code -> its name in the module
  for (const f of files) {
    const text = readFileSync(join(luaDir, f), 'utf8');
    const header = headerOf(f, text, decl);
    if (!header) throw new HeaderError(`${f}: no header (-- @key / @arg / @reply lines; see scripts/lua-headers.js)`);
    const shaken = shakenScript(luaDir, f, text);
    // the header check reads the statements as written (ARGV[FIRST]), the script ships them with constants in
    checkScript(header, shaken.map((s) => s.source).join('\n'), decl);
    const statements = shaken.map((s) => stripLuaComments(s.code));
    const lua = statements.join('\n');
    for (const code of statements) if (!pieces.has(code)) pieces.set(code, `piece${pieces.size}`);
    const keys = statements.map((code) => pieces.get(code));
    sources.set(f, { ident: `${camel(f.replace(/\.lua$/, ''))}Lua`, keys, lua, sha1: createHash('sha1').update(lua).digest('hex') });
    headers.push(header);
  }
  return [
    '// Generated by scripts/build-lua.js from lua/*.lua (includes expanded, unused definitions left out, headers read). Do not edit: edit lua/ and rebuild.',
    `import { StoreError, describeValue } from '${errorsImport}';`,
    '',
    // The statements the scripts are made of (each once), then each script's text: the statements it needs.
    ...[...pieces].map(([code, name]) => `const ${name} = ${JSON.stringify(code)};`),
    ...[...sources.values()].map((s) => `const ${s.ident} = [${s.keys.join(', ')}].join('\\n');`),
    '',
    '/** Script file name (`admit.lua`) → Lua source, includes expanded. */',
    'export const LUA_SOURCES: Readonly<Record<string, string>> = {',
    ...[...sources].map(([f, s]) => `  ${JSON.stringify(f)}: ${s.ident},`),
    '};',
    '',
    renderStatus(decl.status),
    '',
    renderBindings(headers, decl, sources),
    '',
  ].join('\n');
}

/** The TypeScript twin of lua/includes/constants.lua: every `local NAME = value` line, as `export const`. */
function renderConstants(luaDir = join(ROOT, 'lua')) {
  const text = readFileSync(join(luaDir, 'includes', 'constants.lua'), 'utf8');
  const lines = [...text.matchAll(CONSTANT)].map(([, name, value]) => `export const ${name} = ${value};`);
  if (lines.length === 0) throw new HeaderError('includes/constants.lua: no `local NAME = value` line');
  return ['// Generated by scripts/build-lua.js from lua/includes/constants.lua. Do not edit: edit the Lua and rebuild.', ...lines, ''].join('\n');
}

function writeIfChanged(path, text) {
  if (existsSync(path) && readFileSync(path, 'utf8') === text) return false;
  writeFileSync(path, text);
  return true;
}

/** Returns true when a file was (re)written. */
function buildLua() {
  const sources = writeIfChanged(OUT, render());
  const constants = writeIfChanged(CONSTANTS_OUT, renderConstants());
  return sources || constants;
}

module.exports = buildLua;
module.exports.render = render;
module.exports.shippedSources = shippedSources;
module.exports.renderConstants = renderConstants;
if (require.main === module) {
  try {
    buildLua();
  } catch (error) {
    if (!(error instanceof HeaderError)) throw error;
    process.stderr.write(`build-lua: ${error.message}\n`);
    process.exit(1);
  }
}
