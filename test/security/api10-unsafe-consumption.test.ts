/**
 * OWASP API Security Top 10 (2023), API10 "Unsafe consumption of APIs", for the identity provider's
 * key set (POST /auth/idp; its URL is the Project manifest's `identityProvider.jwksUri`). The other
 * outside service Hearth reads, the game store's web API, is attacked in commerce.test.ts beside this
 * file (docs/reliability.md). A key set that is malformed, oversized, slow, stalled
 * or redirected is refused cleanly: the sign-in answers 503 `unavailable` within the fetch deadline,
 * nothing is made, and the API serves on with bounded memory. test/api/idp.test.ts holds the good
 * provider, a dead one and one answering 500.
 */
import type http from 'node:http';
import { generateKeyPair, type KeyLike } from 'jose';
import { KEY_SET_FETCH } from '@hearth/core/auth';
import { type Harness, startHarness } from '../support/harness';
import { call, expectError } from '../support/http';
import { idpSettings, publicJwk, signIdToken } from '../support/idp';
import { environment, project, standardManifests } from '../support/manifests';
import { reportFigure } from '../support/figures';
import { closeServer, listenOnLoopback } from '../support/loopback-server';

jest.setTimeout(60_000);

let h: Harness;
let key: KeyLike;
let goodKeys: unknown;
const servers: http.Server[] = [];
const timers = new Set<NodeJS.Timeout>();

/** Each misbehaving provider: how it answers GET of its key set. */
const PROVIDERS: Record<string, (res: http.ServerResponse) => void> = {
  'not-json': (res) => res.writeHead(200, { 'Content-Type': 'application/json' }).end('<html>login</html>'),
  'no-keys': (res) => res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"keys":"all of them"}'),
  // 20 MB declared: refused on the header.
  'huge-declared': (res) => {
    res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': 20 * 1024 * 1024 });
    res.write('{"keys":[');
    const t = setTimeout(() => res.destroy(), 3_000);
    timers.add(t);
  },
  // 20 MB chunked, no length: refused while it streams.
  'huge-streamed': (res) => {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.write('{"keys":[],"pad":"');
    const piece = 'x'.repeat(64 * 1024);
    let sent = 0;
    const more = () => {
      while (sent < 20 * 1024 * 1024 && !res.destroyed) {
        sent += piece.length;
        if (!res.write(piece)) return void res.once('drain', more);
      }
      if (!res.destroyed) res.end('"}');
    };
    more();
  },
  // The head at once, then nothing.
  stalled: (res) => {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.write('{"keys":[');
  },
  // The head at once, then a byte every 200 ms forever (each byte resets an idle timer).
  trickle: (res) => {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    const t = setInterval(() => (res.destroyed ? clearInterval(t) : res.write(' ')), 200);
    timers.add(t);
  },
  'redirect-to-good': (res) => res.writeHead(302, { Location: goodUrl }).end(),
};
let goodUrl = '';

async function listen(handler: (res: http.ServerResponse) => void): Promise<string> {
  const { server, url } = await listenOnLoopback((_req, res) => handler(res));
  servers.push(server);
  return `${url}/jwks`;
}

beforeAll(async () => {
  const pair = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
  key = pair.privateKey;
  goodKeys = { keys: [await publicJwk(pair.publicKey, 'ed-1', 'EdDSA')] };
  goodUrl = await listen((res) => res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(goodKeys)));
  const manifests = [...standardManifests()];
  const add = (name: string, jwksUri: string) => manifests.push(project(name, { identityProvider: idpSettings(jwksUri) }), environment(`${name}-live`, name));
  add('good', goodUrl);
  for (const [name, handler] of Object.entries(PROVIDERS)) add(name, await listen(handler));
  h = await startHarness({ manifests });
});
afterAll(async () => {
  for (const t of timers) clearInterval(t);
  await h.close();
  for (const server of servers) await closeServer(server);
});

const idToken = (sub: string) => signIdToken(key, { sub });

const signInIdp = async (appKey: string, sub: string) => call(h.base, 'POST', '/auth/idp', { body: { appKey, idToken: await idToken(sub) } });

test('the control: a well-behaved provider signs the player in', async () => {
  expect((await signInIdp('good-live', 'api10-good')).status).toBe(201);
});

test.each(Object.keys(PROVIDERS))('a key set that is %s: 503 unavailable within the fetch deadline, no player made', async (name) => {
  const rssBefore = process.memoryUsage().rss;
  const started = Date.now();
  const reply = await signInIdp(`${name}-live`, `api10-${name}`);
  const tookMs = Date.now() - started;
  expectError(reply, 503, 'unavailable');
  expect(reply.body.message).toBe('The identity provider could not be reached.');
  expect(tookMs).toBeLessThan(KEY_SET_FETCH.timeoutMs + 2_000);
  expect(
    await h
      .db('player_identities')
      .where({ provider: 'idp', subject: `api10-${name}` })
      .first(),
  ).toBeUndefined();
  // The body was never held whole: memory grew by far less than the 20 MB a provider offered.
  expect(process.memoryUsage().rss - rssBefore).toBeLessThan(64 * 1024 * 1024);
  reportFigure(`api10: ${name} → ${reply.status} ${reply.body.error} in ${tookMs} ms`);
});

test('a key set whose only key is of no known type: 401 (no key verifies the token, as after a rotation), no player made', async () => {
  const url = await listen((res) => res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"keys":[{"kty":"nope","kid":"ed-1"}]}'));
  await h.apply([project('bad-keys', { identityProvider: idpSettings(url) }), environment('bad-keys-live', 'bad-keys')]);
  expectError(await signInIdp('bad-keys-live', 'api10-bad-keys'), 401, 'unauthorized');
  expect(await h.db('player_identities').where({ provider: 'idp', subject: 'api10-bad-keys' }).first()).toBeUndefined();
});

test('five slow providers at once do not slow the rest of the API', async () => {
  const slow = ['stalled', 'trickle', 'stalled', 'trickle', 'huge-declared'].map((name, i) => signInIdp(`${name}-live`, `api10-many-${i}`));
  const started = Date.now();
  const flags = await call(h.base, 'GET', '/flags', { token: h.serverKeys['alpha-live-key'] });
  expect(flags.status).toBe(200);
  expect(Date.now() - started).toBeLessThan(1_000);
  for (const reply of await Promise.all(slow)) expectError(reply, 503, 'unavailable');
  expect((await signInIdp('good-live', 'api10-good')).status).toBe(200);
});
