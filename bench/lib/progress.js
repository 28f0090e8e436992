'use strict';
/** One progress line on stderr while the bench runs (rewritten in place on a terminal). */
const started = Date.now();
const tty = Boolean(process.stderr.isTTY);

function progress(text) {
  const elapsed = ((Date.now() - started) / 1000).toFixed(0).padStart(4);
  const line = `[bench ${elapsed}s] ${text}`;
  if (tty) process.stderr.write(`\r\x1b[K${line.slice(0, (process.stderr.columns || 120) - 1)}`);
  else process.stderr.write(`${line}\n`);
}

function progressDone() {
  if (tty) process.stderr.write('\n');
}

module.exports = { progress, progressDone };
