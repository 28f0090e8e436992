#!/usr/bin/env node
/**
 * Checks the package as users get it: packs it (no rebuild: run `npm run build` first) and runs attw (types
 * under node10, node16 CJS and ESM, bundler) and publint (strict, suggestions included) on the tarball. Any
 * problem exits 1. An exports entry whose source is not written yet is skipped by name, with a notice.
 */
'use strict';
const { execFileSync } = require('node:child_process');
const { existsSync, mkdtempSync, readFileSync, rmSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const { pack, ROOT } = require('./pack');

/** Subpath → the source that will back it; skipped only while that source does not exist. */
const PENDING_ENTRIES = { './prometheus': 'src/metrics/prometheus.ts' };

async function main() {
  const pending = Object.keys(PENDING_ENTRIES).filter((entry) => !existsSync(join(ROOT, PENDING_ENTRIES[entry])));
  for (const entry of pending) console.log(`lint-package: skipping ${entry} (${PENDING_ENTRIES[entry]} is not written yet)`);
  const dir = mkdtempSync(join(tmpdir(), 'bl-lint-'));
  let failed = false;
  try {
    const { tarball } = pack(dir);

    const attw = join(ROOT, 'node_modules', '@arethetypeswrong', 'cli', 'dist', 'index.js');
    const exclude = pending.length ? ['--exclude-entrypoints', ...pending] : [];
    try {
      const out = execFileSync(process.execPath, [attw, tarball, '--no-definitely-typed', '--no-color', '--format', 'table-flipped', ...exclude], {
        encoding: 'utf8',
      });
      console.log(`attw: no problems\n${out.trim()}`);
    } catch (err) {
      failed = true;
      console.log(`attw found problems:\n${err.stdout}${err.stderr}`);
    }

    const { publint } = await import('publint');
    const { formatMessage } = await import('publint/utils');
    const bytes = readFileSync(tarball);
    const packed = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
    const { messages, pkg } = await publint({ pack: { tarball: packed }, strict: true, level: 'suggestion' });
    const problems = messages.filter((m) => !(m.path[0] === 'exports' && pending.includes(m.path[1])));
    if (problems.length) {
      failed = true;
      console.log(`publint found problems:\n${problems.map((m) => `- ${m.type}: ${formatMessage(m, pkg, { color: false })}`).join('\n')}`);
    } else {
      console.log('publint: no problems');
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  if (failed) process.exitCode = 1;
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
