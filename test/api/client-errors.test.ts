/**
 * What node's HTTP parser refuses before the route table sees it is answered in the spec's error
 * shape (a raw HTTP/1.1 answer written on the socket, then the connection closed): a malformed
 * request line, a URL or headers past node's limit (16 KiB), a broken chunked body. Sent over raw
 * TCP (node:net), since no HTTP client will send such bytes.
 */
import { randomBytes } from 'node:crypto';
import { maxHeaderSize } from 'node:http';
import { parseTrustedProxies } from '@hearth/core/net';
import { type ApiInstance, type Harness, startApiInstance, startHarness } from '../support/harness';
import { call } from '../support/http';
import { type RawAnswer, rawExchange } from '../support/raw-http';
import { WindowClock } from '../support/clock';

jest.setTimeout(90_000);

/** The APIs' clock: the limits count per clock minute, and a scenario that must stay within one moves it to the next when this one is nearly over. */
const clock = new WindowClock();
let h: Harness;
const apis: ApiInstance[] = [];

beforeAll(async () => {
  h = await startHarness({ clock });
});
afterAll(async () => {
  for (const api of apis) await api.stop();
  await h.close();
});

/** An API over the harness's database with rate-limit counters of its own. */
async function freshApi(trust = ''): Promise<ApiInstance> {
  const api = await startApiInstance({
    clock,
    db: h.db,
    redisPrefix: `hearth-test:${randomBytes(6).toString('hex')}:`,
    masterKey: h.masterKey,
    trustedProxies: parseTrustedProxies(trust),
  });
  apis.push(api);
  return api;
}

const root = (api: ApiInstance) => api.base.replace(/\/v1$/, '');

/** The answer is one complete HTTP/1.1 message in the spec's shape, and the connection was closed. */
function expectRefusal(answer: RawAnswer, status: number, code: string): { error: string; message: string } {
  expect(answer.status).toBe(status);
  expect(answer.headers['content-type']).toBe('application/json; charset=utf-8');
  expect(answer.headers.connection).toBe('close');
  expect(Number(answer.headers['content-length'])).toBe(Buffer.byteLength(answer.body));
  expect(answer.headers['x-request-id']).toMatch(/^\S{8,}$/);
  const body = JSON.parse(answer.body);
  expect(Object.keys(body).sort()).toEqual(body.details ? ['details', 'error', 'message'] : ['error', 'message']);
  expect(body.error).toBe(code);
  expect(typeof body.message).toBe('string');
  return body;
}

const big = 'a'.repeat(maxHeaderSize + 1024);

describe('answered in the spec’s shape, counted against the peer’s address', () => {
  let api: ApiInstance;
  beforeAll(async () => {
    api = await freshApi();
  });

  test('headers past the limit: 400 invalid-request saying so (not a bare 431), with X-RateLimit-*', async () => {
    clock.roomInWindow(60, 15);
    const answer = await rawExchange(root(api), `GET /v1/flags HTTP/1.1\r\nHost: x\r\nX-Big: ${big}\r\n\r\n`);
    const body = expectRefusal(answer, 400, 'invalid-request');
    expect(body.message).toContain(String(maxHeaderSize));
    expect(answer.headers['x-ratelimit-limit']).toBe('600');
    expect(answer.headers['x-ratelimit-remaining']).toBe('599');
    expect(Number(answer.headers['x-ratelimit-reset'])).toBeGreaterThanOrEqual(1);
  });

  test('a URL past the limit: the same', async () => {
    clock.roomInWindow(60, 15);
    const answer = await rawExchange(root(api), `GET /v1/${big} HTTP/1.1\r\nHost: x\r\n\r\n`);
    expectRefusal(answer, 400, 'invalid-request');
    expect(answer.headers['x-ratelimit-limit']).toBe('600');
  });

  test.each([
    ['a request line that is not HTTP', 'HELLO\r\n\r\n'],
    ['an unknown HTTP version', 'GET /v1/flags HTTP/7.1\r\nHost: x\r\n\r\n'],
    ['a request line with an extra word', 'GET /v1/flags HTTP/1.1 please\r\nHost: x\r\n\r\n'],
    ['a header name with a space', 'GET /v1/flags HTTP/1.1\r\nHost: x\r\nBad Header: 1\r\n\r\n'],
    ['two Content-Lengths that disagree', 'POST /v1/auth/server HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab'],
    ['TLS sent to the plain port', Buffer.from('16030100a5010000a10303', 'hex')],
  ])('%s: 400 invalid-request', async (_name, bytes) => {
    const answer = await rawExchange(root(api), bytes);
    const body = expectRefusal(answer, 400, 'invalid-request');
    expect(body.message).toMatch(/not well-formed/);
    expect(answer.headers['x-ratelimit-limit']).toBe('600');
  });

  test('a chunked body that breaks off mid-request is answered the same way, once', async () => {
    const head = `POST /v1/auth/server HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${h.serverKeys['alpha-live-key']}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`;
    const answer = await rawExchange(root(api), `${head}5\r\n{"sub\r\nzz-not-a-size\r\n\r\n`);
    expectRefusal(answer, 400, 'invalid-request');
    expect(answer.raw.match(/HTTP\/1\.1 /g)).toHaveLength(1);
  });

  test('refusals count with the peer’s other requests, and the API serves on', async () => {
    clock.roomInWindow(60, 15);
    const other = await freshApi();
    const first = await call(other.base, 'GET', '/.well-known/jwks.json');
    expect(first.headers.get('x-ratelimit-remaining')).toBe('599');
    const refused = await rawExchange(root(other), 'HELLO\r\n\r\n');
    expect(refused.headers['x-ratelimit-remaining']).toBe('598');
    const after = await call(other.base, 'GET', '/.well-known/jwks.json');
    expect(after.status).toBe(200);
    expect(after.headers.get('x-ratelimit-remaining')).toBe('597');
  });

  test('a peer that used up its minute hears 429 rate-limited instead, with Retry-After', async () => {
    clock.roomInWindow(60, 25);
    const spent = await freshApi();
    for (let sent = 0; sent < 600; sent += 50) {
      const replies = await Promise.all(Array.from({ length: 50 }, () => call(spent.base, 'GET', '/nope')));
      expect(replies.every((r) => r.status === 404)).toBe(true);
    }
    const answer = await rawExchange(root(spent), `GET /v1/flags HTTP/1.1\r\nHost: x\r\nX-Big: ${big}\r\n\r\n`);
    const body = expectRefusal(answer, 429, 'rate-limited');
    expect(answer.headers['retry-after']).toMatch(/^\d+$/);
    expect(body).toEqual(expect.objectContaining({ details: { retryAfterSeconds: Number(answer.headers['retry-after']) } }));
    expect(answer.headers['x-ratelimit-remaining']).toBe('0');
  });
});

test('behind a trusted proxy the client is unknown before its headers are read: no count, no X-RateLimit-*', async () => {
  clock.roomInWindow(60, 15);
  const api = await freshApi('loopback');
  const answer = await rawExchange(root(api), 'HELLO\r\n\r\n');
  expectRefusal(answer, 400, 'invalid-request');
  expect(answer.headers['x-ratelimit-limit']).toBeUndefined();
  // The proxy's address (here, loopback) was not charged for it.
  const next = await call(api.base, 'GET', '/.well-known/jwks.json');
  expect(next.headers.get('x-ratelimit-remaining')).toBe('599');
});
