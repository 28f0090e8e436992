#!/usr/bin/env node
/**
 * The layers of src/, checked by `npm run lint`: every import points down (a folder imports only itself and
 * the layers below it) and no import cycle exists. Reads relative imports as text; type-only imports count too,
 * since a type that points up is a layer that points up.
 */
'use strict';
const { readdirSync, readFileSync } = require('node:fs');
const { dirname, join, relative, resolve } = require('node:path');

const SRC = resolve(process.argv[2] ?? join(__dirname, '..', 'src'));
/** Bottom to top. A file belongs to the deepest room whose path prefixes it; rooms on one floor may not import each other. */
const FLOORS = [
  ['types/', 'errors.ts'],
  ['util/'],
  ['core/'],
  ['queue/'],
  ['memory/', 'redis/'],
  ['limiter/outage/'],
  ['limiter/'],
  ['metrics/'],
  ['dashboard/'],
  ['middleware/'],
  ['nest/'],
  ['index.ts'],
];
const ROOMS = FLOORS.flatMap((rooms, floor) => rooms.map((room) => ({ room, floor }))).sort((a, b) => b.room.length - a.room.length);

function roomOf(file) {
  const found = ROOMS.find(({ room }) => (room.endsWith('/') ? file.startsWith(room) : file === room));
  if (!found) throw new Error(`check-layers: src/${file} is in no layer: add its folder to FLOORS in scripts/check-layers.js`);
  return found;
}

function sourceFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

const IMPORT = /(?:^|[\s;])(?:import|export)\s[^'";]*?from\s*'(\.[^']*)'|\b(?:import|require)\(\s*'(\.[^']*)'\s*\)/g;
const files = sourceFiles(SRC).map((f) => relative(SRC, f));
const known = new Set(files);
function target(from, spec) {
  const base = relative(SRC, resolve(SRC, dirname(from), spec)).replace(/\.js$/, '');
  return [`${base}.ts`, `${base}/index.ts`].find((f) => known.has(f));
}

const texts = new Map(files.map((f) => [f, readFileSync(join(SRC, f), 'utf8')]));
const problems = [];
const edges = new Map();
for (const file of files) {
  const text = texts.get(file);
  const from = roomOf(file);
  const out = new Set();
  for (const m of text.matchAll(IMPORT)) {
    const to = target(file, m[1] ?? m[2]);
    if (to === undefined) continue;
    out.add(to);
    const into = roomOf(to);
    if (into.room === from.room) continue;
    if (into.floor >= from.floor) {
      problems.push(`src/${file} imports src/${to}: ${into.room} is ${into.floor === from.floor ? 'on the same floor as' : 'above'} ${from.room}`);
    }
  }
  edges.set(file, out);
}

// A value imported through a re-export: TypeScript compiles a re-export to a getter, a call on every use (in a
// check's path, thousands of instructions per request). Values are imported from the module that defines them.
const escape = (name) => name.replace(/[$]/g, '\\$&');
function declaresValue(file, name) {
  const n = escape(name);
  return new RegExp(`(?:^|\\s)(?:const|let|var|function\\*?|class|enum)\\s+${n}\\b`).test(texts.get(file));
}
/** Whether an export list (`a, b as c, type T`) hands out the value `name`. */
const lists = (list, name) =>
  list.split(',').some((item) => {
    const spec = item.trim();
    return spec !== '' && !spec.startsWith('type ') && spec.split(/\s+as\s+/).pop() === name;
  });
/** True when `file` hands out the value `name` by re-exporting it (explicitly, or through `export *`). */
function reexportsValue(file, name, seen = new Set()) {
  if (seen.has(file) || declaresValue(file, name)) return false;
  seen.add(file);
  const text = texts.get(file);
  // `export { name } from`, and `export { name };` of an imported binding
  for (const m of text.matchAll(/export\s*\{([^}]*)\}\s*(?:from\s*'\.[^']*'|;)/g)) if (lists(m[1], name)) return true;
  for (const m of text.matchAll(/export\s*\*\s*from\s*'(\.[^']*)'/g)) {
    const next = target(file, m[1]);
    if (next !== undefined && (declaresValue(next, name) || reexportsValue(next, name, seen))) return true;
  }
  return false;
}
for (const file of files) {
  for (const m of texts.get(file).matchAll(/(?:^|[\s;])import\s*\{([^}]*)\}\s*from\s*'(\.[^']*)'/g)) {
    const to = target(file, m[2]);
    if (to === undefined) continue;
    for (const spec of m[1].split(',').map((x) => x.trim())) {
      if (!spec || spec.startsWith('type ')) continue;
      const name = spec.split(/\s+as\s+/)[0];
      if (reexportsValue(to, name)) {
        problems.push(
          `src/${file} imports ${name} from src/${to}, which re-exports it: import it from the module that defines it (a re-export compiles to a getter, a call on every use)`,
        );
      }
    }
  }
}

// Cycles: depth-first search, reporting each cycle once by its path.
const state = new Map();
const stack = [];
function visit(file) {
  state.set(file, 'open');
  stack.push(file);
  for (const next of edges.get(file) ?? []) {
    if (state.get(next) === 'open') problems.push(`import cycle: ${[...stack.slice(stack.indexOf(next)), next].map((f) => `src/${f}`).join(' -> ')}`);
    else if (!state.has(next)) visit(next);
  }
  stack.pop();
  state.set(file, 'done');
}
for (const file of files) if (!state.has(file)) visit(file);

if (problems.length) {
  console.error(`check-layers: ${problems.length} problem(s)\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
console.log(`check-layers: ${files.length} files in ${ROOMS.length} rooms, every import points down, no cycle, no value read through a re-export`);
