/**
 * The check that a lua/*.lua script's body (includes expanded) agrees with its header (./lua-headers.js): every
 * declared key and argument read, nothing read that is not declared, an @each read by one loop of its width.
 */
'use strict';
const { HeaderError, width } = require('./lua-headers');

/** Lua source without comments, and with every string literal emptied (only code is searched). */
function codeOf(src) {
  let out = '';
  let i = 0;
  while (i < src.length) {
    const long = /^\[(=*)\[/.exec(src.slice(i, i + 12));
    if (src.startsWith('--', i)) {
      const open = /^\[(=*)\[/.exec(src.slice(i + 2, i + 14));
      const end = open ? src.indexOf(`]${open[1]}]`, i) : src.indexOf('\n', i);
      i = end < 0 ? src.length : open ? end + open[1].length + 2 : end;
    } else if (src[i] === '"' || src[i] === "'") {
      let j = i + 1;
      while (j < src.length && src[j] !== src[i]) j += src[j] === '\\' ? 2 : 1;
      out += '""';
      i = j + 1;
    } else if (long) {
      const end = src.indexOf(`]${long[1]}]`, i);
      out += '""';
      i = end < 0 ? src.length : end + long[1].length + 2;
    } else out += src[i++];
  }
  return out;
}

/** Throws when the script's body (includes expanded) and its header disagree on KEYS or ARGV. */
function checkScript(header, expanded, decl) {
  const code = codeOf(expanded);
  const problems = [];
  const usedKeys = new Set();
  for (const m of code.matchAll(/KEYS\s*\[\s*([^\]]*)\]/g)) {
    if (/^\d+$/.test(m[1].trim())) usedKeys.add(Number(m[1]));
    else problems.push(`KEYS[${m[1]}]: only literal key indices can be checked`);
  }
  header.keys.forEach((name, i) => usedKeys.has(i + 1) || problems.push(`declares key ${i + 1} (${name}) but never uses KEYS[${i + 1}]`));
  for (const n of usedKeys) if (n > header.keys.length) problems.push(`uses KEYS[${n}], not declared (${header.keys.length} keys)`);

  const fixed = header.args.reduce((n, a) => n + width(a.type, decl), 0);
  const usedArgs = new Set();
  const offsets = new Map();
  for (const m of code.matchAll(/ARGV\s*\[\s*([^\]]*)\]/g)) {
    const at = m[1].trim();
    const loop = /^([A-Za-z_]\w*)(?:\s*\+\s*(\d+))?$/.exec(at);
    if (/^\d+$/.test(at)) usedArgs.add(Number(at));
    else if (loop) offsets.set(loop[1], new Set([...(offsets.get(loop[1]) ?? []), Number(loop[2] ?? 0)]));
    else problems.push(`ARGV[${at}]: only ARGV[<n>] and ARGV[<i> + <n>] can be checked`);
  }
  const names = header.args.flatMap((a) => {
    const w = width(a.type, decl);
    return w === 1 ? [a.name] : Array.from({ length: w }, (_, i) => `${a.name}.${i + 1}`);
  });
  names.forEach((name, i) => usedArgs.has(i + 1) || problems.push(`declares ARGV[${i + 1}] (${name}) but never uses it`));
  for (const n of usedArgs)
    if (n > fixed) problems.push(`uses ARGV[${n}], not declared (${fixed} fixed arguments${header.each ? ', then @each' : ''})`);
  // `for i = n, #ARGV - (k - 1), k do`, or for one value at a time `for i = n, #ARGV do`
  const loops = [...code.matchAll(/for\s+([A-Za-z_]\w*)\s*=\s*(\d+)\s*,\s*#ARGV(?:\s*-\s*(\d+)\s*,\s*(\d+))?\s+do/g)];
  if (header.each) {
    const k = width(header.each.type, decl);
    const loop = loops[0];
    const shape = (m) => [Number(m[2]), Number(m[3] ?? 0), Number(m[4] ?? 1)];
    if (loops.length !== 1 || shape(loop).join() !== [fixed + 1, k - 1, k].join()) {
      const expected = k === 1 ? `for i = ${fixed + 1}, #ARGV do` : `for i = ${fixed + 1}, #ARGV - ${k - 1}, ${k} do`;
      problems.push(`@each ${header.each.name} needs one loop \`${expected}\``);
    } else {
      const used = offsets.get(loop[1]) ?? new Set();
      for (let j = 0; j < k; j++) if (!used.has(j)) problems.push(`@each ${header.each.name}: field ${j + 1} (ARGV[${loop[1]} + ${j}]) never used`);
      for (const j of used) if (j >= k) problems.push(`uses ARGV[${loop[1]} + ${j}], beyond @each ${header.each.name} (${k} values)`);
    }
  } else {
    if (loops.length > 0 || /#ARGV/.test(code)) problems.push('reads #ARGV but declares no @each');
    for (const v of offsets.keys()) problems.push(`uses ARGV[${v} …] but declares no @each`);
  }
  if (problems.length > 0) throw new HeaderError(`${header.file}: its header and its body disagree:\n  ${problems.join('\n  ')}`);
}

module.exports = { checkScript, codeOf };
