/**
 * Which log lines a command writes: `hearth dev` on a terminal writes lines for people (pino-pretty),
 * `hearth dev` piped writes JSON, and every other command writes JSON even on a terminal. The terminal
 * is a real one: util-linux `script` runs the command on a pseudo-terminal.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { call } from '../support/http';
import { HEARTH_BIN } from '../support/hearth-process';
import { createTestDatabase, type TestDatabase } from '../support/harness';
import { baseEnv, freePort, spawnHearth, tempDir } from './run-hearth';

jest.setTimeout(120_000);

const ANSI = /\x1b\[[0-9;]*m/g;

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database.drop();
});

/** `hearth <args>` on a pseudo-terminal: its output is what a person at a terminal would see. */
function onTerminal(args: string[], vars: Record<string, string>): ChildProcess {
  const quote = (word: string) => `'${word.replace(/'/g, `'\\''`)}'`;
  const command = `exec ${[process.execPath, HEARTH_BIN, ...args].map(quote).join(' ')}`;
  // Never in the checkout: its `.hearth/` (a developer's `make dev`) would hand the command a database.
  return spawn('script', ['-qefc', command, '/dev/null'], { cwd: tempDir(), env: { ...baseEnv(vars), SHELL: '/bin/sh' }, stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Collects a child's output until `done` holds for it (bounded), then stops the child. */
function outputUntil(
  child: ChildProcess,
  done: (output: string) => boolean,
  onStarted?: (output: string) => Promise<void>,
  withinMs = 60_000,
): Promise<string> {
  return new Promise((resolve, reject) => {
    let output = '';
    let started = false;
    let closed = false;
    let finished = false;
    const settle = (err?: Error) => (err ? reject(err) : resolve(output.replace(ANSI, '').replace(/\r\n/g, '\n')));
    const finish = (err?: Error) => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      if (closed) return settle(err);
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      child.once('close', () => {
        clearTimeout(killer);
        settle(err);
      });
    };
    child.once('close', (code) => {
      closed = true;
      finish(new Error(`exited (${code}) before the expected output:\n${output}`));
    });
    const timer = setTimeout(() => finish(new Error(`no expected output within ${withinMs} ms:\n${output}`)), withinMs);
    const read = (chunk: Buffer) => {
      output += chunk;
      const plain = output.replace(ANSI, '');
      if (!started && onStarted && /base URL\s+\S+/.test(plain)) {
        started = true;
        onStarted(plain).catch((err) => finish(err));
      }
      if (done(plain)) finish();
    };
    child.stdout!.on('data', read);
    child.stderr!.on('data', read);
  });
}

/** One master key for every run over the one database (the signing keys are stored under it). */
const MASTER_KEY = Buffer.alloc(32, 7).toString('base64');

async function devVars(): Promise<Record<string, string>> {
  return {
    DATABASE_URL: database.url,
    HEARTH_MASTER_KEY: MASTER_KEY,
    PORT: String(await freePort()),
    METRICS_PORT: String(await freePort()),
    LOG_LEVEL: 'info',
  };
}

/** Once `hearth dev` has printed its base URL, one request without a credential, for an access line. */
const oneRequest = async (output: string) => {
  const base = /base URL\s+(\S+)/.exec(output)![1];
  expect((await call(base, 'GET', '/flags')).status).toBe(401);
};

test('hearth dev on a terminal writes readable lines, not JSON', async () => {
  const output = await outputUntil(onTerminal(['dev', '--data-dir', tempDir()], await devVars()), (out) => /INFO.*request/.test(out), oneRequest);
  const access = output.split('\n').find((line) => /INFO.*request/.test(line))!;
  // One line per request (pino-pretty's single-line mode): "[time] INFO (hearth): request {fields}".
  expect(access).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO \(hearth\): request \{.*"route":"\/flags".*"status":401.*\}$/);
  for (const line of output.split('\n')) expect(line.trim().startsWith('{"level"')).toBe(false);
  // Started, answered and stopped without a warning.
  expect(output).not.toMatch(/WARN/);
});

test('hearth dev piped writes JSON lines', async () => {
  const vars = await devVars();
  const output = await outputUntil(spawnHearth(['dev', '--data-dir', tempDir()], vars), (out) => /"msg":"request"/.test(out), oneRequest);
  const access = output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line))
    .find((l) => l.msg === 'request');
  expect(access).toEqual(expect.objectContaining({ level: 30, name: 'hearth', status: 401, route: '/flags' }));
});

test('hearth api on a terminal still writes JSON lines', async () => {
  const vars = {
    DATABASE_URL: database.url,
    REDIS_URL: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379',
    REDIS_PREFIX: `hearth-test-logs-${process.pid}:`,
    HEARTH_MASTER_KEY: MASTER_KEY,
    PORT: String(await freePort()),
    METRICS_PORT: String(await freePort()),
    LOG_LEVEL: 'info',
  };
  const output = await outputUntil(onTerminal(['api'], vars), (out) => /api listening/.test(out));
  const line = output.split('\n').find((l) => l.includes('api listening'))!;
  expect(JSON.parse(line)).toEqual(expect.objectContaining({ level: 30, name: 'hearth', msg: 'api listening' }));
});
