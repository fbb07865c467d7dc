/**
 * A socket's life beyond frames: heartbeats, the token's expiry, shutdown, metrics, and the socket
 * served on the API's own port (as `hearth dev` does).
 */
import { SignJWT } from 'jose';
import { loadSigningKeys, TOKEN_AUDIENCE } from '@hearth/core/auth';
import { RealtimeServer } from '@hearth/realtime';
import { type Harness, startHarness } from '../support/harness';
import { call, signIn } from '../support/http';
import { eventually } from '../support/wait';
import { Client, type RealtimeInstance, sleep, startRealtime } from './support';

let h: Harness;
const clients: Client[] = [];
let n = 0;

async function tokenFor(subject = `life-${++n}`) {
  return signIn(h.base, h.serverKeys['alpha-live-key'], subject);
}

/** An access token of the player that expires at `exp`, signed with the service's key. */
async function shortToken(playerId: string, exp: number): Promise<string> {
  const [key] = await loadSigningKeys(h.db, h.masterKey);
  return new SignJWT({ type: 'access', game: 'alpha-live' })
    .setProtectedHeader({ alg: 'EdDSA', kid: key.kid, typ: 'JWT' })
    .setAudience(TOKEN_AUDIENCE)
    .setSubject(playerId)
    .setIssuedAt(Math.floor(Date.now() / 1000))
    .setExpirationTime(exp)
    .setJti(`short-${++n}`)
    .sign(key.privateKey);
}

async function track(c: Promise<Client>): Promise<Client> {
  const client = await c;
  clients.push(client);
  return client;
}

beforeAll(async () => {
  h = await startHarness();
});

afterEach(() => {
  for (const c of clients.splice(0)) c.close();
});

afterAll(async () => {
  await h?.close();
});

describe('heartbeats', () => {
  let rt: RealtimeInstance;
  beforeAll(async () => {
    rt = await startRealtime(h, { heartbeatMs: 150, tickMs: 50 });
  });
  afterAll(async () => {
    await rt.stop();
  });

  test('a socket that answers pings stays; one that does not is dropped within two heartbeats', async () => {
    const t = await tokenFor();
    const answering = await track(Client.authorized(rt.url, t.accessToken));
    const silent = await track(Client.open(rt.url, { autoPong: false }));
    silent.send({ v: 1, type: 'authorize', payload: { token: t.accessToken } });
    expect((await silent.next()).type).toBe('authorized');
    const started = Date.now();
    const closed = await silent.waitClosed(1000);
    expect(closed.code).toBe(1006); // terminated: no closing handshake with a peer that does not answer
    expect(Date.now() - started).toBeLessThan(600);
    await answering.quiet(600);
    answering.send({ v: 1, type: 'ping', id: 'alive' });
    expect(await answering.next()).toEqual({ v: 1, type: 'pong', id: 'alive', payload: {} });
    const metrics = await (await fetch(rt.metricsUrl!)).text();
    expect(metrics).toMatch(/hearth_realtime_closes_total\{code="1006"\} 1/);
  });

  test("the client's WebSocket pings are answered with their payload, before and after authorize, and are not counted as frames", async () => {
    const c = await track(Client.open(rt.url));
    const pongs: string[] = [];
    c.ws.on('pong', (data) => pongs.push(data.toString()));
    const pongsReach = async (count: number) => {
      await eventually(async () => pongs.length >= count, 2000, 20);
      expect(pongs.length).toBe(count);
    };
    c.ws.ping(Buffer.from('before'));
    await pongsReach(1);
    expect(pongs).toEqual(['before']);

    c.send({ v: 1, type: 'authorize', payload: { token: (await tokenFor()).accessToken } });
    expect((await c.next()).type).toBe('authorized');
    // More pings in a second than the plan's messagesPerSecond (10): control frames are not rate-limited.
    for (let i = 0; i < 15; i++) c.ws.ping(Buffer.from(`after-${i}`));
    await pongsReach(16);
    expect(pongs.slice(1)).toEqual(Array.from({ length: 15 }, (_, i) => `after-${i}`));
    c.send({ v: 1, type: 'ping', id: 'still' });
    expect(await c.next()).toEqual({ v: 1, type: 'pong', id: 'still', payload: {} });
    expect(c.closed).toBeNull();
  });
});

describe('token expiry', () => {
  let rt: RealtimeInstance;
  beforeAll(async () => {
    rt = await startRealtime(h, { tickMs: 50 });
  });
  afterAll(async () => {
    await rt.stop();
  });

  test('the socket is closed with 4401 token-expired when its token expires', async () => {
    const t = await tokenFor();
    const exp = Math.floor(Date.now() / 1000) + 2;
    const c = await track(Client.authorized(rt.url, await shortToken(t.player.id, exp)));
    const frame = await c.next(4000);
    const at = Date.now();
    expect(frame).toEqual({ v: 1, type: 'error', payload: { error: 'unauthorized', message: expect.any(String) } });
    expect(await c.waitClosed()).toEqual({ code: 4401, reason: 'token-expired' });
    expect(at).toBeGreaterThanOrEqual(exp * 1000);
    expect(at).toBeLessThan(exp * 1000 + 500);
  });

  test('authorize again with a fresh token before expiry keeps the socket open past the old expiry', async () => {
    const t = await tokenFor();
    const exp = Math.floor(Date.now() / 1000) + 2;
    const c = await track(Client.authorized(rt.url, await shortToken(t.player.id, exp)));
    c.send({ v: 1, type: 'authorize', id: 'renew', payload: { token: t.accessToken } });
    expect(await c.next()).toEqual({ v: 1, type: 'authorized', id: 'renew', payload: { playerId: t.player.id } });
    await sleep(exp * 1000 - Date.now() + 400); // wall time: a token's expiry is the wall clock's, as for every verifier of it
    expect(c.closed).toBeNull();
    c.send({ v: 1, type: 'ping', id: 'after' });
    expect(await c.next()).toEqual({ v: 1, type: 'pong', id: 'after', payload: {} });
  });
});

describe('shutdown and metrics', () => {
  test('metrics count connections, frames by type and closes by code', async () => {
    const rt = await startRealtime(h, { tickMs: 50 });
    try {
      const t = await tokenFor();
      const c = await track(Client.authorized(rt.url, t.accessToken));
      c.send({ v: 1, type: 'ping' });
      await c.next();
      c.sendRaw('garbage');
      await c.next();
      const bad = await track(Client.open(rt.url));
      bad.send({ v: 1, type: 'authorize', payload: { token: 'nope' } });
      await bad.waitClosed();
      // The client saw the close; the server counts it once its side of the socket is closed too.
      let text = '';
      await eventually(async () => /hearth_realtime_closes_total\{code="4401"\} 1\n/.test((text = await (await fetch(rt.metricsUrl!)).text())), 2000, 20);
      expect(text).toMatch(/hearth_realtime_connections\{state="authorized"\} 1\n/);
      expect(text).toMatch(/hearth_realtime_connections\{state="pending"\} 0\n/);
      expect(text).toMatch(/hearth_realtime_frames_in_total\{type="authorize"\} 2\n/);
      expect(text).toMatch(/hearth_realtime_frames_in_total\{type="ping"\} 1\n/);
      expect(text).toMatch(/hearth_realtime_frames_in_total\{type="invalid"\} 1\n/);
      expect(text).toMatch(/hearth_realtime_frames_out_total\{type="authorized"\} 1\n/);
      expect(text).toMatch(/hearth_realtime_frames_out_total\{type="pong"\} 1\n/);
      expect(text).toMatch(/hearth_realtime_frames_out_total\{type="error"\} 2\n/);
      expect(text).toMatch(/hearth_realtime_closes_total\{code="4401"\} 1\n/);
    } finally {
      await rt.stop();
    }
  });

  test('shutting down drains: every socket is closed with 1012 (service restart: reconnect elsewhere) and no new one is taken', async () => {
    const rt = await startRealtime(h, { tickMs: 50 });
    const t = await tokenFor();
    const a = await track(Client.authorized(rt.url, t.accessToken));
    const pending = await track(Client.open(rt.url));
    await rt.stop();
    expect(await a.waitClosed()).toEqual({ code: 1012, reason: 'service-restart' });
    expect(await pending.waitClosed()).toEqual({ code: 1012, reason: 'service-restart' });
    await expect(Client.open(rt.url)).rejects.toThrow();
  });
});

test('attached to the API’s own server (hearth dev): the socket is at the URL GET /realtime answers', async () => {
  const realtime = new RealtimeServer({ core: h.core, tickMs: 50 });
  await realtime.start();
  realtime.attach(h.api.server);
  try {
    const t = await tokenFor();
    const info = await call(h.base, 'GET', '/realtime', { token: t.accessToken });
    expect(info.status).toBe(200);
    expect(info.body.url).toBe(`${h.api.url.replace('http://', 'ws://')}/v1/realtime/socket`);
    const c = await track(Client.authorized(info.body.url, t.accessToken));
    const made = await call(h.base, 'POST', '/sessions', { token: t.accessToken, body: { gameMode: 'g', map: 'm' } });
    expect(await c.next()).toEqual({ v: 1, type: 'session', payload: { session: made.body } });
    // The HTTP API goes on serving on the same port, and other upgrade paths are refused.
    expect((await call(h.base, 'GET', '/players/me', { token: t.accessToken })).status).toBe(200);
    await expect(Client.open(`${h.api.url.replace('http://', 'ws://')}/v1/other`)).rejects.toThrow(/404/);
    await realtime.close();
    expect(await c.waitClosed()).toEqual({ code: 1012, reason: 'service-restart' });
  } finally {
    await realtime.close();
    realtime.detach(h.api.server);
  }
});

describe('heartbeats in slices', () => {
  test('with a heartbeat of 2 s the sockets are pinged in two slices, each one every 2 s', async () => {
    const rt = await startRealtime(h, { heartbeatMs: 2000, tickMs: 50 });
    try {
      const t = await tokenFor();
      const silent = await Promise.all([0, 1].map(() => track(Client.open(rt.url, { autoPong: false }))));
      const answering = await Promise.all([0, 1].map(() => track(Client.authorized(rt.url, t.accessToken))));
      for (const c of silent) {
        c.send({ v: 1, type: 'authorize', payload: { token: t.accessToken } });
        expect((await c.next()).type).toBe('authorized');
      }
      // Each is pinged within one heartbeat and dropped by the next ping of its slice.
      for (const c of silent) expect((await c.waitClosed(4500)).code).toBe(1006);
      for (const c of answering) {
        c.send({ v: 1, type: 'ping' });
        expect((await c.next()).type).toBe('pong');
      }
    } finally {
      await rt.stop();
    }
  });
});
