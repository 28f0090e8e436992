/**
 * Renders the typed TypeScript bindings of the scripts whose headers scripts/lua-headers.js parsed: per script
 * its key names, a `keys()` builder, an `argv()` encoder over a typed object and a `decode()` that checks the
 * reply's shape (StoreError ERR_BL_STORE_REPLY). Encoders and decoders run on every script call: no spreads,
 * no closures, no string building unless a reply is wrong.
 */
'use strict';
const { width } = require('./lua-headers');

const pascal = (s) => s.replace(/(^|[-_.])(\w)/g, (_m, _s, c) => c.toUpperCase());
const camel = (s) => pascal(s).replace(/^./, (c) => c.toLowerCase());
const lit = (v) => (typeof v === 'string' ? `'${v}'` : String(v));

/** The runtime helpers the decoders share. */
const HELPERS = `
export type ScriptArg = string | number | Buffer;

/** One script of lua/: its source, its keys in order, its typed arguments and its checked reply. */
export interface ScriptBinding<Keys, Args, Reply> {
  readonly file: string;
  readonly lua: string;
  readonly sha1: string;
  readonly keyNames: readonly (keyof Keys & string)[];
  readonly numberOfKeys: number;
  /** KEYS in the header's order (build it once per limiter). */
  keys(keys: Keys): string[];
  /** The script command's arguments: \`keys\` (from keys()) then ARGV from the typed arguments. */
  argv(keys: readonly string[], args: Args): ScriptArg[];
  /** The reply, its shape checked against the header. */
  decode(reply: unknown): Reply;
}

function bad(file: string, path: string, expected: string, v: unknown): never {
  throw new StoreError('ERR_BL_STORE_REPLY', \`Unexpected \${file} reply: \${path} should be \${expected}, got \${describeValue(v)}\`);
}
function int(v: unknown, f: string, p: string): number {
  return typeof v === 'number' ? v : bad(f, p, 'an integer', v);
}
function str(v: unknown, f: string, p: string): string {
  return typeof v === 'string' ? v : bad(f, p, 'a string', v);
}
function bool(v: unknown, f: string, p: string): boolean {
  return v === 1 ? true : v === 0 ? false : bad(f, p, '0 or 1', v);
}
function nil(v: unknown, f: string, p: string): null {
  return v === null ? null : bad(f, p, 'nil', v);
}
function tuple(v: unknown, n: number, f: string, p: string): unknown[] {
  return Array.isArray(v) && v.length === n ? v : bad(f, p, \`an array of \${n}\`, v);
}
function oneOf<T>(v: unknown, values: readonly T[], f: string, p: string): T {
  return values.includes(v as T) ? (v as T) : bad(f, p, values.join(' | '), v);
}
/** Decodes a list's elements in place (the reply array is ours): no second array. */
function list<T>(v: unknown, f: string, p: string, element: (v: unknown, f: string, p: string) => T): T[] {
  if (!Array.isArray(v)) return bad(f, p, 'an array', v);
  const out = v as unknown[];
  for (let i = 0; i < out.length; i++) out[i] = element(out[i], f, p);
  return out as T[];
}
`;

/** Renders the module's bindings part: types, decoder functions, one binding per script. */
function renderBindings(headers, decl, sources) {
  const out = [];
  const fns = [];
  const named = new Map();
  let counter = 0;

  const tsType = (t, ro) => {
    switch (t.k) {
      case 'int':
        return 'number';
      case 'string':
        return 'string';
      case 'bool':
        return 'boolean';
      case 'nil':
        return 'null';
      case 'lit':
        return lit(t.v);
      case 'status':
        return `typeof STATUS.${t.name}`;
      case 'ref':
        return t.name;
      case 'list':
        return `${ro ? 'readonly ' : ''}${wrap(tsType(t.of, ro))}[]`;
      case 'union':
        return t.of.map((u) => tsType(u, ro)).join(' | ');
      case 'tuple':
        return `{ ${t.fields.map((f) => `readonly ${f.name}: ${tsType(f.type, ro)}`).join('; ')} }`;
    }
  };
  const wrap = (s) => (/[ |]/.test(s) ? `(${s})` : s);

  /** The name of a function (v, f, p) => T decoding type t. */
  const decoderOf = (t, hint) => {
    if (t.k === 'int' || t.k === 'string' || t.k === 'bool' || t.k === 'nil') return { int: 'int', string: 'str', bool: 'bool', nil: 'nil' }[t.k];
    const id = JSON.stringify(t);
    if (named.has(id)) return named.get(id);
    const name = t.k === 'ref' ? `decode${t.name}` : `decode${hint}${counter++ || ''}`;
    named.set(id, name);
    const T = t.k === 'ref' ? t.name : tsType(t, false);
    let body;
    if (t.k === 'ref' || t.k === 'tuple') {
      const fields = (t.k === 'ref' ? decl.structs.get(t.name) : t).fields;
      const where = t.k === 'ref' ? `${t.name}.` : '';
      const values = fields.map((f, i) => `${f.name}: ${decoderOf(f.type, pascal(f.name))}(t[${i}], f, '${where}${f.name}')`);
      body = `const t = tuple(v, ${fields.length}, f, p);\n  return { ${values.join(', ')} };`;
    } else if (t.k === 'list') {
      body = `return list(v, f, p, ${decoderOf(t.of, hint)});`;
    } else if (t.k === 'union' && t.of.some((u) => u.k === 'nil')) {
      body = `return v === null ? null : ${decoderOf(
        t.of.find((u) => u.k !== 'nil'),
        hint,
      )}(v, f, p);`;
    } else {
      const values = (t.k === 'union' ? t.of : [t]).map((u) => lit(u.k === 'status' ? decl.status.get(u.name) : u.v));
      fns.push(`const ${name}Values = [${values.join(', ')}] as const;`);
      body = `return oneOf(v, ${name}Values, f, p);`;
    }
    fns.push(`function ${name}(v: unknown, f: string, p: string): ${T} {\n  ${body}\n}`);
    return name;
  };

  /** ARGV expressions of one argument (a struct flattened, field by field). */
  const encode = (t, expr) => {
    if (t.k === 'ref') return encode(decl.structs.get(t.name), expr);
    if (t.k === 'tuple') return t.fields.flatMap((f) => encode(f.type, `${expr}.${f.name}`));
    if (t.k === 'bool') return [`${expr} ? 1 : 0`];
    return [expr];
  };

  for (const [name, t] of decl.structs) {
    out.push(`export interface ${name} {\n${t.fields.map((f) => `  readonly ${f.name}: ${tsType(f.type, true)};`).join('\n')}\n}`);
  }
  const keyTypes = new Set();
  for (const h of headers) {
    const base = camel(h.file.replace(/\.lua$/, ''));
    const P = pascal(base);
    const Keys = h.keyBlock ? `${pascal(h.keyBlock)}Keys` : `${P}Keys`;
    if (!keyTypes.has(Keys)) {
      keyTypes.add(Keys);
      out.push(`export interface ${Keys} {\n${h.keys.map((k) => `  readonly ${k}: string;`).join('\n')}\n}`);
      out.push(`const keysOf${Keys} = (k: ${Keys}): string[] => [${h.keys.map((k) => `k.${k}`).join(', ')}];`);
    }
    const fields = h.args.map((a) => `  readonly ${a.name}: ${tsType(a.type, true)};`);
    if (h.each) fields.push(`  readonly ${h.each.name}: readonly ${h.each.type.name}[];`);
    out.push(`export interface ${P}Args {\n${fields.join('\n')}\n}`);
    out.push(`export type ${P}Reply = ${tsType(h.reply, false)};`);
    const decode = decoderOf(h.reply, `${P}Reply`);
    const argv = h.args.flatMap((a) => encode(a.type, `a.${a.name}`));
    const each = h.each ? `\n    for (const e of a.${h.each.name}) out.push(${encode(h.each.type, 'e').join(', ')});` : '';
    const fixedWidth = h.args.reduce((n, a) => n + width(a.type, decl), 0);
    out.push(
      [
        `/** lua/${h.file}: ${h.keys.length} keys, ${fixedWidth} arguments${h.each ? ` then ${h.each.name} (${width(h.each.type, decl)} each)` : ''}. */`,
        `export const ${base}Script: ScriptBinding<${Keys}, ${P}Args, ${P}Reply> = {`,
        `  file: '${h.file}',`,
        `  lua: ${sources.get(h.file).ident},`,
        `  sha1: '${sources.get(h.file).sha1}',`,
        `  keyNames: [${h.keys.map((k) => `'${k}'`).join(', ')}],`,
        `  numberOfKeys: ${h.keys.length},`,
        `  keys: keysOf${Keys},`,
        `  argv(keys, a) {`,
        `    const out: ScriptArg[] = keys.slice();`,
        argv.length > 0 ? `    out.push(${argv.join(', ')});${each}` : each.slice(1),
        `    return out;`,
        `  },`,
        `  decode: (reply) => ${decode}(reply, '${h.file}', 'reply'),`,
        `};`,
      ]
        .filter((l) => l !== '')
        .join('\n'),
    );
  }
  return [HELPERS.trim(), ...fns, ...out].join('\n\n');
}

/** STATUS: lua/includes/status.lua's table, the same names and values in TypeScript. */
function renderStatus(status) {
  const entries = [...status].map(([k, v]) => `  ${k}: ${lit(v)},`);
  return [
    '/** The status codes scripts return (lua/includes/status.lua: `ST.<NAME>` there, `STATUS.<NAME>` here). */',
    'export const STATUS = {',
    ...entries,
    '} as const;',
  ].join('\n');
}

module.exports = { renderBindings, renderStatus, camel };
