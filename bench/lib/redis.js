'use strict';
/**
 * Starts a real redis-server on a free port for one scenario and stops it by pid (the plain-JS twin of
 * test/helpers/redis-server.ts). Also reads server CPU per command from INFO commandstats.
 */
const { spawn } = require('node:child_process');
const { mkdtempSync, rmSync } = require('node:fs');
const { createServer } = require('node:net');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const Redis = require('ioredis');

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

async function waitForPing(port, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const probe = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    probe.on('error', () => {});
    try {
      await probe.connect();
      await probe.ping();
      probe.disconnect();
      return;
    } catch (error) {
      probe.disconnect();
      if (Date.now() > deadline) throw new Error(`redis-server on port ${port} did not answer: ${error}`);
      await new Promise((r) => setTimeout(r, 30));
    }
  }
}

/** A fresh redis-server: `{ port, pid, client(opts), stop() }`. */
async function startRedis() {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'bl-bench-'));
  const child = spawn(
    process.env.REDIS_SERVER_BIN || 'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no', '--protected-mode', 'no'],
    { stdio: 'ignore' },
  );
  const exited = new Promise((resolve) => child.once('exit', resolve));
  await waitForPing(port);
  const clients = [];
  return {
    port,
    pid: child.pid,
    client(options = {}) {
      const c = new Redis({ host: '127.0.0.1', port, maxRetriesPerRequest: 1, ...options });
      clients.push(c);
      return c;
    },
    async stop() {
      clients.splice(0).forEach((c) => c.disconnect());
      if (child.exitCode === null && child.signalCode === null) process.kill(child.pid, 'SIGKILL');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Zeroes the server's command counters (so the next reading covers only the measured phase). */
async function resetStats(client) {
  await client.config('RESETSTAT');
}

/** Total server µs and calls spent in every command except our own INFO/CONFIG probes. */
async function commandCost(client) {
  const info = await client.info('commandstats');
  let usec = 0;
  let calls = 0;
  for (const line of info.split('\n')) {
    const m = /^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/.exec(line.trim());
    if (!m || m[1] === 'info' || m[1] === 'config') continue;
    calls += Number(m[2]);
    usec += Number(m[3]);
  }
  return { usec, calls };
}

/**
 * redis-server's process CPU time so far (INFO cpu: user + system), µs: scripts, network and event loop. Unlike
 * commandstats, time the server spent descheduled is not in it.
 */
async function serverCpuUs(client) {
  const info = await client.info('cpu');
  const field = (name) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1] ?? NaN);
  return (field('used_cpu_user') + field('used_cpu_sys')) * 1e6;
}

module.exports = { startRedis, freePort, resetStats, commandCost, serverCpuUs };
