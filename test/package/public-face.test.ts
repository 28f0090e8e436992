/**
 * The main entry is what users call, and no more: its values are pinned here (a new export is a decision,
 * made in this list and in CHANGELOG.md). The store contract (every type of src/types/) is the
 * `bulk-limiter/store` entry; store-author types stay out of the main entry, and resolved internals stay out
 * of the published declarations.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const root = join(__dirname, '..', '..');
const read = (file: string) => readFileSync(join(root, file), 'utf8');

test('the main entry exports these values', () => {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const main = require(join(root, 'dist', 'index.js')) as Record<string, unknown>;
  expect(Object.keys(main).sort()).toEqual(
    [
      'BulkLimiterError',
      'ConfigError',
      'Dispatcher',
      'ERROR_CODES',
      'EnqueueError',
      'InputError',
      'LeaseLostError',
      'MemoryStore',
      'PermanentError',
      'RedisStore',
      'RetryLaterError',
      'StoreError',
      'WARNING_CODES',
      'Worker',
      'WorkerClosedError',
      'createLimiter',
      'exponentialBackoff',
      'reportUpstream',
    ].sort(),
  );
});

/** Types a store author implements or speaks in; users of the limiter never name them. */
const STORE_AUTHOR_TYPES = [
  'AdaptiveSpec',
  'AdaptiveStatus',
  'AdmitInput',
  'ClaimResult',
  'ClaimedJob',
  'Clock',
  'CompleteAndClaimResult',
  'ConfigDrift',
  'DeferInput',
  'DispatchOptions',
  'DispatchResult',
  'DurableWrites',
  'EnqueueInput',
  'EnqueueResult',
  'FailOutcome',
  'FailResult',
  'FailState',
  'LimiterSpec',
  'LimiterStore',
  'OverrideInput',
  'OverrideWrite',
  'PeekInput',
  'PlanSpec',
  'QueueStore',
  'ReportInput',
  'RuleSpec',
  'ServerInfo',
  'SettleInput',
];

test('every type of the contract is a user type of the main entry or a store-author type, never both', () => {
  const index = read('src/index.ts');
  const contract = ['limiter-spec', 'decision', 'limiter-store', 'queue-store', 'overrides'].flatMap((file) =>
    [...read(`src/types/${file}.ts`).matchAll(/^export (?:interface|type) (\w+)/gm)].map((m) => m[1]!),
  );
  const named = (name: string) => new RegExp(`\\b${name}\\b`).test(index);
  expect(contract.filter((name) => named(name) === STORE_AUTHOR_TYPES.includes(name))).toEqual([]);
  expect(STORE_AUTHOR_TYPES.filter((name) => !contract.includes(name))).toEqual([]);
});

test('bulk-limiter/store is the contract, and src/index.ts exports no module wholesale', () => {
  const pkg = JSON.parse(read('package.json')) as { exports: Record<string, { types: string; default: string }> };
  expect(pkg.exports['./store']).toEqual({ types: './dist/types/index.d.ts', default: './dist/types/index.js' });
  expect(read('src/index.ts')).not.toMatch(/^export (?:type )?\*/m);
});

test("the limiter's resolved internals are not in its published type", () => {
  const api = read('dist/limiter/limiter-api.d.ts');
  const limiter = /export interface Limiter \{([\s\S]*?)\n\}/.exec(api)?.[1] ?? '';
  expect(limiter).toMatch(/check\(group: string/);
  for (const field of ['spec', 'options', 'deferOptions']) expect(limiter).not.toMatch(new RegExp(`readonly ${field}:`));
});
