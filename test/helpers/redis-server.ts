/**
 * Starts real redis-server processes for tests: one on a free port with its own temp dir (or the server
 * at REDIS_URL when set), or a Sentinel setup (a Cluster: ./redis-cluster.ts). Each is stopped by pid.
 * No Redis mocks anywhere.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Redis, { type RedisOptions } from 'ioredis';

export interface RedisServer {
  readonly host: string;
  readonly port: number;
  readonly url: string;
  /** pid of the process this helper started; undefined for an external REDIS_URL. */
  readonly pid: number | undefined;
  /** A new client; closed by `stop()` if the caller forgets. */
  client(options?: RedisOptions): Redis;
  /** SIGKILL the server (fault tests). */
  kill(): Promise<void>;
  /** Start it again on the same port and dir. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

export function redisBinary(): string {
  return process.env.REDIS_SERVER_BIN ?? 'redis-server';
}

/** Probes with a raw socket: an ioredis client here would leave reconnect timers behind. */
function pingOnce(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (data) => done(data.toString().startsWith('+PONG')));
  });
}

export async function waitForPing(port: number, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await pingOnce(port))) {
    if (Date.now() > deadline) throw new Error(`redis-server on port ${port} did not answer within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export function launch(port: number, dir: string, extraArgs: string[]): ChildProcess {
  const child = spawn(
    redisBinary(),
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--dir',
      dir,
      '--save',
      '',
      '--appendonly',
      'no',
      '--daemonize',
      'no',
      '--protected-mode',
      'no',
      ...extraArgs,
    ],
    { stdio: 'ignore', detached: false },
  );
  child.on('error', (error) => {
    throw new Error(`could not start ${redisBinary()}: ${error.message}. Install redis-server or set REDIS_URL.`);
  });
  return child;
}

export async function killChild(child: ChildProcess | undefined, signal: NodeJS.Signals): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  await new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    process.kill(child.pid!, signal);
  });
}

/** A standalone server: REDIS_URL when set (never killed), otherwise a fresh redis-server process. */
export async function startRedis(extraArgs: string[] = []): Promise<RedisServer> {
  const clients: Redis[] = [];
  const makeClient = (host: string, port: number) => (options?: RedisOptions) => {
    const c = new Redis({ host, port, maxRetriesPerRequest: 1, ...options });
    clients.push(c);
    return c;
  };
  const closeClients = () => clients.splice(0).forEach((c) => c.disconnect());

  const external = process.env.REDIS_URL;
  if (external) {
    const u = new URL(external);
    const host = u.hostname;
    const port = Number(u.port || 6379);
    return {
      host,
      port,
      url: external,
      pid: undefined,
      client: makeClient(host, port),
      kill: async () => {
        throw new Error('cannot kill the external REDIS_URL server');
      },
      restart: async () => {
        throw new Error('cannot restart the external REDIS_URL server');
      },
      stop: async () => closeClients(),
    };
  }

  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'bl-redis-'));
  let child: ChildProcess | undefined = launch(port, dir, extraArgs);
  await waitForPing(port);
  return {
    host: '127.0.0.1',
    port,
    url: `redis://127.0.0.1:${port}`,
    get pid() {
      return child?.pid;
    },
    client: makeClient('127.0.0.1', port),
    kill: async () => {
      await killChild(child, 'SIGKILL');
    },
    restart: async () => {
      await killChild(child, 'SIGKILL');
      child = launch(port, dir, extraArgs);
      await waitForPing(port);
    },
    stop: async () => {
      closeClients();
      await killChild(child, 'SIGTERM');
      child = undefined;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface SentinelSetup {
  /** The servers by role at start: [0] the master, [1] its replica (the roles swap in a failover). */
  readonly servers: RedisServer[];
  readonly sentinelPorts: number[];
  readonly masterName: string;
  /** An ioredis client through the sentinels (failoverDetector on, as docs/operations.md says). */
  client(options?: RedisOptions): Redis;
  /** The port of the current master, as the sentinels say. */
  masterPort(): Promise<number>;
  stop(): Promise<void>;
}

/** The server settings for durability docs/operations.md gives: AOF, min-replicas-to-write 1 (and no wait before a full sync). */
export const DURABLE_SERVER_ARGS: readonly string[] = [
  '--appendonly',
  'yes',
  '--appendfsync',
  'everysec',
  '--min-replicas-to-write',
  '1',
  '--min-replicas-max-lag',
  '10',
  '--repl-diskless-sync-delay',
  '0',
];

/**
 * Redis with Sentinel: one master, one replica (both AOF, min-replicas-to-write 1, as docs/operations.md advises,
 * unless `serverArgs` says otherwise) and three sentinels (quorum 2, down after 1 s), each a process started here and stopped by pid.
 */
export async function startSentinel(serverArgs: readonly string[] = DURABLE_SERVER_ARGS): Promise<SentinelSetup> {
  const masterName = 'bl-master';
  const durable = serverArgs;
  const master = await startRedis([...durable]);
  const replica = await startRedis([...durable, '--replicaof', '127.0.0.1', String(master.port)]);
  const sentinels: ChildProcess[] = [];
  const sentinelPorts: number[] = [];
  const dirs: string[] = [];
  const clients: Redis[] = [];
  for (let i = 0; i < 3; i++) {
    const port = await freePort();
    const dir = mkdtempSync(join(tmpdir(), 'bl-sentinel-'));
    const conf = join(dir, 'sentinel.conf');
    writeFileSync(
      conf,
      [
        `port ${port}`,
        'bind 127.0.0.1',
        `dir ${dir}`,
        `sentinel monitor ${masterName} 127.0.0.1 ${master.port} 2`,
        `sentinel down-after-milliseconds ${masterName} 1000`,
        `sentinel failover-timeout ${masterName} 5000`,
        `sentinel parallel-syncs ${masterName} 1`,
        '',
      ].join('\n'),
    );
    sentinels.push(spawn(redisBinary(), [conf, '--sentinel'], { stdio: 'ignore' }));
    sentinelPorts.push(port);
    dirs.push(dir);
  }
  await Promise.all(sentinelPorts.map((p) => waitForPing(p)));
  const ask = (port: number): string =>
    spawnSync('redis-cli', ['-p', String(port), 'sentinel', 'get-master-addr-by-name', masterName], { encoding: 'utf8' }).stdout;
  return {
    servers: [master, replica],
    sentinelPorts,
    masterName,
    client: (options) => {
      const c = new Redis({
        sentinels: sentinelPorts.map((port) => ({ host: '127.0.0.1', port })),
        name: masterName,
        failoverDetector: true,
        ...options,
      });
      clients.push(c);
      return c;
    },
    masterPort: async () => Number(ask(sentinelPorts[0]!).trim().split('\n')[1]),
    stop: async () => {
      clients.splice(0).forEach((c) => c.disconnect());
      await Promise.all(sentinels.map((c) => killChild(c, 'SIGKILL')));
      await replica.stop();
      await master.stop();
      dirs.forEach((d) => rmSync(d, { recursive: true, force: true }));
    },
  };
}
