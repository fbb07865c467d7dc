/**
 * A browser page's socket (docs/realtime.md "Browsers"): a browser sends the page's Origin with the
 * upgrade and applies no CORS to sockets, so the server checks it. An origin no environment allows is
 * refused 403 before any socket is made; one allowed elsewhere in the deployment but not in the
 * token's environment is refused at authorize (error forbidden, then 4401). No Origin (a native client)
 * is not affected.
 */
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import type { AnyManifest } from '@hearth/core/manifests';
import { type Harness, startHarness } from '../support/harness';
import { signIn } from '../support/http';
import { environment, standardManifests } from '../support/manifests';
import { Client, type RealtimeInstance, startRealtime } from './support';

const GAME = 'https://game.example.com';
const TEST_GAME = 'https://test.game.example.com';

function withOrigins(name: string, projectName: string, allowedOrigins: string[]): AnyManifest {
  const doc = environment(name, projectName) as AnyManifest & { spec: Record<string, unknown> };
  return { ...doc, spec: { ...doc.spec, cors: { allowedOrigins } } } as AnyManifest;
}

let h: Harness;
let rt: RealtimeInstance;
let token: string;
const clients: Client[] = [];

beforeAll(async () => {
  h = await startHarness({ manifests: [...standardManifests(), withOrigins('alpha-live', 'alpha', [GAME]), withOrigins('alpha-test', 'alpha', [TEST_GAME])] });
  rt = await startRealtime(h);
  await rt.core.origins.settled();
  token = (await signIn(h.base, h.serverKeys['alpha-live-key'], 'origin-player')).accessToken;
});

afterAll(async () => {
  for (const c of clients) c.close();
  await rt?.stop();
  await h?.close();
});

async function open(origin?: string): Promise<Client> {
  const c = await Client.open(rt.url, origin === undefined ? {} : { origin });
  clients.push(c);
  return c;
}

async function authorize(c: Client): Promise<{ type: string; payload?: any }> {
  c.send({ v: 1, type: 'authorize', id: 'auth', payload: { token } });
  return c.next();
}

/** The upgrade's answer when it is not 101: status and body. */
function upgradeWith(origin: string): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: any }> {
  return new Promise((resolve, reject) => {
    const req = http.get(rt.url.replace('ws://', 'http://'), {
      headers: {
        Connection: 'Upgrade',
        Upgrade: 'websocket',
        'Sec-WebSocket-Version': '13',
        'Sec-WebSocket-Key': randomBytes(16).toString('base64'),
        Origin: origin,
      },
    });
    req.on('upgrade', (res, socket) => {
      socket.destroy();
      resolve({ status: res.statusCode!, headers: res.headers, body: null });
    });
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: text ? JSON.parse(text) : null }));
    });
    req.on('error', reject);
  });
}

test('a native client (no Origin) opens and authorizes as before', async () => {
  expect((await authorize(await open())).type).toBe('authorized');
});

test("a page of the token's environment opens and authorizes", async () => {
  expect((await authorize(await open(GAME))).type).toBe('authorized');
});

test('a page no environment allows is refused 403 forbidden before any socket, with X-RateLimit-*', async () => {
  for (const origin of [
    'https://evil.example',
    'null',
    `${GAME}.evil.test`,
    'https://evilgame.example.com',
    'http://game.example.com',
    `${GAME}:8443`,
    `${GAME}/`,
  ]) {
    const answer = await upgradeWith(origin);
    expect({ origin, status: answer.status }).toEqual({ origin, status: 403 });
    expect(answer.body).toEqual({ error: 'forbidden', message: expect.any(String) });
    expect(answer.headers['x-ratelimit-limit']).toBe('600');
  }
  expect((await upgradeWith(GAME)).status).toBe(101);
});

test('a page of another environment opens, and is refused at authorize with a token of this one', async () => {
  const c = await open(TEST_GAME);
  const frame = await authorize(c);
  expect(frame).toEqual(expect.objectContaining({ type: 'error', payload: expect.objectContaining({ error: 'forbidden' }) }));
  expect(await c.waitClosed()).toEqual({ code: 4401, reason: 'forbidden' });
});
