/**
 * Child processes of the bench: each server under test and the load generator run in a process of
 * their own, pinned to cores (taskset) by the target's placement:
 * - `split` (the HTTP targets measured against koa): the server on the last core, the loader on the
 *   first, so that "one core serving, one loading" holds; for the API, Redis on the loader's core too
 *   (keepRedisOffServerCore).
 * - `database-apart` (the writes measured against pgbench): PostgreSQL alone on the first core, as on a
 *   host of its own, and everything else on the others: the API server, its loader and Redis, or in
 *   pgbench's turn pgbench (the database's other client). On cores shared with PostgreSQL the HTTP
 *   side's CPU (server, loader and Redis: about 400-550 µs a write) is taken from the database's own,
 *   while pgbench's client costs a few µs a transaction, so the ratio measured the loader and the
 *   machine's size as much as the API; apart, it measures how near the API drives the database to
 *   what the database does for pgbench (docs/performance.md, "Method").
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type Redis from 'ioredis';
import { Client } from 'pg';

export const BENCH_DIR = __dirname;

/** The page origin the bench environment allows (GameEnvironment spec.cors), and the CORS targets send. */
export const BENCH_ORIGIN = 'https://game.example.com';

export type Placement = 'split' | 'database-apart';
/** `client`: pgbench, in the database-apart placement. */
type Role = 'server' | 'loader' | 'client';

const CORES = Number(spawnSync('nproc', { encoding: 'utf8' }).stdout.trim()) || 1;
/** Set BENCH_PIN=0 to let the OS place every process. */
const PIN = process.env.BENCH_PIN !== '0' && CORES > 1 && spawnSync('taskset', ['-c', '0', 'true']).status === 0;
const DATABASE_CORE = '0';
const APP_CORES = CORES > 2 ? `1-${CORES - 1}` : '1';

function coresOf(role: Role, placement: Placement): string {
  if (placement === 'database-apart') return APP_CORES;
  return role === 'server' ? String(CORES - 1) : '0';
}

/** `command args` run on the role's cores (taskset), or as they are when nothing is pinned. */
export function pinned(role: Role, placement: Placement, command: string, args: string[]): [string, string[]] {
  return PIN ? ['taskset', ['-c', coresOf(role, placement), command, ...args]] : [command, args];
}

export function pinningNote(): string {
  return PIN
    ? `against koa, server pinned to CPU ${CORES - 1} and loader (and the API's Redis) to CPU 0; against pgbench, PostgreSQL alone on CPU ${DATABASE_CORE} ` +
        `and the server, loader, Redis and pgbench on CPU ${APP_CORES} (taskset)`
    : 'no CPU pinning';
}

function affinityOf(pid: number): string | undefined {
  const out = spawnSync('taskset', ['-c', '-p', String(pid)], { encoding: 'utf8' });
  return out.status === 0 ? /list:\s*(\S+)/.exec(out.stdout)?.[1] : undefined;
}

/** Pins `pid` and each of its threads; false when the process is gone or may not be pinned. */
function pin(pid: number, cores: string): boolean {
  return spawnSync('taskset', ['-a', '-c', '-p', cores, String(pid)], { stdio: 'ignore' }).status === 0;
}

function childrenOf(parent: number): number[] {
  const found: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so read after the last ')'.
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === parent) found.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/**
 * The database-apart placement for one target: PostgreSQL's postmaster and every process it has
 * started (backends it forks later inherit its affinity) on the database's core, Redis on the app
 * cores. Needs both on this machine and the right to pin them (the postmaster's pid is read from its
 * data directory); without, the target runs on shared cores and the log says so. Answers how to put
 * them back where they were.
 */
export async function keepDatabaseApart(databaseUrl: string, redis: Redis, log: (line: string) => void): Promise<() => void> {
  if (!PIN) return () => undefined;
  try {
    return await pinDatabaseApart(databaseUrl, redis);
  } catch (err) {
    // A database elsewhere, or one this user may not pin: the target runs on shared cores, and says so.
    log(`  PostgreSQL and Redis stay where they are, on cores shared with the API (${(err as Error).message})`);
    return () => undefined;
  }
}

/**
 * The split placement for an API target: Redis on the loader's cores, off the server's. The API's
 * Redis is a service of its own in production; on the server's core, each wake-up of Redis by a
 * rate-limit call (one per event-loop turn) took that core from the server (the server read 89-93%
 * of its core instead of 96%, and its profile showed the call's send at 11% of its time instead of
 * 6%). Koa, the baseline, has no Redis to share its core with. Answers how to put Redis back.
 */
export async function keepRedisOffServerCore(redis: Redis, log: (line: string) => void): Promise<() => void> {
  if (!PIN) return () => undefined;
  const redisPid = Number(/process_id:(\d+)/.exec(await redis.info('server'))?.[1]);
  const was = affinityOf(redisPid);
  if (!was || !pin(redisPid, coresOf('loader', 'split'))) {
    log(`  Redis stays where it is, on cores shared with the API server (the bench cannot pin pid ${redisPid})`);
    return () => undefined;
  }
  return () => void pin(redisPid, was);
}

async function pinDatabaseApart(databaseUrl: string, redis: Redis): Promise<() => void> {
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  let dataDirectory: string;
  try {
    dataDirectory = (await client.query<{ data_directory: string }>('SHOW data_directory')).rows[0].data_directory;
  } finally {
    await client.end();
  }
  const postmaster = Number(fs.readFileSync(path.join(dataDirectory, 'postmaster.pid'), 'utf8').split('\n')[0]);
  const redisPid = Number(/process_id:(\d+)/.exec(await redis.info('server'))?.[1]);
  const was = { postgres: affinityOf(postmaster), redis: affinityOf(redisPid) };
  if (!was.postgres || !was.redis) throw new Error(`the bench cannot read the affinity of PostgreSQL (pid ${postmaster}) or Redis (pid ${redisPid})`);
  const database = () => [postmaster, ...childrenOf(postmaster)];
  const putBack = () => {
    for (const pid of database()) pin(pid, was.postgres!);
    pin(redisPid, was.redis!);
  };
  if (!database().every((pid) => pin(pid, DATABASE_CORE) || !fs.existsSync(`/proc/${pid}`)) || !pin(redisPid, APP_CORES)) {
    putBack();
    throw new Error(`the bench cannot pin PostgreSQL (pid ${postmaster}) or Redis (pid ${redisPid}) to cores`);
  }
  return putBack;
}

export interface Child {
  process: ChildProcess;
  /** The next IPC message whose `type` is `type` (rejects if the child exits first). */
  next<T = any>(type: string, timeoutMs?: number): Promise<T>;
  send(message: unknown): void;
  /** Resolves with the exit code once the child is gone. */
  exited: Promise<number | null>;
}

/**
 * Starts `node --import tsx <script>` with an IPC channel. `role` and `placement` pick the cores; `stdout` is where
 * the child's stdout goes (a file path, or 'ignore' / 'inherit').
 */
export function startChild(
  script: string,
  options: { role: 'server' | 'loader'; placement?: Placement; stdout?: string | 'ignore' | 'inherit'; env?: Record<string, string>; nodeArgs?: string[] },
): Child {
  const nodeArgs = ['--import', 'tsx', ...(options.nodeArgs ?? []), path.join(BENCH_DIR, script)];
  const [command, args] = pinned(options.role, options.placement ?? 'split', process.execPath, nodeArgs);
  let out: 'inherit' | 'ignore' | number = 'inherit';
  if (options.stdout === 'ignore') out = 'ignore';
  else if (options.stdout && options.stdout !== 'inherit') out = fs.openSync(options.stdout, 'w');
  const child: ChildProcess = spawn(command, args, {
    stdio: ['ignore', out, 'inherit', 'ipc'],
    env: { ...process.env, ...(options.env ?? {}) },
  });
  if (typeof out === 'number') fs.closeSync(out); // the child holds its own copy

  const inbox: any[] = [];
  const waiters: { type: string; resolve: (m: any) => void; reject: (e: Error) => void }[] = [];
  let gone: Error | null = null;
  child.on('message', (message: any) => {
    const i = waiters.findIndex((w) => w.type === message?.type);
    if (i >= 0) waiters.splice(i, 1)[0].resolve(message);
    else inbox.push(message);
  });
  const exited = new Promise<number | null>((resolve) => {
    child.on('exit', (code, signal) => {
      gone = new Error(`${script} exited (code ${code}, signal ${signal})`);
      for (const w of waiters.splice(0)) w.reject(gone);
      resolve(code);
    });
  });

  return {
    process: child,
    exited,
    send: (message) => {
      if (child.connected) child.send(message as never);
    },
    next: (type, timeoutMs = 120_000) =>
      new Promise((resolve, reject) => {
        const i = inbox.findIndex((m) => m?.type === type);
        if (i >= 0) return resolve(inbox.splice(i, 1)[0]);
        if (gone) return reject(gone);
        const timer = setTimeout(() => reject(new Error(`${script}: no '${type}' within ${timeoutMs} ms`)), timeoutMs);
        waiters.push({
          type,
          resolve: (m) => {
            clearTimeout(timer);
            resolve(m);
          },
          reject: (e) => {
            clearTimeout(timer);
            reject(e);
          },
        });
      }),
  };
}

/**
 * For a child: answers `cpu` requests with its CPU time so far (to tell who was the bottleneck) and,
 * for the API, how many database queries it has made (the hot path should make none).
 */
export function answerCpuQueries(databaseQueries: () => number = () => 0): void {
  process.on('message', (message: any) => {
    if (message?.type === 'cpu') process.send!({ type: 'cpu', usage: process.cpuUsage(), at: performance.now(), databaseQueries: databaseQueries() });
  });
}

export interface CpuSample {
  usage: NodeJS.CpuUsage;
  at: number;
  databaseQueries: number;
}

/** Share of one core a child used between two samples (1 = a whole core). */
export function coreShare(a: CpuSample, b: CpuSample): number {
  const cpuMicros = b.usage.user - a.usage.user + (b.usage.system - a.usage.system);
  return cpuMicros / 1000 / (b.at - a.at);
}
