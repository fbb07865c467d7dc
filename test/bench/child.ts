/**
 * Child processes of the bench: each server under test and the load generator run in a process of
 * their own, pinned to a core of their own (taskset) so that "one core serving, one loading" holds.
 */
import { spawn, spawnSync, ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

export const BENCH_DIR = __dirname;

/** Cores: the server under test on the last one, the loader on the first (set BENCH_PIN=0 to let the OS place them). */
const CORES = (() => {
  const n = Number(spawnSync('nproc', { encoding: 'utf8' }).stdout.trim()) || 1;
  return { server: n - 1, loader: 0, count: n };
})();
const PIN = process.env.BENCH_PIN !== '0' && CORES.count > 1 && spawnSync('taskset', ['-c', '0', 'true']).status === 0;

export function pinningNote(): string {
  return PIN ? `server pinned to CPU ${CORES.server}, loader to CPU ${CORES.loader} (taskset)` : 'no CPU pinning';
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
 * Starts `node --import tsx <script>` with an IPC channel. `role` picks the core; `stdout` is where
 * the child's stdout goes (a file path, or 'ignore' / 'inherit').
 */
export function startChild(
  script: string,
  options: { role: 'server' | 'loader'; stdout?: string | 'ignore' | 'inherit'; env?: Record<string, string>; nodeArgs?: string[] },
): Child {
  const nodeArgs = ['--import', 'tsx', ...(options.nodeArgs ?? []), path.join(BENCH_DIR, script)];
  const command = PIN ? 'taskset' : process.execPath;
  const args = PIN ? ['-c', String(options.role === 'server' ? CORES.server : CORES.loader), process.execPath, ...nodeArgs] : nodeArgs;
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
