#!/usr/bin/env node
/**
 * After tsc: the generated Lua module ships without a source map (its source is generated text of Lua
 * strings, ~0.9 MB of map for nothing a user would step through). Removes the map and the comment naming it.
 */
'use strict';
const { existsSync, readFileSync, rmSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');

const js = join(__dirname, '..', 'dist', 'redis', 'lua-sources.generated.js');
if (existsSync(js)) {
  writeFileSync(js, readFileSync(js, 'utf8').replace(/\n\/\/# sourceMappingURL=\S+\s*$/, '\n'));
  rmSync(`${js}.map`, { force: true });
}
