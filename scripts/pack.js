'use strict';
/** Packs the package as `npm publish` would, without lifecycle scripts (build first), into `dir`. */
const { execFileSync } = require('node:child_process');
const { join } = require('node:path');

const ROOT = join(__dirname, '..');

/** Returns the tarball's path, the packed file names (relative to the package root) and the unpacked size in bytes. */
function pack(dir) {
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const out = execFileSync(npm, ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], {
    cwd: ROOT,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
    shell: process.platform === 'win32',
  });
  const [info] = JSON.parse(out);
  return { tarball: join(dir, info.filename), files: info.files.map((f) => f.path), unpackedSize: info.unpackedSize };
}

module.exports = { pack, ROOT };
