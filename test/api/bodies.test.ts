/**
 * Bodies and credentials as the HTTP layer reads them (spec §4, §5, §8): every route's body limit,
 * those that ignore their body included; the JSON media type by `content-type`; JSON that would
 * reach an object's prototype refused by `secure-json-parse`; the bearer credential per RFC 6750.
 */
import { type Harness, startHarness } from '../support/harness';
import { call, expectError, signIn } from '../support/http';
import { endless, openConnection, padded, rawRequest } from '../support/raw-http';
import { eventually, sleep } from '../support/wait';
import { type TestPlayer, join, newPlayer, newSession } from '../sessions/helpers';

let h: Harness;
let server: string;
let player: Awaited<ReturnType<typeof signIn>>;

beforeAll(async () => {
  h = await startHarness();
  server = h.serverKeys['alpha-live-key'];
  player = await signIn(h.base, server, 'bodies-1', 'Original');
});
afterAll(async () => {
  await h.close();
});

async function displayName(): Promise<string | null> {
  const me = await call(h.base, 'GET', '/players/me', { token: player.accessToken });
  expect(me.status).toBe(200);
  return me.body.displayName;
}

describe('a route that ignores its body (POST /sessions/:id/leave) still holds it to 64 KB', () => {
  let host: TestPlayer;
  let guest: TestPlayer;
  let sessionId: string;

  beforeAll(async () => {
    host = await newPlayer(h);
    guest = await newPlayer(h);
    sessionId = (await newSession(h, host)).id;
    expect((await join(h, guest, sessionId)).status).toBe(200);
  });

  async function seated(): Promise<string[]> {
    const session = await call(h.base, 'GET', `/sessions/${sessionId}`, { token: server });
    expect(session.status).toBe(200);
    return session.body.players.map((p: { playerId: string }) => p.playerId);
  }

  test('a declared length over the limit is 413 without waiting for the body, and the seat is kept', async () => {
    // Declares 1 MB, sends 20 bytes and waits: only a server that refuses on the header answers.
    const reply = await rawRequest(
      h.base,
      'POST',
      `/sessions/${sessionId}/leave`,
      { Authorization: `Bearer ${guest.token}`, 'Content-Type': 'text/plain', 'Content-Length': 1_048_576 },
      async (req) => {
        req.write('x'.repeat(20));
      },
    );
    expect(expectError(reply, 413, 'payload-too-large').details).toEqual({ limit: 65_536 });
    // Refused before its credential was read: counted like a request without one.
    expect(reply.headers.get('x-ratelimit-limit')).toBe('600');
    expect(await seated()).toContain(guest.id);
  });

  test('a chunked body that does not stop is refused while it streams, and the seat is kept', async () => {
    const sent = { bytes: 0 };
    const reply = await rawRequest(
      h.base,
      'POST',
      `/sessions/${sessionId}/leave`,
      { Authorization: `Bearer ${guest.token}`, 'Content-Type': 'application/octet-stream' },
      endless(4096, 8 * 1_048_576, sent),
    );
    expect(expectError(reply, 413, 'payload-too-large').details).toEqual({ limit: 65_536 });
    // The answer came while the client was still streaming, long before its 8 MB were out.
    expect(sent.bytes).toBeGreaterThan(65_536);
    expect(sent.bytes).toBeLessThan(8 * 1_048_576);
    expect(await seated()).toContain(guest.id);
  });

  test('any body within the limit is ignored, whatever it holds: exactly 64 KB of non-JSON leaves', async () => {
    const reply = await call(h.base, 'POST', `/sessions/${sessionId}/leave`, {
      token: guest.token,
      rawBody: 'not json '.repeat(8192).slice(0, 65_536),
      headers: { 'Content-Type': 'text/plain' },
    });
    expect(reply.status).toBe(204);
    expect(reply.text).toBe('');
    expect(await seated()).not.toContain(guest.id);
  });
});

describe('the JSON media type (content-type)', () => {
  const json = JSON.stringify({ displayName: 'Typed' });
  const patch = (contentType: string, body: string | Buffer = json) =>
    call(h.base, 'PATCH', '/players/me', { token: player.accessToken, rawBody: body, headers: { 'Content-Type': contentType } });

  afterEach(async () => {
    await call(h.base, 'PATCH', '/players/me', { token: player.accessToken, body: { displayName: 'Original' } });
  });

  test.each(['application/json', 'application/json; charset=utf-8', 'application/json;charset=UTF-8', 'Application/JSON', 'application/json; charset="utf-8"'])(
    '%s is JSON',
    async (contentType) => {
      const reply = await patch(contentType);
      expect(reply.status).toBe(200);
      expect(reply.body.displayName).toBe('Typed');
    },
  );

  test.each([
    'text/json',
    'application/jsonp',
    'application/json-patch+json',
    'application/json; charset=iso-8859-1',
    'application/json; charset=utf-16',
    'application/json;;',
    'application/json; charset',
    'json',
  ])('%s is 400 naming body, and nothing changes', async (contentType) => {
    expectError(await patch(contentType), 400, 'invalid-request', 'body');
    expect(await displayName()).toBe('Original');
  });

  test('bytes that are not UTF-8 are 400 naming body, not stored with replacement characters', async () => {
    const latin1 = Buffer.concat([Buffer.from('{"displayName":"Caf'), Buffer.from([0xe9]), Buffer.from('"}')]);
    expectError(await patch('application/json', latin1), 400, 'invalid-request', 'body');
    expect(await displayName()).toBe('Original');
    // The same name in UTF-8 is taken.
    const utf8 = await patch('application/json', Buffer.from('{"displayName":"Café"}'));
    expect(utf8.status).toBe(200);
    expect(utf8.body.displayName).toBe('Café');
  });
});

describe('JSON that reaches for a prototype is refused (secure-json-parse)', () => {
  const bodies = {
    '__proto__ at the top': '{"__proto__": {"polluted": "yes"}, "displayName": "Proto"}',
    '__proto__ written with escapes': '{"\\u005f_proto__": {"polluted": "yes"}, "displayName": "Proto"}',
    '__proto__ nested': '{"displayName": "Proto", "extra": {"inner": [{"__proto__": {"polluted": "yes"}}]}}',
    'constructor.prototype at the top': '{"constructor": {"prototype": {"polluted": "yes"}}, "displayName": "Ctor"}',
    'constructor.prototype nested': '{"displayName": "Ctor", "extra": {"constructor": {"prototype": {"polluted": "yes"}}}}',
  };

  test.each(Object.entries(bodies))('%s: 400 invalid-request naming body; nothing polluted, nothing changed', async (_name, raw) => {
    const reply = await call(h.base, 'PATCH', '/players/me', { token: player.accessToken, rawBody: raw, headers: { 'Content-Type': 'application/json' } });
    const body = expectError(reply, 400, 'invalid-request', 'body');
    expect(Object.keys(body).sort()).toEqual(['details', 'error', 'message']);
    expect(body.details).toEqual({ field: 'body' });
    // The API runs in this process: a polluted prototype would show here.
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty('polluted');
    expect(await displayName()).toBe('Original');
  });

  test('at a sign-in too: no player is made', async () => {
    const reply = await call(h.base, 'POST', '/auth/server', {
      token: server,
      rawBody: '{"subject": "proto-subject", "__proto__": {"isAdmin": true}}',
      headers: { 'Content-Type': 'application/json' },
    });
    expectError(reply, 400, 'invalid-request', 'body');
    expect(({} as Record<string, unknown>).isAdmin).toBeUndefined();
    expect(await h.db('player_identities').where({ subject: 'proto-subject' }).first()).toBeUndefined();
  });

  test('a plain "constructor" or "prototype" key is only an unknown field, named as such', async () => {
    const reply = await call(h.base, 'PATCH', '/players/me', { token: player.accessToken, body: { displayName: 'Fine', constructor: 'x' } });
    expectError(reply, 400, 'invalid-request', 'body.constructor');
    const other = await call(h.base, 'PATCH', '/players/me', { token: player.accessToken, body: { displayName: 'Fine', prototype: {} } });
    expectError(other, 400, 'invalid-request', 'body.prototype');
  });
});

describe('the bearer credential (RFC 6750 §2.1)', () => {
  test('the scheme is case-insensitive and may be followed by several spaces', async () => {
    for (const authorization of [`Bearer ${player.accessToken}`, `bearer ${player.accessToken}`, `BEARER   ${player.accessToken}`]) {
      const reply = await call(h.base, 'GET', '/players/me', { headers: { Authorization: authorization } });
      expect(reply.status).toBe(200);
    }
  });

  test.each([
    ['no space', (t: string) => `Bearer${t}`],
    ['a tab', (t: string) => `Bearer\t${t}`],
    ['a second token', (t: string) => `Bearer ${t} ${t}`],
    ['a trailing comma', (t: string) => `Bearer ${t},`],
    ['a character outside b64token', (t: string) => `Bearer ${t}!`],
    ['padding inside the token', (t: string) => `Bearer ${t.slice(0, 10)}=${t.slice(10)}`],
    ['another scheme', (t: string) => `Token ${t}`],
    ['the scheme alone', () => 'Bearer'],
  ])('%s is 401 unauthorized, counted against the address', async (_name, header) => {
    const reply = await call(h.base, 'GET', '/players/me', { headers: { Authorization: header(player.accessToken) } });
    expectError(reply, 401, 'unauthorized');
    expect(reply.headers.get('x-ratelimit-limit')).toBe('600');
  });

  test('a server key, with its underscores, is a b64token', async () => {
    expect((await call(h.base, 'GET', '/flags', { headers: { Authorization: `Bearer ${server}` } })).status).toBe(200);
  });
});

/** A chunked PATCH /players/me whose first piece is already past the route's 64 KB: its head and that piece. */
const refusedStart = () =>
  [
    'PATCH /v1/players/me HTTP/1.1',
    `Host: ${new URL(h.base).host}`,
    `Authorization: Bearer ${player.accessToken}`,
    'Content-Type: application/json',
    'Transfer-Encoding: chunked',
    '',
    `${(96 * 1024).toString(16)}`,
    `${'x'.repeat(96 * 1024)}`,
    '',
  ].join('\r\n');

describe('a body refused before its end', () => {
  test('is answered 413 while it streams, the rest is read and dropped, and the same connection serves the next request', async () => {
    const conn = openConnection(h.base);
    conn.socket.write(refusedStart());
    await eventually(async () => conn.answers().length === 1 && conn.seen.text.includes('"payload-too-large"'), 5_000);
    expect(conn.answers()[0]).toMatch(/^413 /);
    // The client ends the body; the server has been reading past the refusal, so the request is over and the next one is answered.
    conn.socket.write(`0\r\n\r\nGET /v1/players/me HTTP/1.1\r\nHost: ${new URL(h.base).host}\r\nAuthorization: Bearer ${player.accessToken}\r\n\r\n`);
    await eventually(async () => conn.answers().length === 2 && conn.seen.text.includes('"displayName"'), 5_000);
    expect(conn.answers()[1]).toMatch(/^200 /);
    expect(conn.seen.closed).toBe(false);
    conn.socket.destroy();
    expect(await displayName()).toBe('Original');
  });

  test('a client that sends on regardless is cut off after a while (2 s), not read for ever', async () => {
    const conn = openConnection(h.base);
    conn.socket.write(refusedStart());
    const piece = `${(16 * 1024).toString(16)}\r\n${'x'.repeat(16 * 1024)}\r\n`;
    const started = Date.now();
    // Bounded: 8 s at the most, whatever the server does.
    while (!conn.seen.closed && Date.now() - started < 8_000) {
      if (!conn.socket.destroyed) conn.socket.write(piece);
      await sleep(50);
    }
    expect(conn.answers()[0]).toMatch(/^413 /);
    expect(conn.seen.closed).toBe(true);
    expect(Date.now() - started).toBeLessThan(6_000);
  });
});

test('an oversized body is refused the same way on a route that takes JSON (PATCH /players/me, chunked)', async () => {
  const sent = { bytes: 0 };
  const reply = await rawRequest(
    h.base,
    'PATCH',
    '/players/me',
    { Authorization: `Bearer ${player.accessToken}`, 'Content-Type': 'application/json' },
    endless(4096, 8 * 1_048_576, sent),
  );
  expect(expectError(reply, 413, 'payload-too-large').details).toEqual({ limit: 65_536 });
  expect(sent.bytes).toBeLessThan(8 * 1_048_576);
  expect(await displayName()).toBe('Original');
  // And exactly at the limit it is read.
  const atLimit = await call(h.base, 'PATCH', '/players/me', {
    token: player.accessToken,
    rawBody: padded({ displayName: 'Original' }, 65_536),
    headers: { 'Content-Type': 'application/json' },
  });
  expect(atLimit.status).toBe(200);
});
