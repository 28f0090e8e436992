/**
 * Removes Lua comments and blank lines from a script (the package ships scripts without their prose: the
 * commented sources are lua/). Strings and long strings are kept as they are.
 */
'use strict';

/** `[[`, `[=[`, …: the length of the opening bracket at `i`, or 0. */
function longBracket(text, i) {
  const m = /^\[(=*)\[/.exec(text.slice(i, i + 16));
  return m ? m[0].length : 0;
}

function stripLuaComments(text) {
  let out = '';
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === '-' && text[i + 1] === '-') {
      const open = longBracket(text, i + 2);
      if (open) {
        const close = `]${'='.repeat(open - 2)}]`;
        const end = text.indexOf(close, i + 2 + open);
        i = end < 0 ? text.length : end + close.length;
      } else {
        const end = text.indexOf('\n', i);
        i = end < 0 ? text.length : end;
      }
    } else if (c === '"' || c === "'") {
      let j = i + 1;
      while (j < text.length && text[j] !== c) j += text[j] === '\\' ? 2 : 1;
      out += text.slice(i, j + 1);
      i = j + 1;
    } else if (c === '[' && longBracket(text, i)) {
      const open = longBracket(text, i);
      const close = `]${'='.repeat(open - 2)}]`;
      const end = text.indexOf(close, i + open);
      const stop = end < 0 ? text.length : end + close.length;
      out += text.slice(i, stop);
      i = stop;
    } else {
      out += c;
      i += 1;
    }
  }
  return out
    .split('\n')
    .map((line) => line.trimEnd())
    .filter((line) => line.trim() !== '')
    .join('\n');
}

module.exports = { stripLuaComments };
