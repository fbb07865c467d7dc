/** GET /realtime: the socket's address on the request's own host and scheme, the protocol and the plan's limits. */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { MAX_FRAME_BYTES } from '@hearth/realtime';
import { parseTrustedProxies } from '@hearth/core/net';
import { type ApiInstance, type Harness, startHarness } from '../support/harness';
import { call, expectError, signIn } from '../support/http';
import { environment, plan, project, serverKey, standardManifests, projectWithout } from '../support/manifests';

let h: Harness;
let plainApi: ApiInstance;
const LIMITS = { maxMessageBytes: 4096, messagesPerSecond: 10, messagesPerMinute: 300, maxSubscriptions: 10 };

beforeAll(async () => {
  h = await startHarness({
    trustedProxies: parseTrustedProxies('loopback'),
    manifests: [
      ...standardManifests(),
      ...projectWithout('quiet', 'sessions'),
      plan('huge', { realtime: { ...LIMITS, maxMessageBytes: 10 * 1024 * 1024 } }),
      project('huge', { plan: 'huge' }),
      environment('huge-live', 'huge'),
      serverKey('huge-live-key', 'huge-live'),
    ],
  });
  plainApi = await h.startAnotherApi(); // not behind a trusted proxy
});

afterAll(async () => {
  await h?.close();
});

test('answers the socket URL on the request’s host, protocol 1 and the plan’s limits', async () => {
  const t = await signIn(h.base, h.serverKeys['alpha-live-key'], 'info-1');
  const reply = await call(h.base, 'GET', '/realtime', { token: t.accessToken });
  expect(reply.status).toBe(200);
  const host = new URL(h.base).host;
  expect(reply.body).toEqual({ url: `ws://${host}/v1/realtime/socket`, protocol: 1, limits: LIMITS });
  expect(reply.headers.get('x-ratelimit-limit')).not.toBeNull();
  // The Host header decides, whatever address the request reached (fetch cannot set Host: node:http can).
  const named = await new Promise<any>((resolve, reject) => {
    const req = http.get(`${h.base}/realtime`, { headers: { Host: 'game.example:8080', Authorization: `Bearer ${t.accessToken}` } }, (res) => {
      let text = '';
      res.on('data', (chunk) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode, body: JSON.parse(text) }));
    });
    req.on('error', reject);
  });
  expect(named).toEqual({ status: 200, body: { url: 'ws://game.example:8080/v1/realtime/socket', protocol: 1, limits: LIMITS } });
});

test('behind the ingress: X-Forwarded-Host and X-Forwarded-Proto https give wss on the public host', async () => {
  const t = await signIn(h.base, h.serverKeys['alpha-live-key'], 'info-2');
  const reply = await call(h.base, 'GET', '/realtime', {
    token: t.accessToken,
    headers: { 'X-Forwarded-Host': 'play.example.com', 'X-Forwarded-Proto': 'https' },
  });
  expect(reply.status).toBe(200);
  expect(reply.body.url).toBe('wss://play.example.com/v1/realtime/socket');
  const chain = await call(h.base, 'GET', '/realtime', {
    token: t.accessToken,
    headers: { 'X-Forwarded-Host': 'edge.example.com, inner.local', 'X-Forwarded-Proto': 'HTTPS, http' },
  });
  expect(chain.body.url).toBe('wss://edge.example.com/v1/realtime/socket');
  const plainHttp = await call(h.base, 'GET', '/realtime', {
    token: t.accessToken,
    headers: { 'X-Forwarded-Host': 'play.example.com', 'X-Forwarded-Proto': 'http' },
  });
  expect(plainHttp.body.url).toBe('ws://play.example.com/v1/realtime/socket');
});

test('an API not behind a trusted proxy ignores X-Forwarded-*', async () => {
  const t = await signIn(plainApi.base, h.serverKeys['alpha-live-key'], 'info-3');
  const reply = await call(plainApi.base, 'GET', '/realtime', {
    token: t.accessToken,
    headers: { 'X-Forwarded-Host': 'evil.example', 'X-Forwarded-Proto': 'https' },
  });
  expect(reply.body.url).toBe(`ws://${new URL(plainApi.base).host}/v1/realtime/socket`);
});

test('a plan’s maxMessageBytes above the server’s frame ceiling is reported as the ceiling', async () => {
  const t = await signIn(h.base, h.serverKeys['huge-live-key'], 'info-4');
  const reply = await call(h.base, 'GET', '/realtime', { token: t.accessToken });
  expect(reply.body.limits).toEqual({ ...LIMITS, maxMessageBytes: MAX_FRAME_BYTES });
});

test('refusals: no or a bad credential, a refresh token, a server key, sessions off, project not approved, a query', async () => {
  const t = await signIn(h.base, h.serverKeys['alpha-live-key'], 'info-5');
  expectError(await call(h.base, 'GET', '/realtime'), 401, 'unauthorized');
  expectError(await call(h.base, 'GET', '/realtime', { token: 'nope' }), 401, 'unauthorized');
  expectError(await call(h.base, 'GET', '/realtime', { token: t.refreshToken }), 401, 'unauthorized');
  expectError(await call(h.base, 'GET', '/realtime', { token: h.serverKeys['alpha-live-key'] }), 403, 'forbidden');
  expectError(await call(h.base, 'GET', '/realtime?x=1', { token: t.accessToken }), 400, 'invalid-request', 'query.x');

  const quiet = await signIn(h.base, h.serverKeys['quiet-live-key'], 'info-6');
  expectError(await call(h.base, 'GET', '/realtime', { token: quiet.accessToken }), 403, 'service-disabled');

  // A player of a project awaiting review (sign-in there is refused, so the token is minted directly).
  const env = await h.db('environments').where({ app_key: 'pending-live' }).first('id');
  const playerId = `p${randomBytes(8).toString('hex')}`;
  await h.db('players').insert({ id: playerId, environment_id: env.id, display_name: null });
  const pending = await h.core.tokens.issue(playerId, 'pending-live');
  expectError(await call(h.base, 'GET', '/realtime', { token: pending.accessToken }), 403, 'project-not-approved');

  expectError(await call(h.base, 'POST', '/realtime', { token: t.accessToken, body: {} }), 404, 'not-found');
});

test('the route is in the OpenAPI document', async () => {
  const doc = (await call(h.base, 'GET', '/openapi.json')).body;
  const op = doc.paths['/realtime']?.get;
  expect(op?.operationId).toBe('getRealtime');
  expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['200', '401', '403', '429']));
});
