/**
 * A Redis of a test's own, on its own 127.0.0.1 port and folder, for tests that stop and start it
 * (never the shared one on 6379): Debian's `redis-server`, in the foreground as our child, so that
 * stop() is a signal and a wait for its exit. No persistence (the rate-limit counters and pub/sub are
 * what Hearth keeps there, and losing them is the fault under test). Every step is bounded in time.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import net from 'node:net';
import { freePort } from './ports';
import { stopProcess } from './processes';

export interface OwnRedis {
  url: string;
  port: number;
  /** Starts it (again, on the same port); resolves once it accepts connections. */
  start(): Promise<void>;
  /** SIGTERM (SIGKILL after 5 s): every client's connection is cut, as in a restart. */
  stop(): Promise<void>;
  /** Stops it and deletes its folder. */
  remove(): Promise<void>;
}

const REDIS_SERVER = process.env.REDIS_SERVER_BIN ?? '/usr/bin/redis-server';

/** Resolves once something accepts TCP connections on the port; rejects after `withinMs`. */
async function waitListening(port: number, child: ChildProcess, log: string, withinMs = 10_000): Promise<void> {
  const deadline = Date.now() + withinMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) break;
    const up = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (up) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`redis-server on port ${port} did not start (exit code ${child.exitCode}):\n${fs.existsSync(log) ? fs.readFileSync(log, 'utf8') : ''}`);
}

export async function startOwnRedis(): Promise<OwnRedis> {
  if (!fs.existsSync(REDIS_SERVER)) throw new Error(`${REDIS_SERVER} is missing (apt-get install redis-server)`);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-own-redis-'));
  const log = path.join(dir, 'redis.log');
  const port = await freePort();
  let child: ChildProcess | undefined;

  const start = async () => {
    if (child && child.exitCode === null && child.signalCode === null) return;
    const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no', '--daemonize', 'no', '--logfile', log];
    child = spawn(REDIS_SERVER, args, { cwd: dir, stdio: 'ignore' });
    await waitListening(port, child, log);
  };
  const stop = async () => {
    if (child) await stopProcess(child);
  };
  await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    start,
    stop,
    remove: async () => {
      await stop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
