/**
 * scripts/check-layers.js (run by `npm run lint`) holds src/ to its layers: it passes on src/ and reports an
 * import that points up, an import cycle, and a value read through a re-export in a tree that has them.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const script = join(__dirname, '..', '..', 'scripts', 'check-layers.js');

test('src/ imports point down only, with no cycle', () => {
  expect(execFileSync(process.execPath, [script], { encoding: 'utf8' })).toMatch(/every import points down, no cycle/);
});

/** check-layers.js run on a src/ tree of `files` (path → text) made in a temporary directory. */
function checkTree(files: Record<string, string>) {
  const dir = mkdtempSync(join(tmpdir(), 'bl-layers-'));
  try {
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(join(dir, path, '..'), { recursive: true });
      writeFileSync(join(dir, path), text);
    }
    return spawnSync(process.execPath, [script, dir], { encoding: 'utf8' });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('an upward import and a cycle are reported', () => {
  const run = checkTree({
    'types/index.ts': 'export type A = 1;\n',
    'errors.ts': '',
    'index.ts': "export * from './limiter/limiter';\n",
    'core/a.ts': "import type { L } from '../limiter/limiter';\nexport type X = L;\n",
    'limiter/limiter.ts': "import type { X } from '../core/a';\nexport type L = X;\n",
  });
  expect(run.status).toBe(1);
  expect(run.stderr).toContain('src/core/a.ts imports src/limiter/limiter.ts: limiter/ is above core/');
  expect(run.stderr).toContain('import cycle: src/core/a.ts -> src/limiter/limiter.ts -> src/core/a.ts');
});

test('a value imported through a re-export is reported; one from its own module, or a type, is not', () => {
  const run = checkTree({
    'types/index.ts': 'export type A = 1;\n',
    'errors.ts': '',
    'index.ts': '',
    'core/constants.ts': 'export const EPS = 1e-9;\nexport type Shape = { n: number };\n',
    'core/state.ts': "export { EPS } from './constants';\nexport * from './constants';\nexport const OWN = 1;\n",
    'core/decide.ts': "import { EPS, OWN, Shape } from './state';\nexport const x: Shape = { n: EPS + OWN };\n",
    'core/direct.ts': "import { EPS } from './constants';\nexport const y = EPS;\n",
    // an imported binding exported again is a re-export too; a local one exported by name is not
    'core/again.ts': "import { EPS } from './constants';\nconst LOCAL = 2;\nexport { EPS, LOCAL };\n",
    'core/reads.ts': "import { EPS, LOCAL } from './again';\nexport const z = EPS * LOCAL;\n",
  });
  expect(run.status).toBe(1);
  expect(run.stderr).toContain('src/core/decide.ts imports EPS from src/core/state.ts, which re-exports it');
  expect(run.stderr).toContain('src/core/reads.ts imports EPS from src/core/again.ts, which re-exports it');
  expect(run.stderr).toContain('check-layers: 2 problem(s)');
});
