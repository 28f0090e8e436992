/**
 * The typed script bindings generated from the headers of lua/*.lua (scripts/build-lua.js): the build refuses a
 * header its script disagrees with, TypeScript refuses a caller that disagrees with a header, and a reply of
 * the wrong shape is a StoreError, not a cast.
 */
import { cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ts from 'typescript';
import { StoreError } from '../../src/errors';
import { RedisQueue } from '../../src/redis/redis-queue';
import * as lua from '../../src/redis/lua-sources.generated';
import { LUA_DIR } from '../../src/redis/script-loader';
import { SPEC_DEFAULTS } from '../helpers/spec';
import { OracleRedis } from '../oracle/oracle-client';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { render } = require('../../scripts/build-lua') as {
  render: (dir?: string, options?: { errorsImport?: string }) => string;
};

const ROOT = join(__dirname, '..', '..');

const STATUS_LUA = `local ST = {\n  OK = 1, GONE = -1,\n}\n`;
const ITEM_LUA = `-- @struct Item [id: string, weight: int]\n`;
const TOUCH = `-- touch.lua: a fixture.
-- @key items HASH
-- @arg nowMs int
-- @arg id string
-- @reply [status: OK | GONE, count: int]
--!include includes/status.lua
local n = redis.call('HINCRBY', KEYS[1], ARGV[2], tonumber(ARGV[1]))
return { ST.OK, n }
`;
const BATCH = `-- batch.lua: a fixture with a repeated argument.
-- @key items HASH
-- @arg nowMs int
-- @each items Item
-- @reply int[]
local out = {}
for i = 2, #ARGV - 1, 2 do
  out[#out + 1] = redis.call('HINCRBY', KEYS[1], ARGV[i], tonumber(ARGV[i + 1]) + tonumber(ARGV[1]))
end
return out
`;

/** A lua/ directory holding these scripts (and the fixture includes); returns its path. */
function fixtureDir(scripts: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'bl-lua-'));
  mkdirSync(join(dir, 'includes'));
  writeFileSync(join(dir, 'includes', 'status.lua'), STATUS_LUA);
  writeFileSync(join(dir, 'includes', 'item.lua'), ITEM_LUA);
  for (const [file, text] of Object.entries(scripts)) writeFileSync(join(dir, file), text);
  return dir;
}

const renderFixture = (scripts: Record<string, string>): string => {
  const dir = fixtureDir(scripts);
  try {
    return render(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
};

test('every script in lua/ has a binding, and the repository headers agree with their scripts', () => {
  const text = render();
  const scripts = readdirSync(LUA_DIR).filter((f) => f.endsWith('.lua'));
  expect(scripts.filter((f) => !text.includes(`  file: '${f}',`))).toEqual([]);
  expect(lua.enqueueScript.keyNames).toEqual(lua.dispatchScript.keyNames); // one queue key block
  expect(lua.dispatcherLeaseScript.keyNames).toEqual(['dispatcherLease']);
});

test('the build accepts a fixture whose header matches its body', () => {
  const text = renderFixture({ 'touch.lua': TOUCH, 'batch.lua': BATCH });
  expect(text).toContain('export const touchScript');
  expect(text).toContain('for (const e of a.items) out.push(e.id, e.weight);');
});

test.each([
  [
    'an ARGV the header does not declare',
    TOUCH.replace('ARGV[2]', 'ARGV[3]'),
    /declares ARGV\[2\] \(id\) but never uses it\n\s*uses ARGV\[3\], not declared/,
  ],
  [
    'a declared argument the body never reads',
    TOUCH.replace('-- @reply', '-- @arg extra int\n-- @reply'),
    /declares ARGV\[3\] \(extra\) but never uses it/,
  ],
  [
    'a KEYS the header does not declare',
    TOUCH.replace("redis.call('HINCRBY', KEYS[1]", "redis.call('HINCRBY', KEYS[2]"),
    /uses KEYS\[2\], not declared/,
  ],
  [
    'a declared key the body never uses',
    TOUCH.replace('-- @arg nowMs', '-- @key other ZSET\n-- @arg nowMs'),
    /declares key 2 \(other\) but never uses KEYS\[2\]/,
  ],
  ['a status the table does not have', TOUCH.replace('OK | GONE', 'OK | LOST'), /no status LOST/],
  ['a misspelt tag', TOUCH.replace('-- @arg id', '-- @args id'), /unknown tag @args/],
  ['no header at all', TOUCH.replace(/^-- @.*\n/gm, ''), /touch\.lua: no header/],
])('the build fails on %s', (_what, script, message) => {
  expect(() => renderFixture({ 'touch.lua': script })).toThrow(message);
});

test.each([
  [
    'a loop that steps by 3 over a 2-field struct',
    BATCH.replace('#ARGV - 1, 2 do', '#ARGV - 2, 3 do'),
    /needs one loop `for i = 2, #ARGV - 1, 2 do`/,
  ],
  ['a struct field the loop never reads', BATCH.replace('tonumber(ARGV[i + 1])', '1'), /field 2 \(ARGV\[i \+ 1\]\) never used/],
  [
    'a read beyond the struct',
    BATCH.replace('tonumber(ARGV[1])', 'tonumber(ARGV[i + 2])'),
    /declares ARGV\[1\] \(nowMs\) but never uses it\n\s*uses ARGV\[i \+ 2\], beyond @each items/,
  ],
])('the build fails on %s', (_what, script, message) => {
  expect(() => renderFixture({ 'batch.lua': script })).toThrow(message);
});

const LIB_LUA = `local LIB_STEP = 2
local function lib_used(n) return n * LIB_STEP end
local function lib_unused() return 'never-shipped' end
local lib_seen = redis.call('INCR', 'lib-loaded')
local lib_calls = 0
local function lib_count() lib_calls = lib_calls + 1 return lib_calls end
`;
const WITH_LIB = TOUCH.replace('--!include includes/status.lua', '--!include includes/status.lua\n--!include includes/lib.lua').replace(
  'tonumber(ARGV[1])',
  'lib_used(tonumber(ARGV[1])) + lib_count()',
);

test('a script ships the definitions its code reaches, and every statement that does something', () => {
  const text = renderFixture({ 'touch.lua': WITH_LIB, 'includes/lib.lua': LIB_LUA });
  expect(text).toContain("local lib_seen = redis.call('INCR', 'lib-loaded')");
  expect(text).not.toContain('never-shipped');
  // a constant is written where it is read; a local something assigns stays one
  expect(text).toContain('local function lib_used(n) return n * (2) end');
  expect(text).not.toContain('LIB_STEP');
  expect(text).toContain('local lib_calls = 0');
});

test.each([
  ['a name defined nowhere', WITH_LIB.replace('lib_used(', 'lib_usd('), LIB_LUA, /touch\.lua:8: 'lib_usd' is defined nowhere before it/],
  [
    'a name used before its definition',
    WITH_LIB,
    `${LIB_LUA.replace('n * LIB_STEP', 'n * LIB_LATER')}local LIB_LATER = 3\n`,
    /includes\/lib\.lua:2: 'LIB_LATER' is defined nowhere before it/,
  ],
  [
    'an assignment to a global',
    WITH_LIB.replace('return { ST.OK, n }', 'total = n\nreturn { ST.OK, n }'),
    LIB_LUA,
    /touch\.lua:9: assigns the global 'total'/,
  ],
])('the build fails on %s', (_what, script, lib, message) => {
  expect(() => renderFixture({ 'touch.lua': script, 'includes/lib.lua': lib })).toThrow(message);
});

/** Type-checks `caller` against the module generated from `touch` (src/errors.ts beside it); the diagnostics. */
/** tsc's errors in the files under `dir`, type-checking its caller.ts strictly (what a caller of the bindings sees). */
function callerTypeErrors(dir: string): string[] {
  const program = ts.createProgram([join(dir, 'caller.ts')], {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    target: ts.ScriptTarget.ES2022,
    lib: ['lib.es2022.d.ts'],
    types: ['node'],
    typeRoots: [join(ROOT, 'node_modules', '@types')],
  });
  return ts
    .getPreEmitDiagnostics(program)
    .filter((d) => d.file?.fileName.startsWith(dir))
    .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
}

function typeErrors(touch: string, caller: string): string[] {
  const dir = mkdtempSync(join(tmpdir(), 'bl-bindings-'));
  try {
    mkdirSync(join(dir, 'store'));
    writeFileSync(join(dir, 'store', 'bindings.ts'), renderFixture({ 'touch.lua': touch, 'batch.lua': BATCH }));
    writeFileSync(join(dir, 'errors.ts'), ts.sys.readFile(join(ROOT, 'src', 'errors.ts'))!);
    writeFileSync(join(dir, 'caller.ts'), caller);
    return callerTypeErrors(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('TypeScript refuses a caller that disagrees with the header it was generated from', () => {
  const caller = `
import { batchScript, touchScript, STATUS } from './store/bindings';
const argv = touchScript.argv(touchScript.keys({ items: 'k' }), { nowMs: 1, id: 'a' });
const reply = touchScript.decode(null);
const ok: boolean = reply.status === STATUS.OK;
const count: number = reply.count;
const batch = batchScript.argv(['k'], { nowMs: 1, items: [{ id: 'a', weight: 2 }] });
export { argv, ok, count, batch };
`;
  expect(typeErrors(TOUCH, caller)).toEqual([]);
  // The header renames an argument and retypes a reply field: the same caller no longer compiles.
  const changed = TOUCH.replace('-- @arg id string', '-- @arg group string').replace('count: int]', 'count: string]');
  const errors = typeErrors(changed, caller).join('\n');
  expect(errors).toMatch(/'id' does not exist in type 'TouchArgs'/);
  expect(errors).toMatch(/Type 'string' is not assignable to type 'number'/);
}, 60_000);

test('a decoder checks the reply shape: a wrong one is a StoreError ERR_BL_STORE_REPLY naming the script and the field', () => {
  const job = ['1-000001', '{}', '1:5 g', 100, ''];
  expect(lua.claimScript.decode([[job], 0])).toEqual({
    claimed: [{ id: '1-000001', record: '{}', token: '1:5 g', leaseUntil: 100, reservation: '' }],
    wakeMs: 0,
  });
  expect(() => lua.claimScript.decode([[job.slice(0, 4)], 0])).toThrow(/claim\.lua reply: claimed should be an array of 5/);
  expect(() => lua.claimScript.decode([[['1', '{}', 7, 100, '']], 0])).toThrow(/LeasedJob\.token should be a string, got `7`/);
  expect(() => lua.enqueueScript.decode([7, '', 0])).toThrow(/status should be 1 \| 2 \| -2 \| -3/);
  expect(() => lua.failScript.decode('gone')).toThrow(StoreError);
  expect(() => lua.completeScript.decode(2)).toThrow(expect.objectContaining({ code: 'ERR_BL_STORE_REPLY' }));
  expect(lua.getJobScript.decode(null)).toBeNull();
  const acks = [1, 2].map((n) => ({ id: `j${n}`, token: `t${n}`, hasResult: n === 1, result: 'r', keepMs: n, trimPage: 100, leaseMs: 50, max: 1 }));
  expect(lua.completeClaimManyScript.argv(['k'], { nowMs: 9, config: 'c', plans: '', acks })).toEqual([
    'k',
    9,
    'c',
    '',
    'j1',
    't1',
    1,
    'r',
    1,
    100,
    50,
    1,
    'j2',
    't2',
    0,
    'r',
    2,
    100,
    50,
    1,
  ]);
});

test('a queue script whose reply has the wrong shape fails the call with ERR_BL_STORE_REPLY', async () => {
  const oracle = new OracleRedis({ clock: () => 1000, rewrite: (text) => text.replace('return { requeued, dead }', 'return { requeued }') });
  const spec = { ...SPEC_DEFAULTS, name: 'shape', limit: 10, windowMs: 1000, burst: 1, reserve: 0, idleMs: 1000, epochMs: 100, sustained: false };
  const queue = new RedisQueue({ client: oracle.asClient(), spec, clock: () => 1000 });
  await expect(queue.reclaimExpired(3, 10)).rejects.toMatchObject({ code: 'ERR_BL_STORE_REPLY', message: expect.stringContaining('reclaim.lua') });
  expect(await queue.counts()).toMatchObject({ dead: 0, oldestWaitingMs: 0 });
});

/** A copy of lua/ with `edits` applied (file → its text → the edited text); returns its path. */
function editedLua(edits: Record<string, (text: string) => string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'bl-lua-'));
  cpSync(LUA_DIR, dir, { recursive: true });
  for (const [file, edit] of Object.entries(edits)) {
    const before = readFileSync(join(dir, file), 'utf8');
    const after = edit(before);
    expect(after).not.toBe(before); // the edit found its text
    writeFileSync(join(dir, file), after);
  }
  return dir;
}

const renderEdited = (edits: Record<string, (text: string) => string>): string => {
  const dir = editedLua(edits);
  try {
    return render(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
};

test.each([
  [
    'admit.lua reads an argument its header dropped',
    'admit.lua',
    (t: string) => t.replace(/^-- @arg leaseMs\?.*\n/m, ''),
    /admit\.lua: its header and its body disagree:\n\s*uses ARGV\[7\], not declared/,
  ],
  [
    'admit-many.lua steps through its checks by 3 while AdmitCheck has 4 fields',
    'admit-many.lua',
    (t: string) => t.replace('#ARGV - 3, 4 do', '#ARGV - 2, 3 do'),
    /admit-many\.lua: .*\n\s*@each checks needs one loop `for i = 4, #ARGV - 3, 4 do`/,
  ],
  [
    'admit-defer.lua declares a key it never uses',
    'admit-defer.lua',
    (t: string) => t.replace('-- @key overridesIndex ZSET (renewed likewise)', '-- @key overridesIndex ZSET (renewed likewise)\n-- @key spare HASH'),
    /declares key 25 \(spare\) but never uses KEYS\[25\]/,
  ],
  [
    'release.lua reads its leases in pairs',
    'release.lua',
    (t: string) => t.replace('for i = 1, #ARGV do', 'for i = 1, #ARGV - 1, 2 do'),
    /@each leases needs one loop `for i = 1, #ARGV do`/,
  ],
  [
    'a reply that repeats by a count the header does not declare',
    'peek.lua',
    (t: string) => t.replace(/^-- @param rules .*\n/m, ''),
    /peek\.lua: no @param rules \(the reply's \?rules\)/,
  ],
  ['a count declared a flag', 'admit.lua', (t: string) => t.replace('@param rules int', '@param rules bool'), /\*rules counts: @param rules int/],
])('the build fails when an admission header and its script disagree: %s', (_what, file, edit, message) => {
  expect(() => renderEdited({ [file]: edit })).toThrow(message);
});

test('the admission replies decode flat: fixed fields, then per rule its mark, then the lease; the counts are the caller’s', () => {
  const fixed = [1, 0, 9, 10, 5, 0, 0, 100, 2, 1234, 'g', 0, '', ''];
  expect(lua.admitScript.decode(fixed, { rules: 0, capped: false })).toEqual({
    allowed: true,
    colour: 0,
    remaining: 9,
    limit: 10,
    guaranteed: 5,
    retryMs: 0,
    hintMs: 0,
    resetMs: 100,
    active: 2,
    atUs: 1234,
    group: 'g',
    emptyMs: 0,
    config: '',
    override: '',
    policy: undefined,
    rules: [],
    lease: undefined,
    held: undefined,
  });
  const ruled = [...fixed, 2, 400, 0, '5-1:g', 1];
  expect(lua.admitScript.decode(ruled, { rules: 2, capped: true })).toMatchObject({
    policy: 2,
    rules: [400, 0],
    lease: '5-1:g',
    held: 1,
  });
  // told one rule, given two: the values left over are a wrong reply, not a silent misread
  expect(() => lua.admitScript.decode(ruled, { rules: 1, capped: true })).toThrow(/admit\.lua reply: lease should be a string, got `0`/);
  expect(() => lua.admitScript.decode([...fixed, 7], { rules: 0, capped: false })).toThrow(expect.objectContaining({ code: 'ERR_BL_STORE_REPLY' }));
  const two = lua.admitManyScript.decode([...fixed, ...fixed.map((v) => (v === 'g' ? 'h' : v))], { checks: 2, rules: 0, capped: false });
  expect(two.map((r) => r.group)).toEqual(['g', 'h']);
  const deferred = [0, 2, 0, 10, 5, 300, 300, 100, 2, 1234, 'g', 1, 'job-1', 1534, 12, '', ''];
  expect(lua.admitDeferScript.decode(deferred, { rules: 0, capped: false })).toMatchObject({
    deferStatus: lua.STATUS.WRITTEN,
    jobId: 'job-1',
    runAtMs: 1534,
    emptyMs: 12,
  });
  expect(() => lua.admitDeferScript.decode([...deferred.slice(0, 11), 7, ...deferred.slice(12)], { rules: 0, capped: false })).toThrow(
    /deferStatus should be 0 \| 1 \| 2 \| -2 \| -3/,
  );
  expect(lua.releaseScript.decode([1, 0], { count: 2 })).toEqual([true, false]);
  expect(() => lua.releaseScript.decode([1], { count: 2 })).toThrow(/release\.lua reply/);
});

/** Type-checks `caller` against the bindings generated from lua/ with `edits` applied (the real src/ beside them). */
function admissionTypeErrors(edits: Record<string, (text: string) => string>, caller: string): string[] {
  const luaDir = editedLua(edits);
  const dir = mkdtempSync(join(ROOT, 'test', '.bl-bindings-'));
  try {
    writeFileSync(join(dir, 'bindings.ts'), render(luaDir, { errorsImport: '../../src/errors' }));
    writeFileSync(join(dir, 'caller.ts'), caller);
    return callerTypeErrors(dir);
  } finally {
    rmSync(luaDir, { recursive: true, force: true });
    rmSync(dir, { recursive: true, force: true });
  }
}

test('TypeScript refuses an admission caller that disagrees with the headers: the decoded reply is the stores’ AdmitReply', () => {
  // what src/redis/admission-scripts.ts and redis-store.ts rely on: the arguments' names, and the reply as AdmitReply
  const caller = `
import type { AdmitReply } from '../../src/core/decision';
import { admitScript, admitManyScript } from './bindings';
import { SPEC_DEFAULTS } from '../helpers/spec';
const argv = admitScript.argv([], { nowMs: 1.5, config: 'c', group: 'g', weight: 1, cost: 1, cap: 2, leaseMs: 100 });
const one: AdmitReply = admitScript.decode(null, { rules: 1, capped: true });
const many: readonly AdmitReply[] = admitManyScript.decode(null, { checks: 2, rules: 0, capped: false });
export { argv, one, many };
`;
  expect(admissionTypeErrors({}, caller)).toEqual([]);
  const errors = admissionTypeErrors(
    {
      'admit.lua': (t) => t.replace('-- @arg nowMs number', '-- @arg nowUs number'),
      'includes/admission.lua': (t) => t.replace(/held: int\?capped\]/g, 'held: string?capped]'),
    },
    caller,
  ).join('\n');
  expect(errors).toMatch(/'nowMs' does not exist in type 'AdmitArgs'/);
  expect(errors).toMatch(/Type 'string \| undefined' is not assignable to type 'number \| undefined'/);
}, 60_000);
