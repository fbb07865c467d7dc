/**
 * The sessions socket's authorization and frames: who may hold a socket (the API's own token checks,
 * the review and the sessions switch), the authorize deadline, and how every malformed frame is
 * answered without harming the socket or anybody else's.
 */
import { SignJWT } from 'jose';
import { loadSigningKeys, TOKEN_AUDIENCE } from '@hearth/core/auth';
import { MAX_FRAME_BYTES } from '@hearth/realtime';
import { type Harness, startHarness } from '../support/harness';
import { call, signIn } from '../support/http';
import { environment, project, serverKey, projectWithout } from '../support/manifests';
import { Client, type RealtimeInstance, sleep, startRealtime } from './support';

let h: Harness;
let rt: RealtimeInstance;
const clients: Client[] = [];
const AUTHORIZE_TIMEOUT_MS = 500;

async function open(): Promise<Client> {
  const c = await Client.open(rt.url);
  clients.push(c);
  return c;
}

async function authorized(token: string): Promise<Client> {
  const c = await Client.authorized(rt.url, token);
  clients.push(c);
  return c;
}

/** A token signed with the service's own key, with the claims given (the rest as the API makes them). */
async function signToken(claims: { sub: string; game: string; type?: string; iat?: number; exp: number }): Promise<string> {
  const [key] = await loadSigningKeys(h.db, h.masterKey);
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ type: claims.type ?? 'access', game: claims.game })
    .setProtectedHeader({ alg: 'EdDSA', kid: key.kid, typ: 'JWT' })
    .setAudience(TOKEN_AUDIENCE)
    .setSubject(claims.sub)
    .setIssuedAt(claims.iat ?? now)
    .setExpirationTime(claims.exp)
    .setJti(`t${Math.random().toString(36).slice(2)}`)
    .sign(key.privateKey);
}

/** Sends authorize with the token and expects the refusal: an error frame with the code, then 4401. */
async function expectRefused(token: string, code: string): Promise<void> {
  const c = await open();
  c.send({ v: 1, type: 'authorize', id: 'a1', payload: { token } });
  const frame = await c.next();
  expect(frame).toEqual({ v: 1, type: 'error', id: 'a1', payload: { error: code, message: expect.any(String) } });
  expect(await c.waitClosed()).toEqual({ code: 4401, reason: code });
}

beforeAll(async () => {
  h = await startHarness();
  await h.apply([...projectWithout('quiet', 'sessions'), project('later'), environment('later-live', 'later'), serverKey('later-live-key', 'later-live')]);
  rt = await startRealtime(h, { authorizeTimeoutMs: AUTHORIZE_TIMEOUT_MS, tickMs: 50 });
});

afterEach(() => {
  for (const c of clients.splice(0)) c.close();
});

afterAll(async () => {
  await rt?.stop();
  await h?.close();
});

describe('authorize', () => {
  test('a player access token is authorized; the answer names the player and echoes the id', async () => {
    const tokens = await signIn(h.base, h.serverKeys['alpha-live-key'], 'auth-ok');
    const c = await open();
    c.send({ v: 1, type: 'authorize', id: 'first', payload: { token: tokens.accessToken } });
    expect(await c.next()).toEqual({ v: 1, type: 'authorized', id: 'first', payload: { playerId: tokens.player.id } });
    c.send({ v: 1, type: 'ping', id: 7 });
    expect(await c.next()).toEqual({ v: 1, type: 'pong', id: 7, payload: {} });
    c.send({ v: 1, type: 'ping' });
    expect(await c.next()).toEqual({ v: 1, type: 'pong', payload: {} });
  });

  test('a token that is not one of ours, a refresh token and a server key are refused with 4401', async () => {
    const tokens = await signIn(h.base, h.serverKeys['alpha-live-key'], 'auth-kinds');
    await expectRefused('not-a-token', 'unauthorized');
    await expectRefused(tokens.refreshToken, 'unauthorized');
    await expectRefused(h.serverKeys['alpha-live-key'], 'unauthorized');
    // A token signed by somebody else's key with the same claims.
    const forged = tokens.accessToken.slice(0, tokens.accessToken.lastIndexOf('.') + 1) + 'A'.repeat(86);
    await expectRefused(forged, 'unauthorized');
  });

  test('an expired token is refused, even within the clock skew the API allows', async () => {
    const tokens = await signIn(h.base, h.serverKeys['alpha-live-key'], 'auth-expired');
    const now = Math.floor(Date.now() / 1000);
    await expectRefused(await signToken({ sub: tokens.player.id, game: 'alpha-live', iat: now - 3600, exp: now - 2 }), 'unauthorized');
    await expectRefused(await signToken({ sub: tokens.player.id, game: 'alpha-live', iat: now - 3600, exp: now - 60 }), 'unauthorized');
  });

  test('a token of another environment’s app key than its player’s is refused', async () => {
    const tokens = await signIn(h.base, h.serverKeys['alpha-live-key'], 'auth-wrong-game');
    const now = Math.floor(Date.now() / 1000);
    await expectRefused(await signToken({ sub: tokens.player.id, game: 'alpha-test', exp: now + 600 }), 'unauthorized');
  });

  test('the token of a player signed out everywhere, or deleted, is refused', async () => {
    const out = await signIn(h.base, h.serverKeys['alpha-live-key'], 'auth-signed-out');
    expect((await call(h.base, 'POST', '/players/me/sign-out', { token: out.accessToken })).status).toBe(204);
    await expectRefused(out.accessToken, 'unauthorized');

    const gone = await signIn(h.base, h.serverKeys['alpha-live-key'], 'auth-deleted');
    expect((await call(h.base, 'DELETE', `/players/${gone.player.id}`, { token: h.serverKeys['alpha-live-key'] })).status).toBe(204);
    await expectRefused(gone.accessToken, 'unauthorized');
  });

  test('a project without the sessions service is refused with service-disabled, then 4401', async () => {
    const tokens = await signIn(h.base, h.serverKeys['quiet-live-key'], 'auth-quiet');
    await expectRefused(tokens.accessToken, 'service-disabled');
  });

  test('a project no longer approved is refused with project-not-approved, then 4401', async () => {
    const tokens = await signIn(h.base, h.serverKeys['later-live-key'], 'auth-later');
    const before = await authorized(tokens.accessToken);
    await h.apply([project('later', { review: 'suspended' })]);
    await expectRefused(tokens.accessToken, 'project-not-approved');
    // Review is checked when a socket authorizes; one already open stays.
    before.send({ v: 1, type: 'ping', id: 'still' });
    expect(await before.next()).toEqual({ v: 1, type: 'pong', id: 'still', payload: {} });
    await h.apply([project('later', { review: 'approved' })]);
  });

  test('a first frame other than authorize closes the socket with 4401', async () => {
    const c = await open();
    c.send({ v: 1, type: 'subscribe', id: 's', payload: { sessionId: 'x' } });
    expect(await c.next()).toEqual({ v: 1, type: 'error', id: 's', payload: { error: 'unauthorized', message: expect.any(String) } });
    expect(await c.waitClosed()).toEqual({ code: 4401, reason: 'unauthorized' });
  });

  test('a malformed authorize is answered invalid-request and the socket may still authorize in time', async () => {
    const tokens = await signIn(h.base, h.serverKeys['alpha-live-key'], 'auth-retry');
    const c = await open();
    c.send({ v: 1, type: 'authorize', id: 'a', payload: {} });
    expect(await c.next()).toEqual({
      v: 1,
      type: 'error',
      id: 'a',
      payload: { error: 'invalid-request', message: expect.any(String), details: { field: 'payload.token' } },
    });
    c.send({ v: 1, type: 'authorize', id: 'b', payload: { token: 42 } });
    expect((await c.next()).payload.details).toEqual({ field: 'payload.token' });
    c.send({ v: 1, type: 'authorize', id: 'c', payload: { token: tokens.accessToken, extra: 1 } });
    expect((await c.next()).payload.details).toEqual({ field: 'payload.extra' });
    c.send({ v: 1, type: 'authorize', id: 'd', payload: { token: tokens.accessToken } });
    expect(await c.next()).toEqual({ v: 1, type: 'authorized', id: 'd', payload: { playerId: tokens.player.id } });
  });

  test('no authorize within the deadline closes the socket with 4401 authorize-timeout', async () => {
    const c = await open();
    const started = Date.now();
    const frame = await c.next(AUTHORIZE_TIMEOUT_MS + 1000);
    expect(frame).toEqual({ v: 1, type: 'error', payload: { error: 'unauthorized', message: expect.any(String) } });
    expect(await c.waitClosed()).toEqual({ code: 4401, reason: 'authorize-timeout' });
    const elapsed = Date.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(AUTHORIZE_TIMEOUT_MS - 20);
    expect(elapsed).toBeLessThan(AUTHORIZE_TIMEOUT_MS + 500);
  });

  test('an authorized socket is not closed by the authorize deadline', async () => {
    const tokens = await signIn(h.base, h.serverKeys['alpha-live-key'], 'auth-stays');
    const c = await authorized(tokens.accessToken);
    await c.quiet(AUTHORIZE_TIMEOUT_MS + 300);
  });

  test('frames sent right behind authorize are handled after it, in order', async () => {
    const tokens = await signIn(h.base, h.serverKeys['alpha-live-key'], 'auth-pipelined');
    const c = await open();
    c.send({ v: 1, type: 'authorize', id: 1, payload: { token: tokens.accessToken } });
    c.send({ v: 1, type: 'ping', id: 2 });
    c.send({ v: 1, type: 'ping', id: 3 });
    expect((await c.next()).type).toBe('authorized');
    expect(await c.next()).toEqual({ v: 1, type: 'pong', id: 2, payload: {} });
    expect(await c.next()).toEqual({ v: 1, type: 'pong', id: 3, payload: {} });
  });

  test('authorize again: a fresh token of the same player is taken, another player’s is refused with forbidden', async () => {
    const a = await signIn(h.base, h.serverKeys['alpha-live-key'], 'auth-again');
    const again = await signIn(h.base, h.serverKeys['alpha-live-key'], 'auth-again');
    const other = await signIn(h.base, h.serverKeys['alpha-live-key'], 'auth-other');
    const c = await authorized(a.accessToken);
    c.send({ v: 1, type: 'authorize', id: 'x', payload: { token: again.accessToken } });
    expect(await c.next()).toEqual({ v: 1, type: 'authorized', id: 'x', payload: { playerId: a.player.id } });
    c.send({ v: 1, type: 'authorize', id: 'y', payload: { token: other.accessToken } });
    expect(await c.next()).toEqual({ v: 1, type: 'error', id: 'y', payload: { error: 'forbidden', message: expect.any(String) } });
    c.send({ v: 1, type: 'ping', id: 'z' });
    expect((await c.next()).type).toBe('pong');
    c.send({ v: 1, type: 'authorize', id: 'bad', payload: { token: 'nope' } });
    expect((await c.next()).payload.error).toBe('unauthorized');
    expect(await c.waitClosed()).toEqual({ code: 4401, reason: 'unauthorized' });
  });
});

describe('malformed frames', () => {
  const cases: [string, string | Buffer, string, boolean?][] = [
    ['not JSON', '{"v":1,', 'frame'],
    ['a JSON array', '[1,2]', 'frame'],
    ['JSON null', 'null', 'frame'],
    ['a JSON string', '"ping"', 'frame'],
    ['no type', '{"v":1}', 'type'],
    ['a type that is not a string', '{"v":1,"type":5}', 'type'],
    ['an unknown type', '{"v":1,"type":"dance"}', 'type'],
    ['no v', '{"type":"ping"}', 'v'],
    ['v 2', '{"v":2,"type":"ping"}', 'v'],
    ['v as a string', '{"v":"1","type":"ping"}', 'v'],
    ['an unknown field', '{"v":1,"type":"ping","extra":true}', 'extra'],
    ['a payload that is not an object', '{"v":1,"type":"ping","payload":[]}', 'payload'],
    ['a ping with payload fields', '{"v":1,"type":"ping","payload":{"a":1}}', 'payload.a'],
    ['an id that is an object', '{"v":1,"type":"ping","id":{}}', 'id'],
    ['an id too long', `{"v":1,"type":"ping","id":"${'i'.repeat(65)}"}`, 'id'],
    ['subscribe without a session id', '{"v":1,"type":"subscribe","payload":{}}', 'payload.sessionId'],
    ['subscribe with a session id too long', `{"v":1,"type":"subscribe","payload":{"sessionId":"${'s'.repeat(65)}"}}`, 'payload.sessionId'],
    ['unsubscribe with an empty session id', '{"v":1,"type":"unsubscribe","payload":{"sessionId":""}}', 'payload.sessionId'],
    ['a binary frame', Buffer.from('{"v":1,"type":"ping"}'), 'frame', true],
  ];

  // Rest parameters: jest reads a callback of more parameters than a row has columns as taking `done`.
  test.each(cases)('%s is answered with error invalid-request; the socket goes on', async (...[, data, field, binary]) => {
    const tokens = await signIn(h.base, h.serverKeys['alpha-live-key'], `bad-${field}`);
    const c = await authorized(tokens.accessToken);
    c.sendRaw(data, { binary: binary ?? false });
    const frame = await c.next();
    expect(frame.type).toBe('error');
    expect(frame.payload).toEqual({ error: 'invalid-request', message: expect.any(String), details: { field } });
    c.send({ v: 1, type: 'ping', id: 'after' });
    expect(await c.next()).toEqual({ v: 1, type: 'pong', id: 'after', payload: {} });
  });

  test('a refused frame with a usable id has it echoed', async () => {
    const tokens = await signIn(h.base, h.serverKeys['alpha-live-key'], 'bad-echo');
    const c = await authorized(tokens.accessToken);
    c.send({ v: 2, type: 'ping', id: 'echo-me' });
    expect(await c.next()).toEqual({
      v: 1,
      type: 'error',
      id: 'echo-me',
      payload: { error: 'invalid-request', message: expect.any(String), details: { field: 'v' } },
    });
  });

  test('malformed frames before authorize are answered too; the 11th frame before authorizing closes with 1008', async () => {
    const c = await open();
    for (let i = 0; i < 10; i++) {
      c.sendRaw('nonsense');
      expect((await c.next()).payload.error).toBe('invalid-request');
    }
    c.sendRaw('nonsense');
    expect(await c.waitClosed()).toEqual({ code: 1008, reason: 'too-many-frames' });
  });

  test(`a frame over ${MAX_FRAME_BYTES} bytes closes the socket with 1009, even before authorize`, async () => {
    const c = await open();
    c.sendRaw(JSON.stringify({ v: 1, type: 'authorize', payload: { token: 'x'.repeat(MAX_FRAME_BYTES) } }));
    expect((await c.waitClosed()).code).toBe(1009);
  });

  test('the server keeps serving other sockets while one misbehaves', async () => {
    const tokens = await signIn(h.base, h.serverKeys['alpha-live-key'], 'bystander');
    const bystander = await authorized(tokens.accessToken);
    const rude = await open();
    rude.sendRaw('\u0000garbage');
    rude.sendRaw('x'.repeat(MAX_FRAME_BYTES + 1));
    expect((await rude.waitClosed()).code).toBe(1009);
    bystander.send({ v: 1, type: 'ping', id: 'fine' });
    expect(await bystander.next()).toEqual({ v: 1, type: 'pong', id: 'fine', payload: {} });
    // And new sockets are still taken.
    const fresh = await authorized(tokens.accessToken);
    fresh.send({ v: 1, type: 'ping' });
    expect((await fresh.next()).type).toBe('pong');
  });

  test('unsubscribe from a session the socket does not follow is not-found', async () => {
    const tokens = await signIn(h.base, h.serverKeys['alpha-live-key'], 'unsub-none');
    const c = await authorized(tokens.accessToken);
    c.send({ v: 1, type: 'unsubscribe', id: 'u', payload: { sessionId: 'nothing-here' } });
    expect(await c.next()).toEqual({ v: 1, type: 'error', id: 'u', payload: { error: 'not-found', message: expect.any(String) } });
  });
});

test('an upgrade on another path is refused with 404; the probes answer', async () => {
  const url = rt.url.replace('/v1/realtime/socket', '/elsewhere');
  await expect(Client.open(url)).rejects.toThrow(/404/);
  const base = rt.url.replace('ws://', 'http://').replace('/v1/realtime/socket', '');
  const health = await fetch(`${base}/healthz`);
  expect({ status: health.status, body: await health.json() }).toEqual({ status: 200, body: { status: 'ok' } });
  const ready = await fetch(`${base}/readyz`);
  expect(ready.status).toBe(200);
  expect(await ready.json()).toMatchObject({ status: 'ready', postgres: true, redis: true });
  await sleep(0);
});
