/**
 * The production logger writes its lines in few writes: a quiet process's at the end of the turn they
 * were logged in, a busy one's at most once per 10 ms. No line may wait longer than that, none may be
 * lost when the process exits right after logging, and they stay in order.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { BufferedDestination, accessLogOf } from '../../apps/core/src/logger';

const LOGGER = path.resolve(__dirname, '../../apps/core/src/logger.ts');

function runNode(code: string): { stdout: string; status: number | null } {
  const result = spawnSync(process.execPath, ['--import', 'tsx', '-e', code], { encoding: 'utf8', timeout: 20_000 });
  return { stdout: result.stdout, status: result.status };
}

const lines = (stdout: string) =>
  stdout
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));

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

test('after a quiet moment, a line is out by the end of the turn it was logged in, in order with direct writes after it', () => {
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

describe('the access line', () => {
  const fields = [
    { requestId: 'a1B2-3', method: 'GET', route: '/blog/posts', status: 200, ms: 0.412 },
    { requestId: 'client"sent\\this{}', method: 'POST', route: 'unmatched', status: 404, ms: 12 },
    { requestId: 'x', method: 'DELETE', route: '/players/:playerId', status: 503, ms: 1.5 },
    // Not ASCII: written as UTF-8, not byte for byte.
    { requestId: 'ünï-çødé', method: 'GET', route: '/blog/posts/:slug', status: 200, ms: 0.001 },
  ];

  test('on the production logger it is the line pino writes for the same fields, byte for byte but the time', () => {
    const { stdout } = runNode(`
      const { createLogger, accessLogOf } = require(${JSON.stringify(LOGGER)});
      for (const name of ['access-test', 'access-tëst']) {
      const log = createLogger('info', name);
      const access = accessLogOf(log);
      for (const f of ${JSON.stringify(fields)}) {
        log[f.status >= 500 ? 'error' : 'info']({ requestId: f.requestId, method: f.method, route: f.route, status: f.status, ms: f.ms }, 'request');
        access(f);
      }
      }
    `);
    const written = stdout.split('\n').filter(Boolean);
    expect(written).toHaveLength(4 * fields.length);
    const withoutTime = (line: string) => line.replace(/"time":\d+/, '"time":0');
    for (let i = 0; i < written.length; i += 2) expect(withoutTime(written[i + 1])).toBe(withoutTime(written[i]));
    expect(lines(stdout).filter((_, i) => i % 2 === 1)).toEqual(
      ['access-test', 'access-tëst'].flatMap((name) =>
        fields.map((f) => expect.objectContaining({ ...f, level: f.status >= 500 ? 50 : 30, name, msg: 'request' })),
      ),
    );
  });

  test("it follows the logger's level: at warn only the 5xx lines", () => {
    const { stdout } = runNode(`
      const { createLogger, accessLogOf } = require(${JSON.stringify(LOGGER)});
      const log = createLogger('info', 'access-level');
      const access = accessLogOf(log);
      log.level = 'warn';
      for (const f of ${JSON.stringify(fields)}) access(f);
    `);
    expect(lines(stdout).map((l) => [l.status, l.level])).toEqual([[503, 50]]);
  });

  test('any other logger gets it through pino', () => {
    const out: string[] = [];
    const log = pino({ base: null, timestamp: false }, { write: (line: string) => void out.push(line) });
    accessLogOf(log)(fields[0]);
    expect(out.map((l) => JSON.parse(l))).toEqual([{ level: 30, ...fields[0], msg: 'request' }]);
  });
});

describe('BufferedDestination', () => {
  let dir: string;
  let file: string;
  let fd: number;
  const written = () => fs.readFileSync(file, 'utf8');

  beforeEach(() => {
    jest.useFakeTimers(); // setImmediate, setTimeout and performance.now, moved by the test
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-log-'));
    file = path.join(dir, 'out.log');
    fd = fs.openSync(file, 'w');
  });
  afterEach(() => {
    jest.useRealTimers();
    fs.closeSync(fd);
    fs.rmSync(dir, { recursive: true });
  });

  test('a busy process writes at most once per 10 ms, and no line waits longer', () => {
    const out = new BufferedDestination(fd);
    out.write('1\n');
    expect(written()).toBe('');
    jest.advanceTimersByTime(0); // the end of the turn: nothing was written lately, so now
    expect(written()).toBe('1\n');

    jest.advanceTimersByTime(2);
    out.write('2\n');
    jest.advanceTimersByTime(0);
    out.write('3\n');
    jest.advanceTimersByTime(7); // 9 ms after the last write: both lines still wait
    expect(written()).toBe('1\n');
    jest.advanceTimersByTime(1); // 10 ms: one write for both
    expect(written()).toBe('1\n2\n3\n');

    jest.advanceTimersByTime(50); // quiet again: the next line leaves at its turn's end
    out.write('4\n');
    jest.advanceTimersByTime(0);
    expect(written()).toBe('1\n2\n3\n4\n');
  });

  test('a line given as fields is formatted when the lines are written out, in order with the lines written after it', () => {
    const out = new BufferedDestination(fd);
    const formatted: number[] = [];
    const format = (n: number, time: number) => {
      formatted.push(n);
      return { text: `${n}@${time}\n`, ascii: true };
    };
    out.defer(1, format, 100);
    out.defer(2, format, 101);
    expect(formatted).toEqual([]); // kept as fields until something is written after them, or the write
    out.write('plain\n');
    expect(formatted).toEqual([1, 2]);
    out.defer(3, (n, time) => ({ text: `${n}@${time} é\n`, ascii: false }), 102);
    jest.advanceTimersByTime(0);
    expect(written()).toBe('1@100\n2@101\nplain\n3@102 é\n');
  });

  test('a full buffer is written at once; a line larger than the buffer is written whole, in order', () => {
    const out = new BufferedDestination(fd);
    const line = (i: number) => `${String(i).padStart(5, '0')} ${'é'.repeat(200)}\n`; // two-byte UTF-8
    for (let i = 0; i < 200; i++) out.write(line(i));
    // 200 lines of 407 bytes cannot wait in 64 KB: the first ones are out before any timer ran.
    expect(written().length).toBeGreaterThan(0);
    const huge = `${'x'.repeat(100_000)}\n`;
    out.write(huge);
    out.write('last\n');
    out.flush();
    expect(written()).toBe(Array.from({ length: 200 }, (_, i) => line(i)).join('') + huge + 'last\n');
  });
});
