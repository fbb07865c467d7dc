/**
 * test/kube/tools/build.sh builds into one folder per machine, so it takes a lock there first: a
 * second build.sh (another checkout, another make target) waits for the first and never compiles
 * into the same files at once. The holder here is `flock` on the same file, which is what a running
 * build.sh holds; the tool named matches nothing, so the waiting build.sh, once let in, builds nothing.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const BUILD_SH = path.resolve(__dirname, 'tools', 'build.sh');

let toolsDir = '';
const started: ChildProcessWithoutNullStreams[] = [];

function start(command: string, args: string[]): { child: ChildProcessWithoutNullStreams; output: () => string; exited: Promise<number> } {
  const child = spawn(command, args, { env: { ...process.env, HEARTH_TOOLS_DIR: toolsDir } });
  started.push(child);
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (output += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (output += c));
  const exited = new Promise<number>((resolve) => child.on('close', (code) => resolve(code ?? -1)));
  return { child, output: () => output, exited };
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
});

test('alone, build.sh takes the lock without waiting', async () => {
  const only = start('bash', [BUILD_SH, 'no-such-tool']);
  expect(await only.exited).toBe(0);
  expect(only.output()).not.toContain('waiting');
  expect(fs.existsSync(path.join(toolsDir, '.build.lock'))).toBe(true);
});
