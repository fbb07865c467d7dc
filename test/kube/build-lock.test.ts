/**
 * test/kube/tools/build.sh builds into one folder per machine, so it takes a lock there first: a
 * second build.sh (another checkout, another make target) waits for the first and never compiles
 * into the same files at once. The holder here is `flock` on the same file, which is what a running
 * build.sh holds; the tool named matches nothing, so the waiting build.sh, once let in, builds nothing.
 * `make test` builds in the background with its words in a log (test/support/build-tools-logged.sh):
 * the wait and its end still reach the console. And `make test` says what it does before its type check.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const BUILD_SH = path.resolve(__dirname, 'tools', 'build.sh');
const BUILD_LOGGED = path.resolve(__dirname, '..', 'support', 'build-tools-logged.sh');
const MAKEFILE = path.resolve(__dirname, '..', '..', 'Makefile');

let toolsDir = '';
const started: ChildProcessWithoutNullStreams[] = [];

function start(
  command: string,
  args: string[],
): { child: ChildProcessWithoutNullStreams; output: () => string; stderr: () => string; exited: Promise<number> } {
  const child = spawn(command, args, { env: { ...process.env, HEARTH_TOOLS_DIR: toolsDir } });
  started.push(child);
  let output = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (output += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => {
    output += c;
    stderr += c;
  });
  const exited = new Promise<number>((resolve) => child.on('close', (code) => resolve(code ?? -1)));
  return { child, output: () => output, stderr: () => stderr, exited };
}

async function until(what: string, probe: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`still waiting for ${what} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

beforeEach(() => {
  toolsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-tools-'));
  fs.mkdirSync(path.join(toolsDir, 'bin'));
});

afterEach(() => {
  for (const child of started.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
  fs.rmSync(toolsDir, { recursive: true, force: true });
});

test('a second build.sh waits while another holds the tools folder, and goes on once it is released', async () => {
  const holder = start('flock', [path.join(toolsDir, '.build.lock'), '-c', 'echo held; read _']);
  await until('the holder to take the lock', () => holder.output().includes('held'));

  const second = start('bash', [BUILD_SH, 'no-such-tool']);
  let secondExited = false;
  void second.exited.then(() => (secondExited = true));
  await until('build.sh to say it waits', () => second.output().includes('another build.sh is building into'));
  await new Promise((r) => setTimeout(r, 1_000));
  expect(secondExited).toBe(false);

  holder.child.stdin.end('\n');
  expect(await holder.exited).toBe(0);
  expect(await second.exited).toBe(0);
  expect(second.output()).toMatch(/the other build is done \(waited \d+ s\); going on/);
});

test("make test's background build says the wait and its end on the console, and everything in its log", async () => {
  const holder = start('flock', [path.join(toolsDir, '.build.lock'), '-c', 'echo held; read _']);
  await until('the holder to take the lock', () => holder.output().includes('held'));
  const log = path.join(toolsDir, 'tools-build.log');
  const build = start('bash', [BUILD_LOGGED, log, 'no-such-tool']);
  await until('the wait to reach the console', () => build.stderr().includes('make test: build.sh: another build.sh is building into'));
  holder.child.stdin.end('\n');
  expect(await holder.exited).toBe(0);
  expect(await build.exited).toBe(0);
  const onConsole = build.stderr().trim().split('\n');
  expect(onConsole).toEqual([
    expect.stringMatching(/^make test: build\.sh: another build\.sh is building into .*; waiting for it…$/),
    expect.stringMatching(/^make test: build\.sh: the other build is done \(waited \d+ s\); going on$/),
  ]);
  const logged = fs.readFileSync(log, 'utf8');
  expect(logged).toContain('waiting for it');
  expect(logged).toContain('the other build is done');
});

test('make test says what it does before the type check', () => {
  const makefile = fs.readFileSync(MAKEFILE, 'utf8');
  const recipe = makefile
    .slice(makefile.indexOf('\ntest:'))
    .split('\n')
    .slice(1)
    .filter((line) => line.startsWith('\t'));
  const said = recipe.findIndex((line) => /^\t@echo "make test: type check/.test(line));
  const typecheck = recipe.findIndex((line) => line.includes('npm run typecheck'));
  expect(said).toBeGreaterThanOrEqual(0);
  expect(said).toBeLessThan(typecheck);
});

test('alone, build.sh takes the lock without waiting', async () => {
  const only = start('bash', [BUILD_SH, 'no-such-tool']);
  expect(await only.exited).toBe(0);
  expect(only.output()).not.toContain('waiting');
  expect(fs.existsSync(path.join(toolsDir, '.build.lock'))).toBe(true);
});
