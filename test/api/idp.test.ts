/**
 * POST /auth/idp (spec §4 Reference and sign-in): a player signs in with the identity provider's
 * Connect id token. The provider is a local HTTP server started here that publishes a real key set;
 * id tokens are signed with keys made here. Each test keeps well under the 120/min per-address limit.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { generateKeyPair, type KeyLike } from 'jose';
import { type Harness, startHarness } from '../support/harness';
import { call, expectError } from '../support/http';
import { idpSettings as settings, type IdTokenOptions, publicJwk, signIdToken } from '../support/idp';
import { environment, plan, project, standardManifests } from '../support/manifests';

let h: Harness;
let provider: http.Server;
let jwksUrl: string;
let jwksRequests = 0;
let edKey: KeyLike;
let rsaKey: KeyLike;
/** A port nothing listens on (a server was opened there and closed). */
let deadUrl: string;
/** A provider that answers its key set with a 500. */
let brokenProvider: http.Server;
let brokenUrl: string;

async function listen(server: http.Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

beforeAll(async () => {
  const ed = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
  const rsa = await generateKeyPair('RS256', { modulusLength: 2048 });
  edKey = ed.privateKey;
  rsaKey = rsa.privateKey;
  const keys = [await publicJwk(ed.publicKey, 'ed-1', 'EdDSA'), await publicJwk(rsa.publicKey, 'rsa-1', 'RS256')];
  provider = http.createServer((req, res) => {
    if (req.url === '/jwks') {
      jwksRequests++;
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ keys }));
    } else {
      res.writeHead(404).end();
    }
  });
  jwksUrl = `http://127.0.0.1:${await listen(provider)}/jwks`;

  const closed = http.createServer();
  deadUrl = `http://127.0.0.1:${await listen(closed)}/jwks`;
  await new Promise((r) => closed.close(r));

  brokenProvider = http.createServer((_req, res) => res.writeHead(500).end('oops'));
  brokenUrl = `http://127.0.0.1:${await listen(brokenProvider)}/jwks`;

  h = await startHarness({
    manifests: [
      ...standardManifests(),
      project('idp', { identityProvider: settings(jwksUrl) }),
      environment('idp-live', 'idp'),
      project('idp-off', { identityProvider: { ...settings(jwksUrl), enabled: false } }),
      environment('idp-off-live', 'idp-off'),
      project('idp-pending', { review: 'pending', identityProvider: settings(jwksUrl) }),
      environment('idp-pending-live', 'idp-pending'),
      project('idp-dead', { identityProvider: settings(deadUrl) }),
      environment('idp-dead-live', 'idp-dead'),
      project('idp-broken', { identityProvider: settings(brokenUrl) }),
      environment('idp-broken-live', 'idp-broken'),
      plan('one-player', { playersPerEnvironment: 1 }),
      project('idp-tiny', { plan: 'one-player', identityProvider: settings(jwksUrl) }),
      environment('idp-tiny-live', 'idp-tiny'),
    ],
  });
});
afterAll(async () => {
  await h?.close();
  await new Promise((r) => provider.close(r));
  await new Promise((r) => brokenProvider.close(r));
});

/** An id token as the provider would sign it (with the Ed25519 key unless `key` says otherwise). */
const idToken = (options: IdTokenOptions & { key?: KeyLike } = {}) => signIdToken(options.key ?? edKey, options);

const signInIdp = (appKey: string, token: string) => call(h.base, 'POST', '/auth/idp', { body: { appKey, idToken: token } });
const identity = (subject: string) => h.db('player_identities').where({ provider: 'idp', subject }).first();

describe('a good id token', () => {
  test('201 when the product user is first seen, 200 afterwards; the tokens act in the named environment', async () => {
    const fetchesBefore = jwksRequests;
    const first = await signInIdp('idp-live', await idToken({ sub: 'pu-first' }));
    expect(first.status).toBe(201);
    expect(Object.keys(first.body).sort()).toEqual(['accessToken', 'expiresIn', 'player', 'refreshToken']);
    expect(first.body.expiresIn).toBe(3600);
    expect(first.body.player.displayName).toBeNull();
    // The service fetched the provider's real key set.
    expect(jwksRequests).toBeGreaterThan(fetchesBefore);

    const second = await signInIdp('idp-live', await idToken({ sub: 'pu-first' }));
    expect(second.status).toBe(200);
    expect(second.body.player).toEqual(first.body.player);

    const me = await call(h.base, 'GET', '/players/me', { token: second.body.accessToken });
    expect(me.status).toBe(200);
    expect(me.body).toEqual(first.body.player);
    const claims = JSON.parse(Buffer.from(first.body.accessToken.split('.')[1], 'base64url').toString('utf8'));
    expect(claims).toMatchObject({ game: 'idp-live', sub: first.body.player.id, type: 'access' });
    const row = await identity('pu-first');
    expect(row.player_id).toBe(first.body.player.id);
  });

  test('an RS256 id token by the other published key signs in the same product user', async () => {
    const first = await signInIdp('idp-live', await idToken({ sub: 'pu-rsa' }));
    expect(first.status).toBe(201);
    const rsa = await signInIdp('idp-live', await idToken({ sub: 'pu-rsa', alg: 'RS256', kid: 'rsa-1', key: rsaKey }));
    expect(rsa.status).toBe(200);
    expect(rsa.body.player.id).toBe(first.body.player.id);
  });

  test('the same product user in a full environment still signs in; an unseen one is refused 409 conflict', async () => {
    expect((await signInIdp('idp-tiny-live', await idToken({ sub: 'pu-tiny-1' }))).status).toBe(201);
    expect((await signInIdp('idp-tiny-live', await idToken({ sub: 'pu-tiny-1' }))).status).toBe(200);
    const full = await signInIdp('idp-tiny-live', await idToken({ sub: 'pu-tiny-2' }));
    expect(expectError(full, 409, 'conflict').details).toEqual({ limit: 1 });
    expect(await identity('pu-tiny-2')).toBeUndefined();
  });
});

describe('id tokens that cannot be verified → 401 unauthorized, and make nobody', () => {
  const cases: Array<[string, () => Promise<string>]> = [
    ['for another deployment', () => idToken({ sub: 'pu-bad', pfdid: 'deployment-other' })],
    ['naming no deployment', () => idToken({ sub: 'pu-bad', pfdid: null })],
    ['for another audience', () => idToken({ sub: 'pu-bad', aud: 'someone-elses-client' })],
    ['from another issuer', () => idToken({ sub: 'pu-bad', iss: 'https://evil.example.test/auth' })],
    ['expired a minute ago', () => idToken({ sub: 'pu-bad', exp: Math.floor(Date.now() / 1000) - 60 })],
    ['naming no user', () => idToken({ sub: null })],
    ['naming a user id over 200 characters', () => idToken({ sub: 'u'.repeat(201) })],
    [
      'signed by another key under the published kid',
      async () => idToken({ sub: 'pu-bad', key: (await generateKeyPair('EdDSA', { crv: 'Ed25519' })).privateKey }),
    ],
    ['naming an unknown kid', () => idToken({ sub: 'pu-bad', kid: 'nobody' })],
    [
      'unsigned (alg none)',
      async () => {
        const good = (await idToken({ sub: 'pu-bad' })).split('.');
        return `${Buffer.from(JSON.stringify({ alg: 'none', kid: 'ed-1' })).toString('base64url')}.${good[1]}.`;
      },
    ],
    ['not a JWT', async () => 'not-a-jwt'],
  ];
  test.each(cases)('%s', async (_label, make) => {
    expectError(await signInIdp('idp-live', await make()), 401, 'unauthorized');
    expect(await identity('pu-bad')).toBeUndefined();
  });
});

describe('environments that do not take the sign-in', () => {
  test('no identity provider set up, or switched off → 403 provider-disabled', async () => {
    expectError(await signInIdp('alpha-live', await idToken({ sub: 'pu-env' })), 403, 'provider-disabled');
    expectError(await signInIdp('idp-off-live', await idToken({ sub: 'pu-env' })), 403, 'provider-disabled');
    expect(await identity('pu-env')).toBeUndefined();
  });

  test('an app key no environment has → 403 service-disabled', async () => {
    expectError(await signInIdp('no-such-app', await idToken({ sub: 'pu-env' })), 403, 'service-disabled');
  });

  test('a project awaiting review → 403 project-not-approved', async () => {
    expectError(await signInIdp('idp-pending-live', await idToken({ sub: 'pu-env' })), 403, 'project-not-approved');
    expect(await identity('pu-env')).toBeUndefined();
  });

  test("the provider's key set cannot be fetched → 503 unavailable", async () => {
    expectError(await signInIdp('idp-dead-live', await idToken({ sub: 'pu-down' })), 503, 'unavailable');
    expectError(await signInIdp('idp-broken-live', await idToken({ sub: 'pu-down' })), 503, 'unavailable');
    expect(await identity('pu-down')).toBeUndefined();
  });
});

describe('body rules', () => {
  test('each refusal names its field', async () => {
    const good = await idToken({ sub: 'pu-body' });
    const cases: Array<[unknown, number, string, string?]> = [
      [{ idToken: good }, 400, 'invalid-request', 'body.appKey'],
      [{ appKey: 'idp-live' }, 400, 'invalid-request', 'body.idToken'],
      [{ appKey: '', idToken: good }, 400, 'invalid-request', 'body.appKey'],
      [{ appKey: 'a'.repeat(65), idToken: good }, 400, 'invalid-request', 'body.appKey'],
      [{ appKey: 'idp-live', idToken: '' }, 400, 'invalid-request', 'body.idToken'],
      [{ appKey: 'idp-live', idToken: 'x'.repeat(8001) }, 400, 'invalid-request', 'body.idToken'],
      [{ appKey: 'idp-live', idToken: good, extra: 1 }, 400, 'invalid-request', 'body.extra'],
    ];
    for (const [body, status, code, field] of cases) {
      expectError(await call(h.base, 'POST', '/auth/idp', { body }), status, code, field);
    }
    expectError(
      await call(h.base, 'POST', '/auth/idp', {
        rawBody: JSON.stringify({ appKey: 'idp-live', idToken: 'x'.repeat(17_000) }),
        headers: { 'Content-Type': 'application/json' },
      }),
      413,
      'payload-too-large',
    );
    expect(await identity('pu-body')).toBeUndefined();
    // And the same token in a good body signs in.
    expect((await signInIdp('idp-live', good)).status).toBe(201);
  });
});
