/**
 * What `hearth` says of itself: a version, a description for every command and subcommand, and the
 * executable linked by `npm ci` into node_modules/.bin (where npm scripts, npx and a PATH that
 * includes it find `hearth`).
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { buildProgram } from '../../apps/cli/src/program';
import { REPO_ROOT, runHearth } from './run-hearth';

const rootVersion = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')).version as string;

function everyCommand(command: Command, prefix = 'hearth'): { name: string; description: string }[] {
  return command.commands.flatMap((sub) => {
    const name = `${prefix} ${sub.name()}`;
    return [{ name, description: sub.description() }, ...everyCommand(sub, name)];
  });
}

test('every command and subcommand has a description', () => {
  const commands = everyCommand(buildProgram());
  expect(commands.length).toBeGreaterThan(20);
  expect(commands.filter((c) => c.description.trim() === '').map((c) => c.name)).toEqual([]);
});

test('--version and -V print the version', async () => {
  for (const flag of ['--version', '-V']) {
    const run = await runHearth([flag], {});
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(`${rootVersion}\n`);
  }
});

test('help lists each subcommand with its description', async () => {
  const run = await runHearth(['keys', '--help'], {});
  expect(run.code).toBe(0);
  expect(run.stdout).toMatch(/create \[options\] +mint a server key/);
  expect(run.stdout).toMatch(/list \[options\] +list an environment's keys/);
  expect(run.stdout).toMatch(/revoke \[options\] <keyId> +revoke a key/);
});

test('npm ci links `hearth` into node_modules/.bin', async () => {
  const bin = path.join(REPO_ROOT, 'node_modules', '.bin', 'hearth');
  const stdout = await new Promise<string>((resolve, reject) =>
    execFile(bin, ['--version'], { cwd: REPO_ROOT, timeout: 20_000 }, (err, out) => (err ? reject(err) : resolve(out))),
  );
  expect(stdout).toBe(`${rootVersion}\n`);
});
