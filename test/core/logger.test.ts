/**
 * The production logger writes its lines once per event-loop turn. Lines must not wait longer than
 * that turn, and none may be lost when the process exits right after logging.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';

const LOGGER = path.resolve(__dirname, '../../apps/core/src/logger.ts');

function runNode(code: string): { stdout: string; status: number | null } {
  const result = spawnSync(process.execPath, ['--import', 'tsx', '-e', code], { encoding: 'utf8', timeout: 20_000 });
  return { stdout: result.stdout, status: result.status };
}

const lines = (stdout: string) => stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l));

test('lines logged just before process.exit are written', () => {
  const { stdout, status } = runNode(`
    const { createLogger } = require(${JSON.stringify(LOGGER)});
    const log = createLogger('info', 'exit-test');
    for (let i = 0; i < 3; i++) log.info({ i }, 'line');
    process.exit(3);
  `);
  expect(status).toBe(3);
  expect(lines(stdout).map((l) => [l.name, l.i, l.msg])).toEqual([
    ['exit-test', 0, 'line'],
    ['exit-test', 1, 'line'],
    ['exit-test', 2, 'line'],
  ]);
});

test('a line is out by the end of the turn it was logged in, in order with direct writes after it', () => {
  const { stdout } = runNode(`
    const fs = require('node:fs');
    const { createLogger } = require(${JSON.stringify(LOGGER)});
    const log = createLogger('info', 'turn-test');
    log.info('first');
    setImmediate(() => setImmediate(() => {
      fs.writeSync(1, '{"marker":true}\\n');
      log.info('second');
      setTimeout(() => {}, 10);
    }));
  `);
  expect(lines(stdout).map((l) => l.msg ?? 'marker')).toEqual(['first', 'marker', 'second']);
});

test('many lines in one turn are all written, in order', () => {
  const { stdout } = runNode(`
    const { createLogger } = require(${JSON.stringify(LOGGER)});
    const log = createLogger('info', 'bulk');
    for (let i = 0; i < 5000; i++) log.info({ i, pad: 'x'.repeat(40) }, 'bulk line');
  `);
  const written = lines(stdout);
  expect(written).toHaveLength(5000);
  expect(written.every((l, i) => l.i === i)).toBe(true);
});
