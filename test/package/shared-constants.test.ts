/**
 * The numbers lua/ and src/ share are written once, in lua/includes/constants.lua: the build generates their
 * TypeScript (src/core/constants.generated.ts), and no source file defines one of them again by hand.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import * as generated from '../../src/core/constants.generated';

const root = join(__dirname, '..', '..');
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { renderConstants } = require('../../scripts/build-lua') as { renderConstants: () => string };

const files = (dir: string): string[] =>
  readdirSync(dir).flatMap((f) => (statSync(join(dir, f)).isDirectory() ? files(join(dir, f)) : [join(dir, f)]));

test('the generated module is the constants file, and names at least the admission, rules, concurrency and claim numbers', () => {
  expect(readFileSync(join(root, 'src', 'core', 'constants.generated.ts'), 'utf8')).toBe(renderConstants());
  expect(Object.keys(generated)).toEqual(expect.arrayContaining(['FS_EPS', 'FS_WITHIN', 'FS_GRAD_BURST', 'RL_SLOTS', 'CC_SWEEP', 'CLAIM_SCAN']));
});

test('no other file defines a shared constant by hand', () => {
  const names = Object.keys(generated);
  const defined = new RegExp(`(?:^\\s*local|\\bconst) (${names.join('|')}) =`, 'm');
  const sources = [...files(join(root, 'src')), ...files(join(root, 'lua'))].filter(
    (f) => !f.endsWith('constants.generated.ts') && !f.endsWith('constants.lua') && !f.endsWith('lua-sources.generated.ts'),
  );
  expect(sources.filter((f) => defined.test(readFileSync(f, 'utf8'))).map((f) => f.slice(root.length + 1))).toEqual([]);
});
