/**
 * `npm ci` refuses a lock that misses an optional dependency of a locked package (other platforms' native
 * binaries: swc, esbuild, jest's resolver, msgpackr). A native dev dependency bumped to a version whose
 * platform packages are not all published shows up here, before it breaks `npm ci` on macOS or Windows.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

interface LockedPackage {
  readonly version?: string;
  readonly optionalDependencies?: Record<string, string>;
}

const lock = JSON.parse(readFileSync(join(__dirname, '..', '..', 'package-lock.json'), 'utf8')) as {
  packages: Record<string, LockedPackage>;
};

/** Where node (and npm) finds `name` from the package at `from`: its own node_modules, then each parent's. */
function resolveLocked(from: string, name: string): string | undefined {
  let dir = from;
  for (;;) {
    const candidate = `${dir ? `${dir}/` : ''}node_modules/${name}`;
    if (lock.packages[candidate]) return candidate;
    if (!dir) return undefined;
    const at = dir.lastIndexOf('node_modules/');
    dir = at <= 0 ? '' : dir.slice(0, at - 1);
  }
}

test('the lock lists every optional dependency of every locked package, for every platform', () => {
  const missing: string[] = [];
  let checked = 0;
  for (const [path, pkg] of Object.entries(lock.packages)) {
    for (const name of Object.keys(pkg.optionalDependencies ?? {})) {
      checked++;
      if (!resolveLocked(path, name)) missing.push(`${path || '(root)'} → ${name}`);
    }
  }
  expect(missing).toEqual([]);
  expect(checked).toBeGreaterThan(60); // swc 12 + esbuild 26 + unrs 22 + msgpackr 6 at least
});

test('each native binary package is locked for macOS, Windows and Linux', () => {
  const platforms = (prefix: string) => Object.keys(lock.packages).filter((p) => p.includes(`node_modules/${prefix}`));
  for (const prefix of ['@swc/core-', '@esbuild/', '@unrs/resolver-binding-', '@msgpackr-extract/msgpackr-extract-']) {
    const locked = platforms(prefix).join(' ');
    for (const os of ['darwin-arm64', 'darwin-x64', 'win32-x64', 'linux-x64']) expect(locked).toContain(`${prefix}${os}`);
  }
});
