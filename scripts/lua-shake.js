/**
 * Tree-shaking of a script's top level (includes expanded): Redis runs the whole chunk on every call, so every
 * top-level `local function` of every include builds a closure per call, used or not. `shake` keeps the
 * statements the script's own code reaches: every statement that does something (a call, an assignment, a
 * `return`, a `local` whose value needs computing) is kept, and with it the definitions (`local function`, a
 * `local` of constants, tables and functions) its names resolve to, transitively; the rest, which only defines
 * what nothing reads, is dropped. Names resolve as Lua resolves them (blocks, parameters, loop variables, a
 * `local` visible after its statement), so a name no definition before it declares is a global: it must be one
 * Redis provides (`REDIS_GLOBALS`), and never written, or the build fails (a missing or misspelt definition).
 */
'use strict';
const luaparse = require('luaparse');
const { HeaderError } = require('./lua-headers');

/** The globals a script may read in Redis's Lua 5.1 (the base library less loading and files, and Redis's own). */
const REDIS_GLOBALS = new Set([
  ...['redis', 'KEYS', 'ARGV', 'cjson', 'cmsgpack', 'struct', 'bit'],
  ...['math', 'string', 'table', 'tonumber', 'tostring', 'type', 'pairs', 'ipairs', 'next', 'select', 'unpack'],
  ...['error', 'pcall', 'xpcall', 'assert', 'setmetatable', 'getmetatable', 'rawget', 'rawset', 'rawequal', '_G'],
]);

const LITERALS = new Set(['StringLiteral', 'NumericLiteral', 'BooleanLiteral', 'NilLiteral']);

/** A value whose computation cannot fail nor do anything: dropping a `local` of it changes nothing. */
function pure(node) {
  if (LITERALS.has(node.type) || node.type === 'FunctionDeclaration' || node.type === 'Identifier') return true;
  if (node.type === 'TableConstructorExpression') return node.fields.every((f) => pure(f.value) && (f.type !== 'TableKey' || pure(f.key)));
  // math.huge and the like: a field of a library table
  if (node.type === 'MemberExpression') return node.base.type === 'Identifier' && REDIS_GLOBALS.has(node.base.name);
  // constant arithmetic (-1, 2 ^ 52): literals only, so no operand can be a value the operator refuses
  const literal = (n) => LITERALS.has(n.type) || (n.type === 'UnaryExpression' && literal(n.argument));
  if (node.type === 'UnaryExpression') return literal(node);
  if (node.type === 'BinaryExpression') return literal(node.left) && literal(node.right);
  return false;
}

/**
 * The names a statement reads or writes that no `local` inside it binds: [{ name, write, base, at }] (base: the
 * name is what a call, `.` or `[]` applies to).
 */
function freeNames(statement) {
  const free = [];
  /** A block's statements in `scope` plus `names` (parameters, loop variables); `tail` sees its locals (`until`). */
  const block = (body, scope, names = [], tail = undefined) => {
    let current = new Set([...scope, ...names]);
    for (const s of body) current = statementIn(s, current);
    if (tail) walk(tail, current);
  };
  const parameters = (f) => f.parameters.filter((p) => p.type === 'Identifier').map((p) => p.name);
  const walk = (node, scope, base = false) => {
    if (!node || typeof node !== 'object') return;
    if (Array.isArray(node)) return node.forEach((n) => walk(n, scope));
    switch (node.type) {
      case 'Identifier':
        if (!scope.has(node.name)) free.push({ name: node.name, write: false, base, at: node.range[0] });
        return;
      case 'MemberExpression':
        return walk(node.base, scope, true);
      case 'IndexExpression':
        walk(node.base, scope, true);
        return walk(node.index, scope);
      case 'CallExpression':
      case 'TableCallExpression':
      case 'StringCallExpression':
        walk(node.base, scope, true);
        return walk(node.arguments ?? node.argument, scope);
      case 'TableKeyString':
        return walk(node.value, scope);
      case 'FunctionDeclaration': // a function expression (a statement goes through statementIn)
        return block(node.body, scope, parameters(node));
      default:
        for (const [key, value] of Object.entries(node)) if (key !== 'range' && key !== 'type') walk(value, scope);
    }
  };
  /** Walks one statement in `scope`; returns the scope after it (a `local` adds its names). */
  const statementIn = (s, scope) => {
    const target = (v) => {
      if (v.type !== 'Identifier') walk(v, scope);
      else if (!scope.has(v.name)) free.push({ name: v.name, write: true, base: false, at: v.range[0] });
    };
    switch (s.type) {
      case 'LocalStatement':
        walk(s.init, scope);
        return new Set([...scope, ...s.variables.map((v) => v.name)]);
      case 'AssignmentStatement':
        walk(s.init, scope);
        s.variables.forEach(target);
        return scope;
      case 'FunctionDeclaration': {
        const names = parameters(s);
        if (s.identifier?.type === 'MemberExpression' && s.identifier.indexer === ':') names.push('self');
        if (s.isLocal) {
          // in scope in its own body (recursion)
          const after = new Set(scope).add(s.identifier.name);
          block(s.body, after, names);
          return after;
        }
        if (s.identifier) target(s.identifier);
        block(s.body, scope, names);
        return scope;
      }
      case 'DoStatement':
      case 'WhileStatement':
        walk(s.condition, scope);
        block(s.body, scope);
        return scope;
      case 'RepeatStatement':
        block(s.body, scope, [], s.condition);
        return scope;
      case 'IfStatement':
        for (const c of s.clauses) {
          walk(c.condition, scope);
          block(c.body, scope);
        }
        return scope;
      case 'ForNumericStatement':
        walk([s.start, s.end, s.step], scope);
        block(s.body, scope, [s.variable.name]);
        return scope;
      case 'ForGenericStatement':
        walk(s.iterators, scope);
        block(
          s.body,
          scope,
          s.variables.map((v) => v.name),
        );
        return scope;
      default:
        walk(s, scope);
        return scope;
    }
  };
  statementIn(statement, new Set());
  return free;
}

/** `local NAME = <literal>`: its value's source text, else undefined. */
function constantOf(text, s) {
  if (s.type !== 'LocalStatement' || s.variables.length !== 1 || s.init.length !== 1) return undefined;
  const init = s.init[0];
  const number = (n) => n.type === 'NumericLiteral' || (n.type === 'UnaryExpression' && n.operator === '-' && number(n.argument));
  if (number(init)) return `(${text.slice(...init.range)})`;
  if (LITERALS.has(init.type)) return text.slice(...init.range);
  return undefined;
}

/**
 * The statements of `text` (a script, includes expanded) that it needs, in their order, each as { source, code }:
 * that statement's text, and the same with constants written in (below); `where(offset)` names the file and line
 * of an offset, for error messages.
 * A top-level `local` of a literal that nothing assigns is written as its value where it is read (a constant the
 * functions would otherwise each capture as an upvalue, on every call).
 */
function shake(text, where = (at) => `offset ${at}`) {
  let chunk;
  try {
    chunk = luaparse.parse(text, { luaVersion: '5.1', ranges: true, comments: false, scope: false });
  } catch (e) {
    throw new HeaderError(`${where(e.index ?? 0)}: ${e.message}`);
  }
  const statements = chunk.body;
  const refs = statements.map(() => []); // per statement: [{ to: the declaring statement's index, at, base, name }]
  const written = new Set(); // statements whose `local` something assigns
  const problems = [];
  const declared = new Map(); // name -> index of the top-level statement whose `local` is in scope
  statements.forEach((s, i) => {
    for (const { name, write, base, at } of freeNames(s)) {
      if (declared.has(name)) {
        refs[i].push({ to: declared.get(name), at, base, name });
        if (write) written.add(declared.get(name));
      } else if (write) problems.push(`${where(at)}: assigns the global '${name}' (Redis refuses: declare it local)`);
      else if (!REDIS_GLOBALS.has(name)) problems.push(`${where(at)}: '${name}' is defined nowhere before it (not a Redis global)`);
    }
    if (s.type === 'LocalStatement') s.variables.forEach((v) => declared.set(v.name, i));
    if (s.type === 'FunctionDeclaration' && s.isLocal) declared.set(s.identifier.name, i);
  });
  if (problems.length > 0) throw new HeaderError(problems.join('\n'));
  const constant = statements.map((s, i) => (written.has(i) ? undefined : constantOf(text, s)));
  const definition = (s) => (s.type === 'FunctionDeclaration' && s.isLocal) || (s.type === 'LocalStatement' && s.init.every(pure));
  const kept = new Set();
  const keep = (i) => {
    if (kept.has(i)) return;
    kept.add(i);
    for (const r of refs[i]) if (constant[r.to] === undefined) keep(r.to);
  };
  statements.forEach((s, i) => definition(s) || keep(i));
  return [...kept]
    .sort((a, b) => a - b)
    .map((i) => {
      const [from, to] = statements[i].range;
      let code = '';
      let at = from;
      for (const r of refs[i].filter((x) => constant[x.to] !== undefined).sort((x, y) => x.at - y.at)) {
        const value = constant[r.to];
        code += text.slice(at, r.at) + (r.base && !value.startsWith('(') ? `(${value})` : value);
        at = r.at + r.name.length;
      }
      return { source: text.slice(from, to), code: code + text.slice(at, to) };
    });
}

module.exports = { shake, REDIS_GLOBALS };
