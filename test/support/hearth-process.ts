/** The real `hearth` executable for the runners and tests that start it as a process of its own. */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

export const REPO_ROOT = path.resolve(__dirname, '../..');
export const HEARTH_BIN = path.join(REPO_ROOT, 'apps/cli/bin/hearth');

/** The environment a `hearth` command gets: only what it is given, nothing of the caller's. */
export function hearthEnv(vars: Record<string, string>): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH, HOME: process.env.HOME, ...vars };
}

/**
 * Runs a `hearth` command to its end, its output kept in `log`; answers its stdout and stderr. A
 * command that fails rejects with `fail(message)` (the runner's own error, printed without a stack).
 */
export function runHearthLogged(args: string[], env: NodeJS.ProcessEnv, log: string, fail: (message: string) => Error): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [HEARTH_BIN, ...args], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
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
