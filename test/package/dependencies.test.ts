/**
 * What the built package loads is what it declares: every module dist/ requires at run time is a Node built-in,
 * a dependency or a peer dependency, and every dependency is used (a dev-only tool must not be installed for users).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join } from 'node:path';

const root = join(__dirname, '..', '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
};

function filesUnder(dir: string, suffix: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith(suffix))
    .map((e) => join(e.parentPath, e.name));
}

/** 'ioredis/built/x' → 'ioredis', '@scope/name/x' → '@scope/name'. */
const packageName = (spec: string) =>
  spec
    .split('/')
    .slice(0, spec.startsWith('@') ? 2 : 1)
    .join('/');

function bareImports(files: string[], pattern: RegExp): Set<string> {
  const names = new Set<string>();
  for (const file of files) {
    for (const m of readFileSync(file, 'utf8').matchAll(pattern)) {
      const spec = (m[1] ?? m[2])!;
      if (!spec.startsWith('.') && !spec.startsWith('node:') && !builtinModules.includes(spec)) names.add(packageName(spec));
    }
  }
  return names;
}

const required = bareImports(filesUnder(join(root, 'dist'), '.js'), /\brequire\(["']([^"']+)["']\)/g);
const typeImports = bareImports(filesUnder(join(root, 'dist'), '.d.ts'), /\bfrom ["']([^"']+)["']|\bimport\(["']([^"']+)["']\)/g);

test('dist requires only built-ins, dependencies and peer dependencies', () => {
  const declared = new Set([...Object.keys(pkg.dependencies ?? {}), ...Object.keys(pkg.peerDependencies ?? {})]);
  expect([...required].filter((name) => !declared.has(name))).toEqual([]);
  expect(required.size).toBeGreaterThan(0);
});

test('every dependency is used by dist at run time (or is the types of one)', () => {
  const used = (name: string) => required.has(name) || (name.startsWith('@types/') && required.has(name.slice('@types/'.length)));
  expect(Object.keys(pkg.dependencies ?? {}).filter((name) => !used(name))).toEqual([]);
});

test('peer dependencies are optional: core users install none of them', () => {
  for (const name of Object.keys(pkg.peerDependencies ?? {})) expect(pkg.peerDependenciesMeta?.[name]?.optional).toBe(true);
});

test('declarations import only dependencies and peer dependencies (whose types users of that feature have)', () => {
  const declared = new Set([...Object.keys(pkg.dependencies ?? {}), ...Object.keys(pkg.peerDependencies ?? {})]);
  expect([...typeImports].filter((name) => !declared.has(name))).toEqual([]);
});
