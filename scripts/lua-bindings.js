/**
 * Renders the typed TypeScript bindings of the scripts whose headers scripts/lua-headers.js parsed: per script
 * its key names, a `keys()` builder, an `argv()` encoder over a typed object and a `decode()` that checks the
 * reply's shape (StoreError ERR_BL_STORE_REPLY). Encoders and decoders run on every script call: no spreads,
 * no closures, no string building unless a reply is wrong.
 */
'use strict';
const { width, isInline, paramsOf } = require('./lua-headers');

const pascal = (s) => s.replace(/(^|[-_.])(\w)/g, (_m, _s, c) => c.toUpperCase());
const camel = (s) => pascal(s).replace(/^./, (c) => c.toLowerCase());
const lit = (v) => (typeof v === 'string' ? `'${v}'` : String(v));

/** The runtime helpers the decoders share. */
const HELPERS = `
export type ScriptArg = string | number | Buffer;

/**
 * One script of lua/: its source, its keys in order, its typed arguments and its checked reply. \`Params\`: what
 * its decoder must be told (the header's @params: how many rules, whether the call had a cap, …).
 */
export interface ScriptBinding<Keys, Args, Reply, Params = void> {
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
  decode(reply: unknown, params: Params): Reply;
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
/** The read position in a flat reply (decoders run synchronously, one at a time: one cursor serves them all). */
let at = 0;
function flat(v: unknown, f: string): unknown[] {
  at = 0;
  return Array.isArray(v) ? v : bad(f, 'reply', 'an array', v);
}
function done<T>(a: unknown[], f: string, r: T): T {
  return at === a.length ? r : bad(f, 'reply', \`\${at} values\`, \`\${a.length} values\`);
}
/** n values in a row of a flat reply, each read by \`element\`. */
function run<T, P>(a: unknown[], n: number, f: string, p: P, element: (a: unknown[], f: string, p: P) => T): T[] {
  const out = new Array<T>(n);
  for (let i = 0; i < n; i++) out[i] = element(a, f, p);
  return out;
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
      case 'number':
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
      case 'run':
        return `${ro ? 'readonly ' : ''}${wrap(tsType(t.of, ro))}[]`;
      case 'opt':
        return `${tsType(t.of, ro)} | undefined`;
    }
  };
  /** The params object a flat decoder of t reads: a count is a number, a flag a boolean (or a count: > 0). */
  const paramsType = (t) => {
    const used = [...paramsOf(t, decl)];
    return used.length === 0 ? 'unknown' : `{ ${used.map(([n, k]) => `readonly ${n}: ${k === 'int' ? 'number' : 'boolean | number'}`).join('; ')} }`;
  };

  /**
   * The name of a function (a, f, p) => T reading type t from flat reply \`a\` at the cursor: a struct or tuple
   * field by field (its fields' values in a row), anything else as inline() reads it.
   */
  const flatDecoderOf = (t, hint) => {
    const id = `flat ${JSON.stringify(t)}`;
    if (named.has(id)) return named.get(id);
    const name = t.k === 'ref' ? `read${t.name}` : `read${hint}${counter++ || ''}`;
    named.set(id, name);
    const T = t.k === 'ref' ? t.name : tsType(t, false);
    const fields = t.k === 'ref' ? decl.structs.get(t.name).fields : t.k === 'tuple' ? t.fields : undefined;
    const body = fields
      ? `{ ${fields.map((x) => `${x.name}: ${inline(x.type, pascal(x.name), `'${x.name}'`)}`).join(', ')} }`
      : inline(t, hint, "'reply'");
    fns.push(`function ${name}(a: unknown[], f: string, p: ${paramsType(t)}): ${T} {\n  return ${body};\n}`);
    return name;
  };
  /**
   * The expression reading t at the cursor (a, f, p in scope): \`T*n\` n of T and \`T?p\` T when p, a struct's or
   * tuple's values in a row; a tuple or struct of a fixed shape in a plain field is one (nested) value.
   */
  const inline = (t, hint, path) => {
    if (t.k === 'run') return `run(a, p.${t.n}, f, p, ${flatDecoderOf(t.of, hint)})`;
    const spread = t.k === 'opt' ? t.of : t;
    const fields = spread.k === 'ref' || spread.k === 'tuple';
    const read =
      fields && (t.k === 'opt' || isInline(t, decl)) ? `${flatDecoderOf(spread, hint)}(a, f, p)` : `${decoderOf(spread, hint)}(a[at++], f, ${path})`;
    return t.k === 'opt' ? `p.${t.when} ? ${read} : undefined` : read;
  };
  const wrap = (s) => (/[ |]/.test(s) ? `(${s})` : s);

  /** The name of a function (v, f, p) => T decoding type t. */
  const decoderOf = (t, hint) => {
    if (['int', 'number', 'string', 'bool', 'nil'].includes(t.k)) return { int: 'int', number: 'int', string: 'str', bool: 'bool', nil: 'nil' }[t.k];
    const id = JSON.stringify(t);
    if (named.has(id)) return named.get(id);
    const name = t.k === 'ref' ? `decode${t.name}` : `decode${hint}${counter++ || ''}`;
    named.set(id, name);
    const T = t.k === 'ref' ? t.name : tsType(t, false);
    let body;
    if (isInline(t, decl)) {
      // a whole flat reply (lua-headers resolve() allows an inline type nowhere else)
      body = `const a = flat(v, f);\n  return done(a, f, ${inline(t, hint, 'p')});`;
      fns.push(`function ${name}(v: unknown, f: string, p: ${paramsType(t)}): ${T} {\n  ${body}\n}`);
      return name;
    } else if (t.k === 'ref' || t.k === 'tuple') {
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
    // a key block alone: the block's interface, shared; with keys of its own after it, the script's
    const blockOnly = h.keyBlock && h.keys.length === decl.blocks.get(h.keyBlock).length;
    const Keys = blockOnly ? `${pascal(h.keyBlock)}Keys` : `${P}Keys`;
    if (!keyTypes.has(Keys)) {
      keyTypes.add(Keys);
      out.push(`export interface ${Keys} {\n${h.keys.map((k) => `  readonly ${k}: string;`).join('\n')}\n}`);
      out.push(`const keysOf${Keys} = (k: ${Keys}): string[] => [${h.keys.map((k) => `k.${k}`).join(', ')}];`);
    }
    const fields = h.args.map((a) => `  readonly ${a.name}${a.optional ? '?' : ''}: ${tsType(a.type, true)};`);
    if (h.each) fields.push(`  readonly ${h.each.name}: readonly ${wrap(tsType(h.each.type, true))}[];`);
    out.push(`export interface ${P}Args {\n${fields.join('\n')}\n}`);
    out.push(`export type ${P}Reply = ${tsType(h.reply, false)};`);
    const params = [...h.params].map(([n, k]) => `  readonly ${n}: ${k === 'int' ? 'number' : 'boolean'};`);
    if (params.length > 0) out.push(`export interface ${P}Params {\n${params.join('\n')}\n}`);
    const decode = decoderOf(h.reply, `${P}Reply`);
    const required = h.args.filter((a) => !a.optional);
    const argv = required.flatMap((a) => encode(a.type, `a.${a.name}`));
    const optional = h.args
      .filter((a) => a.optional)
      .map((a) => `\n    if (a.${a.name} !== undefined) out.push(${encode(a.type, `a.${a.name}`).join(', ')});`)
      .join('');
    const each = h.each ? `\n    for (const e of a.${h.each.name}) out.push(${encode(h.each.type, 'e').join(', ')});` : '';
    const fixedWidth = h.args.reduce((n, a) => n + width(a.type, decl), 0);
    out.push(
      [
        `/** lua/${h.file}: ${h.keys.length} keys, ${fixedWidth} arguments${h.each ? ` then ${h.each.name} (${width(h.each.type, decl)} each)` : ''}. */`,
        `export const ${base}Script: ScriptBinding<${Keys}, ${P}Args, ${P}Reply${params.length > 0 ? `, ${P}Params` : ''}> = {`,
        `  file: '${h.file}',`,
        `  lua: ${sources.get(h.file).ident},`,
        `  sha1: '${sources.get(h.file).sha1}',`,
        `  keyNames: [${h.keys.map((k) => `'${k}'`).join(', ')}],`,
        `  numberOfKeys: ${h.keys.length},`,
        `  keys: keysOf${Keys},`,
        `  argv(keys, a) {`,
        `    const out: ScriptArg[] = keys.slice();`,
        argv.length > 0 ? `    out.push(${argv.join(', ')});${optional}${each}` : (optional + each).slice(1),
        `    return out;`,
        `  },`,
        params.length > 0
          ? `  decode: (reply, p) => ${decode}(reply, '${h.file}', p),`
          : `  decode: (reply) => ${decode}(reply, '${h.file}', 'reply'),`,
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
