/** The real `hearth` executable for the runners and tests that start it as a process of its own. */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import knexFactory from 'knex';
import Redis from 'ioredis';
import { TEST_DATABASE_URL, TEST_REDIS_URL, databaseUrl } from './env';

export const REPO_ROOT = path.resolve(__dirname, '../..');
/** The executable in the source tree: TypeScript run through tsx's loader (what `make dev` runs). */
export const HEARTH_SOURCE_BIN = path.join(REPO_ROOT, 'apps/cli/bin/hearth');
/**
 * The `hearth` the tests start as a process: the bundle jest's global setup built from this tree
 * (test/support/test-bundle.ts), which is what the image runs and starts in half the time of the
 * tsx loader; the source executable when a runner was started without that setup.
 */
export const HEARTH_BIN = process.env.HEARTH_TEST_BIN ?? HEARTH_SOURCE_BIN;
/** The executable of another checkout of Hearth (the previous release's, test/upgrade): `root` is its top folder. */
export const hearthBin = (root: string): string => path.join(root, 'apps/cli/bin/hearth');

/** The environment a `hearth` command gets: only what it is given, nothing of the caller's. */
export function hearthEnv(vars: Record<string, string>): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH, HOME: process.env.HOME, ...vars };
}

/**
 * Runs a `hearth` command to its end, its output kept in `log`; answers its stdout and stderr. A
 * command that fails rejects with `fail(message)` (the runner's own error, printed without a stack).
 * `root` is the checkout whose `hearth` runs (this one unless said), and the folder it runs in.
 */
export function runHearthLogged(args: string[], env: NodeJS.ProcessEnv, log: string, fail: (message: string) => Error, root = REPO_ROOT): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [hearthBin(root), ...args], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('close', (code) => {
      fs.writeFileSync(log, out);
      if (code === 0) resolve(out);
      else reject(fail(`hearth ${args.join(' ')} exited with ${code}:\n${out}`));
    });
  });
}

/** The last lines of a log file, to explain a process that failed. */
export function logTail(file: string, lines = 30): string {
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n') : '';
}

/** A `hearth` process a runner started (api, realtime), its output in `log`. */
export interface HearthService {
  name: string;
  child: ChildProcess;
  log: string;
}

export function startHearthService(name: string, args: string[], env: NodeJS.ProcessEnv, log: string, root = REPO_ROOT): HearthService {
  const fd = fs.openSync(log, 'a');
  const child = spawn(process.execPath, [hearthBin(root), ...args], { cwd: root, env, stdio: ['ignore', fd, fd] });
  fs.closeSync(fd);
  return { name, child, log };
}

/** Polls the service's /readyz until it answers 200; one that exits or takes 30 s rejects with `fail(message)`. */
export async function waitReady(service: HearthService, url: string, fail: (message: string) => Error): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (service.child.exitCode !== null) break;
    if (
      await fetch(url).then(
        (r) => r.status === 200,
        () => false,
      )
    )
      return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw fail(`${service.name} did not become ready at ${url} (exit code ${service.child.exitCode}):\n${logTail(service.log)}`);
}

/**
 * A database and a Redis prefix of a run's own (the fuzz and load-test runners), on the tests'
 * PostgreSQL and Redis; `drop` removes both whatever happened (the day window's rate-limit counters
 * would otherwise linger for a day).
 */
export interface ScratchRun {
  /** What every `hearth` process of the run is given: the database, Redis and its prefix, a master key. */
  env: Record<string, string>;
  drop(): Promise<void>;
}

export async function makeScratchRun(label: string, fail: (message: string) => Error): Promise<ScratchRun> {
  const dbName = `hearth_${label}_${randomBytes(6).toString('hex')}`;
  const redisPrefix = `hearth-${label}:${randomBytes(6).toString('hex')}:`;
  const admin = knexFactory({ client: 'pg', connection: TEST_DATABASE_URL, pool: { min: 0, max: 1 } });
  try {
    await admin.raw(`CREATE DATABASE ${dbName}`);
  } catch (err) {
    await admin.destroy();
    throw fail(`cannot make a database at ${TEST_DATABASE_URL} (run \`make services\`): ${(err as Error).message}`);
  }
  return {
    env: { DATABASE_URL: databaseUrl(dbName), REDIS_URL: TEST_REDIS_URL, REDIS_PREFIX: redisPrefix, HEARTH_MASTER_KEY: randomBytes(32).toString('hex') },
    drop: async () => {
      await admin.raw(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`).catch(() => undefined);
      await admin.destroy();
      const redis = new Redis(TEST_REDIS_URL, { lazyConnect: true });
      try {
        await redis.connect();
        let cursor = '0';
        do {
          const [next, keys] = await redis.scan(cursor, 'MATCH', `${redisPrefix}*`, 'COUNT', 1000);
          if (keys.length) await redis.unlink(...keys);
          cursor = next;
        } while (cursor !== '0');
      } catch {
        // Redis gone: nothing to clean, and the run's outcome stands.
      } finally {
        redis.disconnect();
      }
    },
  };
}
