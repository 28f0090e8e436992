'use strict';
/**
 * A redis-server under valgrind's callgrind, counting instructions inside EVALSHA only, for the instruction
 * counters (bench/lua-instructions.js, bench/lua-definitions.js). `count(run)`: the instructions `run` makes
 * Redis spend (counters zeroed before, dumped after). Stop it with `stop()`.
 */
const { spawn, execFileSync } = require('node:child_process');
const { mkdtempSync, readdirSync, readFileSync, rmSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const Redis = require('ioredis');
const { freePort } = require('./redis');

async function startCallgrindRedis() {
  const dir = mkdtempSync(join(tmpdir(), 'bl-cg-'));
  const port = await freePort();
  const args = ['--tool=callgrind', '--toggle-collect=evalShaCommand', `--callgrind-out-file=${join(dir, 'cg.%p')}`];
  const server = spawn('valgrind', [...args, 'redis-server', '--port', String(port), '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  server.once('error', (e) => {
    console.error(`valgrind: ${e.message} (install valgrind to run this)`);
    process.exit(1);
  });
  // valgrind takes a while to start redis-server: commands wait for the connection
  const client = new Redis({ port, retryStrategy: () => 200, maxRetriesPerRequest: null });
  client.on('error', () => {});
  const stop = () => {
    client.disconnect();
    server.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await client.ping();
  } catch (error) {
    stop();
    throw error;
  }
  const control = (what) => execFileSync('callgrind_control', [what, String(server.pid)], { stdio: 'ignore' });
  /** Instructions Redis spent inside EVALSHA while `run` ran. */
  const count = async (run) => {
    control('--zero');
    await run();
    const before = new Set(readdirSync(dir));
    control('--dump');
    const file = readdirSync(dir).find((f) => !before.has(f) && f.startsWith('cg.'));
    if (!file) throw new Error('callgrind wrote no dump');
    return Number(/^(?:summary|totals): (\d+)/m.exec(readFileSync(join(dir, file), 'utf8'))[1]);
  };
  return { client, count, stop };
}

module.exports = { startCallgrindRedis };
