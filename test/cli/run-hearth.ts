/** Runs the real `hearth` executable as a subprocess, with an environment built from scratch. */
import { type ChildProcess, spawn } from 'node:child_process';
import type { Db } from '@hearth/core/db';

import { HEARTH_BIN, REPO_ROOT, hearthEnv } from '../support/hearth-process';

export { HEARTH_SOURCE_BIN } from '../support/hearth-process';
import { testTempDir } from '../support/temp-dir';

export { REPO_ROOT };

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Only what the command is given: nothing of the developer's DATABASE_URL, REDIS_URL or keys leaks in. */
export function baseEnv(vars: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const given = Object.entries(vars).filter((entry): entry is [string, string] => entry[1] !== undefined);
  return hearthEnv({ LOG_LEVEL: 'warn', ...Object.fromEntries(given) });
}

let ownHome: string | undefined;
/**
 * Where a command runs unless the test names a folder: a folder of the test file's own, never the
 * checkout, whose `.hearth/` (left by a developer's `make dev`) would hand every command its database.
 */
function homeOfItsOwn(): string {
  ownHome ??= testTempDir('hearth-cli-home-');
  return ownHome;
}

/** Starts a command (`bin`: the tests' bundle unless told, test/support/test-bundle.ts). */
export function spawnHearth(args: string[], vars: Record<string, string | undefined>, cwd = homeOfItsOwn(), bin = HEARTH_BIN): ChildProcess {
  return spawn(process.execPath, [bin, ...args], { cwd, env: baseEnv(vars), stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Runs a command to its end (in `cwd`, by default a folder of the test file's own); a command still running after `timeoutMs` is killed and the test fails. */
export function runHearth(args: string[], vars: Record<string, string | undefined>, timeoutMs = 20_000, cwd = homeOfItsOwn()): Promise<CliResult> {
  return runToEnd(spawnHearth(args, vars, cwd), `hearth ${args.join(' ')}`, timeoutMs);
}

/** Collects a spawned command's output until it ends; one still running after `timeoutMs` is killed and the test fails. */
export function runToEnd(child: ChildProcess, label: string, timeoutMs: number): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d) => (stdout += d));
    child.stderr!.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${label} did not finish within ${timeoutMs} ms\n${stderr}`));
    }, timeoutMs);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** The one line a failed command prints (stderr, without the trailing newline); fails when there are more. */
export function oneLine(text: string): string {
  const lines = text.split('\n').filter((l) => l.trim() !== '');
  expect(lines).toHaveLength(1);
  return lines[0];
}

/** A temporary folder, removed once the test file is done (its afterAll). */
export function tempDir(): string {
  return testTempDir('hearth-cli-');
}

export { freePort } from '../support/ports';

/** Everything `hearth apply` may write, in a stable order, for before/after comparisons. */
export async function snapshot(db: Db): Promise<Record<string, unknown[]>> {
  const tables: [string, string[]][] = [
    ['plans', ['name']],
    ['projects', ['namespace', 'name']],
    ['environments', ['namespace', 'name']],
    ['server_keys', ['key_id']],
    ['config_values', ['environment_id', 'key']],
    ['config_tables', ['environment_id', 'key']],
    ['flags', ['environment_id', 'name']],
    ['content_versions', ['environment_id', 'kind']],
  ];
  const out: Record<string, unknown[]> = {};
  for (const [table, order] of tables) out[table] = await db(table).orderBy(order.map((column) => ({ column })));
  return out;
}
