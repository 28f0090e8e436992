/**
 * scripts/check-layers.js (run by `npm run lint`) holds src/ to its layers: it passes on src/ and reports an
 * import that points up and an import cycle in a tree that has them.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const script = join(__dirname, '..', '..', 'scripts', 'check-layers.js');

test('src/ imports point down only, with no cycle', () => {
  expect(execFileSync(process.execPath, [script], { encoding: 'utf8' })).toMatch(/every import points down, no cycle/);
});

test('an upward import and a cycle are reported', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bl-layers-'));
  try {
    const file = (path: string, text: string) => {
      mkdirSync(join(dir, path, '..'), { recursive: true });
      writeFileSync(join(dir, path), text);
    };
    file('types/index.ts', 'export type A = 1;\n');
    file('errors.ts', '');
    file('index.ts', "export * from './limiter/limiter';\n");
    file('core/a.ts', "import type { L } from '../limiter/limiter';\nexport type X = L;\n");
    file('limiter/limiter.ts', "import type { X } from '../core/a';\nexport type L = X;\n");
    const run = spawnSync(process.execPath, [script, dir], { encoding: 'utf8' });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('src/core/a.ts imports src/limiter/limiter.ts: limiter/ is above core/');
    expect(run.stderr).toContain('import cycle: src/core/a.ts -> src/limiter/limiter.ts -> src/core/a.ts');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
