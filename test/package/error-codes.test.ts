/**
 * One error table: ERROR_CODES and WARNING_CODES (src/errors.ts), the codes the source writes (src/ and lua/)
 * or builds from an option's name (codeOf), and the tables of docs/errors.md are the same set, and each row
 * of the page says a cause and a fix.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ERROR_CODES, WARNING_CODES } from '../../src/errors';
import { createLimiter } from '../../src/limiter/limiter';
import { LIMITER_OPTION_NAMES, NESTED_OPTION_NAMES } from '../../src/limiter/options';
import { METRICS_OPTION_NAMES } from '../../src/metrics/metrics-options';
import * as onExpress from '../../src/middleware/express';
import * as onKoa from '../../src/middleware/koa';
import { DEFER_OPTION_NAMES } from '../../src/queue/defer-input';
import { DISPATCHER_OPTION_NAMES } from '../../src/queue/dispatcher';
import { WORKER_OPTION_NAMES } from '../../src/queue/worker-options';
import { codeOf } from '../../src/util/validate';
import { docFiles, readDoc } from './readme-blocks';
import { knownOptions } from '../helpers/known-options';

const root = join(__dirname, '..', '..');
const sorted = (codes: Iterable<string>): string[] => [...new Set(codes)].sort();
const CODE = /(?:ERR|WRN)_BL_[A-Z0-9_]+/g;

const files = (dir: string): string[] =>
  readdirSync(dir).flatMap((f) => {
    const path = join(dir, f);
    return statSync(path).isDirectory() ? files(path) : [path];
  });

// Codes as written in the source, less the table itself; a name that ends in `_` starts a code built from an option name.
const sources = [...files(join(root, 'src')), ...files(join(root, 'lua'))].filter(
  (f) => !f.endsWith('.generated.ts') && f !== join(root, 'src', 'errors.ts'),
);
const used = new Set(sources.flatMap((f) => [...readFileSync(f, 'utf8').matchAll(CODE)].map((m) => m[0]).filter((c) => !c.endsWith('_'))));

// Codes built from an option's name (codeOf): every entry point's option names.
const limiter = createLimiter({ limit: 10 });
afterAll(() => limiter.close());
const optionNames = [
  ...LIMITER_OPTION_NAMES,
  ...Object.values(NESTED_OPTION_NAMES).flat(),
  ...DEFER_OPTION_NAMES,
  ...DISPATCHER_OPTION_NAMES,
  ...WORKER_OPTION_NAMES,
  ...METRICS_OPTION_NAMES,
  ...knownOptions(() => onExpress.bulkLimiter({ bogus: 1 } as never)),
  ...knownOptions(() => onExpress.jobStatus({ limiter, public: true, bogus: 1 } as never)),
  ...knownOptions(() => onKoa.dashboard({ limiters: [limiter], bogus: 1 } as never)),
  // BulkLimiterModule's own options (docs/nest.md)
  ...['globalGuard', 'isGlobal', 'worker', 'dispatcher'],
  // the stores' options and exponentialBackoff's have no list of names of their own
  ...['client', 'prefix', 'clock', 'maxBatch', 'maxDead'],
  ...['baseMs', 'capMs', 'random'].map((n) => `backoff.${n}`),
];
const deferNames = knownOptions(() => onExpress.bulkLimiter({ limit: 10, defer: { type: 't', statusUrl: String, bogus: 1 } } as never));
// check() and enqueue() options give InputError ERR_BL_BAD_<NAME>.
const callNames = ['cost', 'weight', 'groupConcurrency', 'delayMs', 'maxAttempts'];
const built = new Set([
  ...optionNames.map((n) => codeOf(n)),
  ...deferNames.map((n) => codeOf(n, 'DEFER_')),
  ...callNames.map((n) => codeOf(n, 'BAD_')),
]);

/** The rows of every table of docs/errors.md: the codes of the first column and the other cells. */
const page = readDoc('docs/errors.md');
const rows = page
  .split('\n')
  .filter((line) => line.startsWith('|') && !/^\|[\s|:-]+\|$/.test(line))
  .map((line) =>
    line
      .slice(1, -1)
      .split(/(?<!\\)\|/)
      .map((cell) => cell.trim()),
  )
  .filter((cells) => cells[0] !== 'Code' && cells[0] !== 'Codes');
const tabled = rows.flatMap((cells) => [...cells[0]!.matchAll(CODE)].map((m) => m[0]));

describe('the one list of error and warning codes', () => {
  const errorValues = Object.values(ERROR_CODES);
  const warningValues = Object.values(WARNING_CODES);

  it('ERROR_CODES and WARNING_CODES are keyed by their short names', () => {
    expect(Object.entries(ERROR_CODES).filter(([key, code]) => code !== `ERR_BL_${key}`)).toEqual([]);
    expect(Object.entries(WARNING_CODES).filter(([key, code]) => code !== `WRN_BL_${key}`)).toEqual([]);
    expect(Object.isFrozen(ERROR_CODES) && Object.isFrozen(WARNING_CODES)).toBe(true);
  });

  it('ERROR_CODES is every error code the source writes or builds from an option name, and no more', () => {
    expect(used.size).toBeGreaterThan(50);
    expect(sorted(errorValues)).toEqual(sorted([...used, ...built].filter((c) => c.startsWith('ERR_'))));
  });

  it('WARNING_CODES is every warning code the source writes, and no more', () => {
    expect(sorted(warningValues)).toEqual(sorted([...used].filter((c) => c.startsWith('WRN_'))));
  });

  it('docs/errors.md has one row for each code, and names no other', () => {
    // A code in a row of its own is in no other row; a row of option codes may share one with another entry point's.
    const alone = rows
      .map((cells) => cells[0]!.match(CODE) ?? [])
      .filter((codes) => codes.length === 1)
      .map(([code]) => code!);
    expect(alone.filter((c) => tabled.filter((t) => t === c).length > 1)).toEqual([]);
    expect(sorted(tabled)).toEqual(sorted([...errorValues, ...warningValues]));
    expect(sorted(page.match(CODE) ?? []).filter((c) => !c.endsWith('_') && !tabled.includes(c))).toEqual([]);
  });

  it('each row says a cause and a fix', () => {
    expect(rows.length).toBeGreaterThan(40);
    expect(rows.filter((cells) => cells.length < 3 || cells.some((cell) => cell.length < 3)).map((cells) => cells[0])).toEqual([]);
  });

  it('no other page keeps its own list of codes, or names a code the table does not have', () => {
    const docs = docFiles().map(readDoc).join('\n');
    expect(docs).not.toMatch(/^Codes: /m);
    expect(sorted(docs.match(CODE) ?? []).filter((c) => !c.endsWith('_') && !tabled.includes(c))).toEqual([]);
  });
});
