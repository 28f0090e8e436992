/**
 * The machine-readable headers of lua/*.lua (the check that a script's body agrees with its header is in
 * ./lua-check.js).
 *
 * A script declares, in `-- @` comment lines:
 *   -- @key <name> <description>          one KEYS entry, in order       -- @keys <block>   a declared key block
 *   -- @arg <name> <type> <description>   one ARGV entry (a struct type stands for its fields, flattened)
 *   -- @arg <name>? <type> <description>  an optional ARGV entry, sent only when given (trailing entries only)
 *   -- @each <name> <type> <description>  the rest of ARGV: that struct (or one value) repeated (a
 *                                         `for i = n, #ARGV - k, k` loop; one value: `for i = n, #ARGV`)
 *   -- @param <name> int|bool <description> what the reply decoder is told by its caller (counts, flags)
 *   -- @reply <type> <description>        what the script returns
 * and an include may declare `-- @keyblock <block> <names…>` and `-- @struct <Name> <tuple type>` (lines of the
 * same tag and name append). A type whose brackets are open at the end of a line continues on the next one.
 * Types: int, number (an argument that may hold a fraction: the admission scripts' nowMs; Redis replies hold
 * none), string, bool (0 | 1 decoded as false | true), nil, a literal (1, -2, 'dead'), a status name of
 * lua/includes/status.lua (WRITTEN), a struct name, T[] (a list), [name: T, …] (a tuple), and unions of literals
 * or of nil and one type.
 * A reply may be variable-length, one flat array read left to right: `T*n` is n values of T in a row (n an int
 * @param; a struct's fields inline, decoded to a list of n), `T?p` is T inline when @param p is true (or > 0),
 * else nothing (decoded as undefined). They stand in a tuple or struct (which is then read inline too), or as
 * the whole reply.
 */
'use strict';

const TAG = /^--\s*@(\w+)\s+(.*?)\s*$/;

class HeaderError extends Error {}

/** Parses one type from the start of `text`; returns it and the rest (the description). */
function parseType(text, where) {
  let i = 0;
  const fail = (what) => {
    throw new HeaderError(`${where}: ${what} at "${text.slice(i, i + 30)}" in "${text}"`);
  };
  const ws = () => {
    while (text[i] === ' ') i++;
  };
  const primary = () => {
    ws();
    if (text[i] === '[') {
      i++;
      const fields = [];
      for (;;) {
        ws();
        const name = /^[A-Za-z_]\w*/.exec(text.slice(i));
        if (!name) fail('a field name expected');
        i += name[0].length;
        ws();
        if (text[i] !== ':') fail("':' expected");
        i++;
        fields.push({ name: name[0], type: union() });
        ws();
        if (text[i] === ',') i++;
        else if (text[i] === ']') {
          i++;
          break;
        } else fail("',' or ']' expected");
      }
      return { k: 'tuple', fields };
    }
    const lit = /^(-?\d+|'[^']*')/.exec(text.slice(i));
    if (lit) {
      i += lit[0].length;
      return { k: 'lit', v: lit[0].startsWith("'") ? lit[0].slice(1, -1) : Number(lit[0]) };
    }
    const word = /^[A-Za-z_]\w*/.exec(text.slice(i));
    if (!word) fail('a type expected');
    i += word[0].length;
    const w = word[0];
    if (w === 'int' || w === 'number' || w === 'string' || w === 'bool' || w === 'nil') return { k: w };
    if (/^[A-Z][A-Z0-9_]*$/.test(w)) return { k: 'status', name: w };
    if (/^[A-Z]/.test(w)) return { k: 'ref', name: w };
    return fail(`unknown type ${w}`);
  };
  const postfix = () => {
    let t = primary();
    while (text.startsWith('[]', i)) {
      i += 2;
      t = { k: 'list', of: t };
    }
    const inline = /^([*?])([a-z]\w*)/.exec(text.slice(i));
    if (inline) {
      i += inline[0].length;
      t = inline[1] === '*' ? { k: 'run', of: t, n: inline[2] } : { k: 'opt', of: t, when: inline[2] };
    }
    return t;
  };
  const union = () => {
    const of = [postfix()];
    for (;;) {
      const save = i;
      ws();
      if (text[i] !== '|') {
        i = save;
        break;
      }
      i++;
      of.push(postfix());
    }
    return of.length === 1 ? of[0] : { k: 'union', of };
  };
  const type = union();
  return { type, rest: text.slice(i).trim() };
}

/** `-- @tag text` lines, a line whose brackets are still open continuing on the next comment line. */
function tagsOf(text, file) {
  const lines = text.split('\n');
  const tags = [];
  for (let n = 0; n < lines.length; n++) {
    const m = TAG.exec(lines[n]);
    if (!m) continue;
    let body = m[2];
    const open = (s) => (s.match(/\[/g) ?? []).length - (s.match(/]/g) ?? []).length;
    while (open(body) > 0 && n + 1 < lines.length && lines[n + 1].startsWith('--')) {
      n++;
      body += ' ' + lines[n].replace(/^--\s*/, '');
    }
    tags.push({ tag: m[1], body, where: `${file}:${n + 1}` });
  }
  return tags;
}

/** The key blocks, structs (from the includes) and status codes every header may name. */
function declarationsOf(includes, statusLua) {
  const blocks = new Map();
  const structs = new Map();
  for (const [file, text] of includes) {
    for (const { tag, body, where } of tagsOf(text, file)) {
      const [name, ...rest] = body.split(/\s+/);
      if (tag === 'keyblock') blocks.set(name, [...(blocks.get(name) ?? []), ...rest]);
      else if (tag === 'struct') {
        const { type } = parseType(body.slice(name.length), where);
        if (type.k !== 'tuple') throw new HeaderError(`${where}: a struct is a tuple type [name: type, …]`);
        const prior = structs.get(name);
        structs.set(name, prior ? { k: 'tuple', fields: [...prior.fields, ...type.fields] } : type);
      }
    }
  }
  return { blocks, structs, status: statusTable(statusLua) };
}

/** lua/includes/status.lua's `local ST = { NAME = value, … }`: the one table of status codes. */
function statusTable(text) {
  const status = new Map();
  const body = /local ST = \{([\s\S]*?)\n\}/.exec(text ?? '');
  if (!body) return status;
  for (const m of body[1].matchAll(/([A-Z][A-Z0-9_]*)\s*=\s*(-?\d+|'[^']*')/g)) {
    status.set(m[1], m[2].startsWith("'") ? m[2].slice(1, -1) : Number(m[2]));
  }
  return status;
}

/** A script's header: keys, fixed arguments, the repeated struct (if any), the reply. */
function headerOf(file, text, decl) {
  const header = { file, keys: [], keyBlock: undefined, args: [], each: undefined, params: new Map(), reply: undefined };
  for (const { tag, body, where } of tagsOf(text, file)) {
    const [name] = body.split(/\s+/);
    if (tag === 'key') header.keys.push(name);
    else if (tag === 'keys') {
      const block = decl.blocks.get(name);
      if (!block) throw new HeaderError(`${where}: no @keyblock ${name} in lua/includes`);
      if (header.keys.length > 0) throw new HeaderError(`${where}: @keys ${name} comes before any @key line`);
      header.keys.push(...block);
      header.keyBlock = name;
    } else if (tag === 'arg' || tag === 'each') {
      if (header.each) throw new HeaderError(`${where}: @each takes the rest of ARGV: it comes last`);
      const { type } = parseType(body.slice(name.length), where);
      const optional = name.endsWith('?');
      const arg = { name: name.replace(/\?$/, ''), type, optional };
      if (tag === 'each' && !['ref', 'int', 'string'].includes(type.k)) throw new HeaderError(`${where}: @each repeats a struct or a value`);
      if (tag === 'each') header.each = arg;
      else if (!optional && header.args.some((a) => a.optional)) throw new HeaderError(`${where}: optional arguments come last`);
      else header.args.push(arg);
    } else if (tag === 'param') {
      const [, type] = body.split(/\s+/);
      if (type !== 'int' && type !== 'bool') throw new HeaderError(`${where}: a @param is int or bool`);
      header.params.set(name, type);
    } else if (tag === 'reply') header.reply = parseType(body, where).type;
    else throw new HeaderError(`${where}: unknown tag @${tag} (a script has @key, @keys, @arg, @each, @param, @reply)`);
  }
  if (header.keys.length + header.args.length === 0 && !header.reply) return undefined;
  if (!header.reply) throw new HeaderError(`${file}: no @reply in its header`);
  if (header.each?.optional || header.args.some((a) => a.optional && header.each)) {
    throw new HeaderError(`${file}: @each and optional arguments do not mix (neither would know where it starts)`);
  }
  for (const a of [...header.args, ...(header.each ? [header.each] : [])]) resolve(a.type, decl, file, undefined);
  resolve(header.reply, decl, file, header.params, true);
  const used = paramsOf(header.reply, decl);
  for (const p of header.params.keys()) if (!used.has(p)) throw new HeaderError(`${file}: @param ${p} is used by no * or ? in its @reply`);
  return header;
}

/** The @params a type's `*n` and `?p` name (through structs): name → 'int' when a count, else 'bool'. */
function paramsOf(t, decl, out = new Map()) {
  if (t.k === 'run') out.set(t.n, 'int');
  if (t.k === 'opt' && !out.has(t.when)) out.set(t.when, 'bool');
  if (t.k === 'run' || t.k === 'opt' || t.k === 'list') paramsOf(t.of, decl, out);
  if (t.k === 'union') t.of.forEach((u) => paramsOf(u, decl, out));
  if (t.k === 'ref' || t.k === 'tuple') (t.k === 'ref' ? decl.structs.get(t.name) : t).fields.forEach((f) => paramsOf(f.type, decl, out));
  return out;
}

/** Whether a tuple or struct is read inline from a flat reply (a `*` or `?` in it, through structs). */
function isInline(t, decl) {
  if (t.k === 'run' || t.k === 'opt') return true;
  if (t.k !== 'ref' && t.k !== 'tuple') return false;
  return (t.k === 'ref' ? decl.structs.get(t.name) : t).fields.some((f) => isInline(f.type, decl));
}

/**
 * Throws on a struct or status name nobody declared, on unions the decoder cannot check, and on `*` / `?`
 * outside a reply (`params`: the script's @params, undefined in arguments) or naming no fitting @param.
 * `flat`: t is read inline (the reply, or a field of an inline tuple), where `*` and `?` may stand.
 */
function resolve(t, decl, file, params, flat = false) {
  if (t.k === 'ref' && !decl.structs.has(t.name)) throw new HeaderError(`${file}: no @struct ${t.name} in lua/includes`);
  if (t.k === 'status' && !decl.status.has(t.name)) throw new HeaderError(`${file}: no status ${t.name} in lua/includes/status.lua`);
  if (t.k === 'run' || t.k === 'opt') {
    const name = t.k === 'run' ? t.n : t.when;
    if (!params || !flat)
      throw new HeaderError(`${file}: ${t.k === 'run' ? '*' : '?'}${name} stands only in a reply, in a tuple or as the whole reply`);
    if (!params.has(name)) throw new HeaderError(`${file}: no @param ${name} (the reply's ${t.k === 'run' ? '*' : '?'}${name})`);
    if (t.k === 'run' && params.get(name) !== 'int') throw new HeaderError(`${file}: *${name} counts: @param ${name} int`);
    resolve(t.of, decl, file, params, true);
  }
  if (t.k === 'list') resolve(t.of, decl, file, params);
  if (t.k === 'ref' || t.k === 'tuple') {
    const fields = t.k === 'ref' ? decl.structs.get(t.name).fields : t.fields;
    const inline = isInline(t, decl);
    if (inline && !flat) throw new HeaderError(`${file}: ${t.name ?? 'a tuple'} has * or ? fields: it stands only inline (the reply, a * or a ?)`);
    fields.forEach((f) => resolve(f.type, decl, file, params, inline));
  }
  if (t.k === 'union') {
    t.of.forEach((u) => resolve(u, decl, file, params));
    const simple = t.of.every((u) => u.k === 'lit' || u.k === 'status');
    const nullable = t.of.length === 2 && t.of.some((u) => u.k === 'nil');
    if (!simple && !nullable) throw new HeaderError(`${file}: a union is of literals, or of nil and one type`);
  }
}

/** How many ARGV values an argument of this type takes (a struct: its fields, flattened). */
function width(t, decl) {
  if (t.k === 'ref') return width(decl.structs.get(t.name), decl);
  if (t.k === 'tuple') return t.fields.reduce((n, f) => n + width(f.type, decl), 0);
  return 1;
}

module.exports = { HeaderError, parseType, declarationsOf, headerOf, width, isInline, paramsOf };
