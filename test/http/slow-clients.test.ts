/**
 * Slow clients (issue 13, "slow bodies (slowloris: headers and body timeouts)"): a client that sends
 * its headers or its body a trickle at a time is answered `400 invalid-request` ("did not arrive in
 * full in time": the spec has no 408, see client-error.ts) and its connection closed once the API's
 * deadline passes, while a keep-alive connection that is merely idle between requests stays usable.
 * The deadlines are shortened for the test (the defaults are SLOW_CLIENT_TIMEOUTS).
 */
import net from 'node:net';
import { randomBytes } from 'node:crypto';
import { SLOW_CLIENT_TIMEOUTS } from '@hearth/api';
import { type ApiInstance, createTestDatabase, startApiInstance, type TestDatabase } from '../support/harness';
import { trickle as trickleOn } from '../support/raw-http';

const TIMEOUTS = { headersMs: 600, requestMs: 1_500, checkEveryMs: 100 };

let database: TestDatabase;
let api: ApiInstance;
let port: number;

beforeAll(async () => {
  database = await createTestDatabase();
  api = await startApiInstance({
    db: database.db,
    redisPrefix: `hearth-test:${randomBytes(6).toString('hex')}:`,
    masterKey: randomBytes(32),
    timeouts: TIMEOUTS,
  });
  port = Number(new URL(api.api.url).port);
});
afterAll(async () => {
  await api.stop();
  await database.drop();
});

/** A slow client on the API under test (test/support/raw-http.ts). */
const trickle = (first: string, piece: string, giveUpMs: number) => trickleOn(port, first, piece, giveUpMs);

test('the defaults bound a whole request to two minutes and its headers to 20 s', () => {
  expect(SLOW_CLIENT_TIMEOUTS).toEqual({ headersMs: 20_000, requestMs: 120_000, checkEveryMs: 5_000 });
});

/** The refusal of a request that did not arrive in time, in the spec's error shape. */
function expectTimedOut(answer: string): void {
  expect(answer).toMatch(/^HTTP\/1\.1 400 /);
  const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4));
  expect(body).toMatchObject({ error: 'invalid-request', message: 'The request did not arrive in full in time.' });
}

test('headers sent a line at a time, never ended: refused and closed after the headers deadline', async () => {
  const { answer, closedAfterMs } = await trickle('GET /v1/players/me HTTP/1.1\r\nHost: hearth\r\n', 'X-Slow: still-coming\r\n', 10_000);
  expectTimedOut(answer);
  expect(closedAfterMs).not.toBeNull();
  expect(closedAfterMs!).toBeGreaterThanOrEqual(TIMEOUTS.headersMs);
  expect(closedAfterMs!).toBeLessThan(TIMEOUTS.headersMs + 2_000);
});

test('a body sent a byte at a time: refused and closed after the request deadline', async () => {
  // The identity-provider sign-in takes no credential and reads its body (the environment is in it).
  const head = 'POST /v1/auth/idp HTTP/1.1\r\nHost: hearth\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n';
  const { answer, closedAfterMs } = await trickle(head, ' ', 10_000);
  expectTimedOut(answer);
  expect(closedAfterMs).not.toBeNull();
  expect(closedAfterMs!).toBeGreaterThanOrEqual(TIMEOUTS.requestMs);
  expect(closedAfterMs!).toBeLessThan(TIMEOUTS.requestMs + 2_000);
});

test('a keep-alive connection idle between requests longer than the headers deadline still serves', async () => {
  const socket = net.connect(port, '127.0.0.1');
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  const ask = () =>
    new Promise<string>((resolve) => {
      let answer = '';
      const onData = (chunk: Buffer) => {
        answer += chunk.toString('latin1');
        if (answer.includes('\r\n\r\n') && /ok|ready/.test(answer)) {
          socket.off('data', onData);
          resolve(answer);
        }
      };
      socket.on('data', onData);
      socket.write('GET /healthz HTTP/1.1\r\nHost: hearth\r\n\r\n');
    });
  try {
    expect(await ask()).toMatch(/^HTTP\/1\.1 200 /);
    await new Promise((r) => setTimeout(r, TIMEOUTS.headersMs * 2)); // wall time: idle past the headers deadline, a timer of node's server
    expect(socket.destroyed).toBe(false);
    expect(await ask()).toMatch(/^HTTP\/1\.1 200 /);
  } finally {
    socket.destroy();
  }
});
