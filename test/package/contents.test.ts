/** What `npm publish` ships: only what users need, and everything it ships resolves without the repository. */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { pack } = require('../../scripts/pack') as { pack: (dir: string) => { files: string[]; unpackedSize: number } };

const root = join(__dirname, '..', '..');
const read = (file: string) => readFileSync(join(root, file), 'utf8');
let files: string[];
let unpackedSize: number;
beforeAll(() => {
  const dir = mkdtempSync(join(tmpdir(), 'bl-pack-'));
  try {
    ({ files, unpackedSize } = pack(dir));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the package holds dist, README, LICENSE and package.json, and nothing else', () => {
  expect(files.filter((f) => !f.startsWith('dist/')).sort()).toEqual(['LICENSE', 'README.md', 'package.json']);
  // The Lua scripts are compiled in: no lua/ file is read at run time.
  expect(files).toEqual(
    expect.arrayContaining([
      'dist/index.js',
      'dist/index.d.ts',
      'dist/middleware/express.js',
      'dist/middleware/koa.js',
      'dist/redis/lua-sources.generated.js',
    ]),
  );
});

test('the package unpacks to at most 1.5 MB, ships no source maps, and its Lua without comments', () => {
  expect(unpackedSize).toBeLessThanOrEqual(1.5e6);
  // The JavaScript is ES2022, unminified, close to the TypeScript line for line; maps with their sources doubled
  // the package (0.8 MB of 1.6 MB).
  expect(files.filter((f) => f.endsWith('.map'))).toEqual([]);
  const lua = read('dist/redis/lua-sources.generated.js');
  expect(lua).not.toMatch(/sourceMappingURL/);
  // A Lua comment would start a line of a script's text (a string constant with \n escapes).
  expect(lua).not.toMatch(/\\n\s*--/);
});

test('README images are absolute URLs, which the registry page can resolve', () => {
  const readme = read('README.md');
  const images = [...readme.matchAll(/!\[[^\]]*\]\(([^)\s]+)/g), ...readme.matchAll(/<img[^>]*\ssrc=["']([^"']+)/g)].map((m) => m[1]!);
  expect(images.filter((url) => !url.startsWith('https://'))).toEqual([]);
});

test('license, repository, homepage, bugs and module type are declared', () => {
  const pkg = JSON.parse(read('package.json')) as Record<string, unknown>;
  expect(pkg).toMatchObject({
    license: 'MIT',
    type: 'commonjs',
    repository: { type: 'git', url: 'git+https://github.com/bulk-limiter/bulk-limiter.git' },
    homepage: 'https://github.com/bulk-limiter/bulk-limiter#readme',
    bugs: { url: 'https://github.com/bulk-limiter/bulk-limiter/issues' },
  });
  expect(read('LICENSE')).toMatch(/^MIT License\n\nCopyright \(c\) 2026 bulk-limiter contributors\n/);
});
