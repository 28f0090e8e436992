/**
 * Starts a real Redis Cluster for tests: `masters` masters, optionally each with one replica (then with the
 * durability settings of docs/operations.md and a short node timeout, so a killed master's replica is promoted within a
 * few seconds). Each node is a redis-server process started here and stopped by pid.
 */
import { execFile, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Cluster, type ClusterOptions } from 'ioredis';
import { DURABLE_SERVER_ARGS, freePort, killChild, launch, waitForPing } from './redis-server';

const run = promisify(execFile);

export interface RedisCluster {
  readonly ports: number[];
  readonly pids: number[];
  client(options?: ClusterOptions): Cluster;
  /** The port of the master serving `slot`, as the live nodes' `CLUSTER NODES` says (a failed one excluded). */
  masterOf(slot: number): Promise<number | undefined>;
  /** The port of a replica of the master on `port`. */
  replicaOf(port: number): Promise<number | undefined>;
  /** SIGKILL one node (fault tests). */
  kill(port: number): Promise<void>;
  /** A manual failover (`CLUSTER FAILOVER` on a replica): it and its master swap roles, both stay up. */
  promote(replicaPort: number): Promise<void>;
  /** Moves `slot` with its keys from the master on `fromPort` to the master on `toPort` (a resharding). */
  moveSlot(slot: number, fromPort: number, toPort: number): Promise<void>;
  /** SIGSTOP / SIGCONT one node: it answers nothing meanwhile, and a replica falls behind its master. */
  pause(port: number): void;
  resume(port: number): void;
  /** Start a killed node again on its port and dir: it rejoins the cluster (a promoted-over master as a replica). */
  restart(port: number): Promise<void>;
  stop(): Promise<void>;
}

export interface ClusterSetup {
  /** Replicas per master: 0 or 1. @defaultValue 0 */
  readonly replicas?: number;
}

async function waitFor(what: string, predicate: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function cli(port: number, ...args: string[]): Promise<string> {
  try {
    return (await run('redis-cli', ['-p', String(port), ...args], { encoding: 'utf8', timeout: 5000 })).stdout;
  } catch {
    return ''; // a node that is down (or slow under load) answers nothing this time
  }
}

/** `CLUSTER NODES` lines: "<id> <host:port@cport> <flags> <master id> … <slot ranges>". */
function masterInNodes(nodes: string, slot: number): number | undefined {
  for (const line of nodes.split('\n')) {
    const [, address, flags, , , , , , ...ranges] = line.split(' ');
    if (!address || !flags || !flags.split(',').includes('master') || flags.includes('fail')) continue;
    for (const range of ranges) {
      const [from, to = from] = range.split('-').map(Number);
      if (from !== undefined && to !== undefined && slot >= from && slot <= to) return Number(address.split('@')[0]!.split(':')[1]);
    }
  }
  return undefined;
}

/** A replica of the master at `masterPort`, from `CLUSTER NODES`. */
function replicaInNodes(nodes: string, masterPort: number): number | undefined {
  const lines = nodes.split('\n').map((line) => line.split(' '));
  const portOf = (address: string): number => Number(address.split('@')[0]!.split(':')[1]);
  const masterId = lines.find(([, address]) => address !== undefined && portOf(address) === masterPort)?.[0];
  const replica = lines.find(([, address, flags, master]) => address && flags?.includes('slave') && master === masterId);
  return replica ? portOf(replica[1]!) : undefined;
}

/** A Redis Cluster of `masters` masters (and `replicas` replicas each), each a process started here and stopped by pid. */
export async function startCluster(masters = 3, setup: ClusterSetup = {}): Promise<RedisCluster> {
  const replicas = setup.replicas ?? 0;
  const nodeCount = masters * (1 + replicas);
  const ports: number[] = [];
  const children = new Map<number, ChildProcess>();
  const dirs = new Map<number, string>();
  const clients: Cluster[] = [];
  // With replicas, a 1 s node timeout: a dead master is failed over in a few seconds, even under load.
  const args = (dir: string): string[] => [
    '--cluster-enabled',
    'yes',
    '--cluster-config-file',
    join(dir, 'nodes.conf'),
    '--cluster-node-timeout',
    replicas > 0 ? '1000' : '2000',
    ...(replicas > 0 ? DURABLE_SERVER_ARGS : []),
  ];
  for (let i = 0; i < nodeCount; i++) {
    const port = await freePort();
    const dir = mkdtempSync(join(tmpdir(), 'bl-cluster-'));
    ports.push(port);
    dirs.set(port, dir);
    children.set(port, launch(port, dir, args(dir)));
  }
  await Promise.all(ports.map((p) => waitForPing(p)));
  const create = spawnSync(
    'redis-cli',
    ['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', String(replicas), '--cluster-yes'],
    { encoding: 'utf8', timeout: 60_000 },
  );
  if (create.status !== 0) throw new Error(`redis-cli --cluster create failed: ${create.stderr || create.stdout}`);
  // Every node agrees the cluster is ok, and every master has its replicas online (min-replicas-to-write).
  for (const port of ports) {
    await waitFor(
      `cluster node ${port} to reach cluster_state:ok`,
      async () => (await cli(port, 'cluster', 'info')).includes('cluster_state:ok'),
      30_000,
    );
    await waitFor(
      `cluster node ${port} to have its replicas online`,
      async () => {
        const info = await cli(port, 'info', 'replication');
        return !info.includes('role:master') || Number(/connected_slaves:(\d+)/.exec(info)?.[1] ?? -1) >= replicas;
      },
      30_000,
    );
  }
  return {
    ports,
    get pids() {
      return [...children.values()].map((c) => c.pid!);
    },
    client: (options) => {
      const c = new Cluster(
        ports.map((port) => ({ host: '127.0.0.1', port })),
        { redisOptions: { maxRetriesPerRequest: 1 }, ...options },
      );
      clients.push(c);
      return c;
    },
    masterOf: async (slot) => {
      for (const port of ports) {
        if (children.get(port)?.exitCode !== null || children.get(port)?.signalCode !== null) continue;
        const master = masterInNodes(await cli(port, 'cluster', 'nodes'), slot);
        if (master !== undefined) return master;
      }
      return undefined;
    },
    replicaOf: async (masterPort) => replicaInNodes(await cli(masterPort, 'cluster', 'nodes'), masterPort),
    kill: async (port) => {
      await killChild(children.get(port), 'SIGKILL');
    },
    promote: async (replicaPort) => {
      // A replica refuses while its link to the master is down (e.g. a restarted node still syncing): wait for it.
      const deadline = Date.now() + 30_000;
      for (;;) {
        const reply = await cli(replicaPort, 'cluster', 'failover');
        if (reply.includes('OK')) return;
        if (!reply.includes('Master is down') || Date.now() > deadline) {
          throw new Error(`CLUSTER FAILOVER on ${replicaPort} answered ${JSON.stringify(reply)}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    },
    moveSlot: async (slot, fromPort, toPort) => {
      const strict = async (port: number, ...args: string[]): Promise<string> => {
        const out = (await run('redis-cli', ['-p', String(port), ...args], { encoding: 'utf8', timeout: 10_000 })).stdout.trim();
        if (/^(ERR|\(error\))/.test(out)) throw new Error(`redis-cli -p ${port} ${args.join(' ')}: ${out}`);
        return out;
      };
      const [fromId, toId] = [await strict(fromPort, 'cluster', 'myid'), await strict(toPort, 'cluster', 'myid')];
      await strict(toPort, 'cluster', 'setslot', String(slot), 'importing', fromId);
      await strict(fromPort, 'cluster', 'setslot', String(slot), 'migrating', toId);
      for (;;) {
        const keys = (await strict(fromPort, 'cluster', 'getkeysinslot', String(slot), '100')).split('\n').filter(Boolean);
        if (keys.length === 0) break;
        await strict(fromPort, 'migrate', '127.0.0.1', String(toPort), '', '0', '5000', 'keys', ...keys);
      }
      for (const port of [toPort, fromPort]) await strict(port, 'cluster', 'setslot', String(slot), 'node', toId);
    },
    pause: (port) => {
      process.kill(children.get(port)!.pid!, 'SIGSTOP');
    },
    resume: (port) => {
      process.kill(children.get(port)!.pid!, 'SIGCONT');
    },
    restart: async (port) => {
      await killChild(children.get(port), 'SIGKILL');
      const dir = dirs.get(port)!;
      children.set(port, launch(port, dir, args(dir)));
      await waitForPing(port);
    },
    stop: async () => {
      clients.splice(0).forEach((c) => c.disconnect());
      await Promise.all([...children.values()].map((c) => killChild(c, 'SIGKILL')));
      dirs.forEach((d) => rmSync(d, { recursive: true, force: true }));
    },
  };
}
