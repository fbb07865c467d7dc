/**
 * Player tokens (spec §4 POST /auth/server and GET /.well-known/jwks.json, §5): issuing, offline
 * verification exactly as §5.6 describes it, refusal of every forged or misused token, the
 * environment a token acts in, wrong kinds of credential, and signing-key rotation across processes.
 */
import { createHmac, createPublicKey, generateKeyPairSync, type KeyObject, verify as cryptoVerify } from 'node:crypto';
import { SignJWT } from 'jose';
import { loadSigningKeys, rotateSigningKey, TOKEN_AUDIENCE } from '@hearth/core/auth';
import { type ApiInstance, type Harness, startHarness } from '../support/harness';
import { call, expectError, signIn } from '../support/http';
import { eventually } from '../support/wait';

let h: Harness;
let liveKey: string;
beforeAll(async () => {
  h = await startHarness();
  liveKey = h.serverKeys['alpha-live-key'];
});
afterAll(async () => {
  await h.close();
});

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
const decodePart = (token: string, i: 0 | 1) => JSON.parse(Buffer.from(token.split('.')[i], 'base64url').toString('utf8'));
const nowSeconds = () => Math.floor(Date.now() / 1000);

interface Jwk {
  kty: string;
  crv: string;
  x: string;
  kid: string;
  alg: string;
  use: string;
}

/**
 * Spec §5.6 (b), with node:crypto only: pick the key the header's kid names, verify the Ed25519
 * signature over the first two parts as sent, then check the claims. Answers the player id.
 */
function verifyOffline(token: string, jwks: { keys: Jwk[] }, appKey: string): string {
  const parts = token.split('.');
  expect(parts).toHaveLength(3);
  const header = decodePart(token, 0);
  expect(header.alg).toBe('EdDSA');
  const jwk = jwks.keys.find((k) => k.kid === header.kid);
  if (!jwk) throw new Error(`no key ${header.kid} in the set`);
  expect(Buffer.from(jwk.x, 'base64url')).toHaveLength(32);
  const signature = Buffer.from(parts[2], 'base64url');
  expect(signature).toHaveLength(64);
  const publicKey = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: jwk.x }, format: 'jwk' });
  expect(cryptoVerify(null, Buffer.from(`${parts[0]}.${parts[1]}`, 'ascii'), publicKey, signature)).toBe(true);
  const claims = decodePart(token, 1);
  expect(claims.aud).toBe(TOKEN_AUDIENCE);
  expect(claims.type).toBe('access');
  expect(claims.game).toBe(appKey);
  expect(claims.exp).toBeGreaterThan(nowSeconds() - 5);
  return claims.sub;
}

async function jwksOf(base: string): Promise<{ keys: Jwk[] }> {
  const reply = await call(base, 'GET', '/.well-known/jwks.json');
  expect(reply.status).toBe(200);
  return reply.body;
}

/** A token signed by the service's own active key (loaded as the service does), with any claims. */
async function signedByUs(claims: Record<string, unknown>, header: Record<string, unknown> = {}): Promise<string> {
  const [active] = await loadSigningKeys(h.db, h.masterKey);
  return new SignJWT(claims).setProtectedHeader({ alg: 'EdDSA', kid: active.kid, typ: 'JWT', ...header }).sign(active.privateKey);
}

function accessClaims(playerId: string, appKey = 'alpha-live', overrides: Record<string, unknown> = {}) {
  const iat = nowSeconds();
  return {
    type: 'access',
    game: appKey,
    aud: TOKEN_AUDIENCE,
    sub: playerId,
    iat,
    exp: iat + 3600,
    jti: `t-${Math.random().toString(36).slice(2)}`,
    ...overrides,
  };
}

const me = (base: string, token: string) => call(base, 'GET', '/players/me', { token });

describe('POST /auth/server', () => {
  test('201 for a new subject, 200 afterwards, in the PlatformTokens shape', async () => {
    const first = await call(h.base, 'POST', '/auth/server', { token: liveKey, body: { subject: 'tok-1' } });
    expect(first.status).toBe(201);
    expect(Object.keys(first.body).sort()).toEqual(['accessToken', 'expiresIn', 'player', 'refreshToken']);
    expect(first.body.expiresIn).toBe(3600);
    expect(typeof first.body.accessToken).toBe('string');
    expect(typeof first.body.refreshToken).toBe('string');
    expect(first.body.accessToken).not.toBe(first.body.refreshToken);
    expect(Object.keys(first.body.player).sort()).toEqual(['createdAt', 'displayName', 'id']);
    expect(first.body.player.displayName).toBeNull();
    expect(first.body.player.id.length).toBeGreaterThanOrEqual(1);
    expect(first.body.player.id.length).toBeLessThanOrEqual(64);
    expect(new Date(first.body.player.createdAt).toISOString()).toBe(first.body.player.createdAt);

    const second = await call(h.base, 'POST', '/auth/server', { token: liveKey, body: { subject: 'tok-1' } });
    expect(second.status).toBe(200);
    expect(second.body.player).toEqual(first.body.player);
    expect(second.body.accessToken).not.toBe(first.body.accessToken);
    expect(second.body.refreshToken).not.toBe(first.body.refreshToken);
  });

  test('displayName is trimmed and replaces the name when given; left out, the name stays', async () => {
    const made = await call(h.base, 'POST', '/auth/server', { token: liveKey, body: { subject: 'tok-name', displayName: '  Ann  ' } });
    expect(made.status).toBe(201);
    expect(made.body.player.displayName).toBe('Ann');
    const kept = await signIn(h.base, liveKey, 'tok-name');
    expect(kept.player.displayName).toBe('Ann');
    const renamed = await signIn(h.base, liveKey, 'tok-name', '\tBob ');
    expect(renamed.player.displayName).toBe('Bob');
    expect((await call(h.base, 'GET', `/players/${made.body.player.id}`, { token: liveKey })).body.displayName).toBe('Bob');
  });

  test('body rules: each refusal names its field and makes nobody', async () => {
    const before = await h.db('players').count({ n: '*' });
    const cases: Array<[unknown, string]> = [
      [{}, 'body.subject'],
      [{ subject: '' }, 'body.subject'],
      [{ subject: 's'.repeat(201) }, 'body.subject'],
      [{ subject: 42 }, 'body.subject'],
      [{ subject: 'tok-body', displayName: '   ' }, 'body.displayName'],
      [{ subject: 'tok-body', displayName: 'n'.repeat(41) }, 'body.displayName'],
      [{ subject: 'tok-body', extra: true }, 'body.extra'],
    ];
    for (const [body, field] of cases) {
      expectError(await call(h.base, 'POST', '/auth/server', { token: liveKey, body }), 400, 'invalid-request', field);
    }
    expectError(
      await call(h.base, 'POST', '/auth/server', { token: liveKey, rawBody: '{"subject":', headers: { 'Content-Type': 'application/json' } }),
      400,
      'invalid-request',
      'body',
    );
    expect(await h.db('players').count({ n: '*' })).toEqual(before);
    // The longest allowed values are taken.
    expect(
      (await call(h.base, 'POST', '/auth/server', { token: liveKey, body: { subject: 's'.repeat(200), displayName: ` ${'n'.repeat(40)} ` } })).status,
    ).toBe(201);
  });

  test('a player token on a server route → 403 forbidden, and nothing is made', async () => {
    const tokens = await signIn(h.base, liveKey, 'tok-kind');
    expectError(await call(h.base, 'POST', '/auth/server', { token: tokens.accessToken, body: { subject: 'tok-kind-2' } }), 403, 'forbidden');
    expectError(await call(h.base, 'DELETE', '/players/me', { token: tokens.accessToken }), 403, 'forbidden');
    expect(await h.db('player_identities').where({ subject: 'tok-kind-2' }).first()).toBeUndefined();
    expect((await me(h.base, tokens.accessToken)).status).toBe(200);
  });

  test('a project awaiting review refuses the sign-in with project-not-approved', async () => {
    expectError(
      await call(h.base, 'POST', '/auth/server', { token: h.serverKeys['pending-live-key'], body: { subject: 'tok-pending' } }),
      403,
      'project-not-approved',
    );
    expect(await h.db('player_identities').where({ subject: 'tok-pending' }).first()).toBeUndefined();
  });
});

describe('offline verification (spec §5.6)', () => {
  test('the key set and an access token verify with node:crypto alone; claims are as the spec says', async () => {
    const jwks = await jwksOf(h.base);
    expect(jwks.keys.length).toBeGreaterThanOrEqual(1);
    for (const key of jwks.keys) {
      expect(Object.keys(key).sort()).toEqual(['alg', 'crv', 'kid', 'kty', 'use', 'x']);
      expect(key).toMatchObject({ kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA', use: 'sig' });
      expect(key.kid.length).toBeGreaterThan(0);
    }
    const before = nowSeconds();
    const tokens = await signIn(h.base, liveKey, 'tok-offline');
    expect(verifyOffline(tokens.accessToken, jwks, 'alpha-live')).toBe(tokens.player.id);

    const header = decodePart(tokens.accessToken, 0);
    expect(header).toMatchObject({ alg: 'EdDSA', kid: jwks.keys[0].kid });
    const access = decodePart(tokens.accessToken, 1);
    expect(access.iat).toBeGreaterThanOrEqual(before);
    expect(access.exp - access.iat).toBe(3600);
    expect(typeof access.jti).toBe('string');
    const refresh = decodePart(tokens.refreshToken, 1);
    expect(refresh).toMatchObject({ aud: TOKEN_AUDIENCE, type: 'refresh', game: 'alpha-live', sub: tokens.player.id });
    expect(refresh.exp - refresh.iat).toBe(30 * 24 * 3600);
    expect(refresh.jti).not.toBe(access.jti);

    // A flipped bit in the payload breaks the signature, so the offline check fails.
    const parts = tokens.accessToken.split('.');
    const tampered = [parts[0], b64({ ...access, sub: 'someone-else' }), parts[2]].join('.');
    expect(() => verifyOffline(tampered, jwks, 'alpha-live')).toThrow();
    expectError(await me(h.base, tampered), 401, 'unauthorized');
  });

  test('the key set is public and needs no credential', async () => {
    const reply = await call(h.base, 'GET', '/.well-known/jwks.json', { token: 'not-a-credential' });
    expect(reply.status).toBe(200);
    expect(Array.isArray(reply.body.keys)).toBe(true);
  });
});

describe('tokens that are not good access tokens → 401 unauthorized', () => {
  let playerId: string;
  let refreshToken: string;
  let accessToken: string;
  beforeAll(async () => {
    const tokens = await signIn(h.base, liveKey, 'tok-forged');
    playerId = tokens.player.id;
    refreshToken = tokens.refreshToken;
    accessToken = tokens.accessToken;
  });

  test('a token we sign with good claims works (the forgeries below differ from it in one thing only)', async () => {
    const reply = await me(h.base, await signedByUs(accessClaims(playerId)));
    expect(reply.status).toBe(200);
    expect(reply.body.id).toBe(playerId);
  });

  test('a refresh token used as an access token', async () => {
    expectError(await me(h.base, refreshToken), 401, 'unauthorized');
    expectError(await call(h.base, 'PATCH', '/players/me', { token: refreshToken, body: { displayName: 'X' } }), 401, 'unauthorized');
  });

  test('alg none', async () => {
    const [active] = await loadSigningKeys(h.db, h.masterKey);
    const unsigned = `${b64({ alg: 'none', kid: active.kid, typ: 'JWT' })}.${b64(accessClaims(playerId))}.`;
    expectError(await me(h.base, unsigned), 401, 'unauthorized');
    // The real token's header and payload with its signature dropped.
    expectError(await me(h.base, accessToken.split('.').slice(0, 2).join('.') + '.'), 401, 'unauthorized');
  });

  test('HS256, keyed with the published public key', async () => {
    const jwks = await jwksOf(h.base);
    const head = b64({ alg: 'HS256', kid: jwks.keys[0].kid, typ: 'JWT' });
    const body = b64(accessClaims(playerId));
    for (const secret of [Buffer.from(jwks.keys[0].x, 'base64url'), Buffer.from(jwks.keys[0].x)]) {
      const mac = createHmac('sha256', secret).update(`${head}.${body}`).digest('base64url');
      expectError(await me(h.base, `${head}.${body}.${mac}`), 401, 'unauthorized');
    }
  });

  test('signed by another Ed25519 key under our kid', async () => {
    const [active] = await loadSigningKeys(h.db, h.masterKey);
    const { privateKey } = generateKeyPairSync('ed25519');
    const forged = await new SignJWT(accessClaims(playerId)).setProtectedHeader({ alg: 'EdDSA', kid: active.kid, typ: 'JWT' }).sign(privateKey);
    expectError(await me(h.base, forged), 401, 'unauthorized');
  });

  test('an unknown kid, or none', async () => {
    const [active] = await loadSigningKeys(h.db, h.masterKey);
    const claims = accessClaims(playerId);
    const signWith = (header: Record<string, unknown>) =>
      new SignJWT(claims).setProtectedHeader({ alg: 'EdDSA', ...header }).sign(active.privateKey as KeyObject);
    expectError(await me(h.base, await signWith({ kid: 'no-such-kid' })), 401, 'unauthorized');
    expectError(await me(h.base, await signWith({})), 401, 'unauthorized');
  });

  test.each([
    ['a wrong aud', { aud: 'somebody-else' }],
    ['no aud', { aud: undefined }],
    ['expired a minute ago', { iat: nowSeconds() - 3660, exp: nowSeconds() - 60 }],
    ['no exp', { exp: undefined }],
    ['type missing', { type: undefined }],
    ['type other than access', { type: 'admin' }],
    ['an unknown game', { game: 'no-such-app' }],
    ['the game of another environment than the player', { game: 'alpha-test' }],
    ['an unknown player', { sub: 'no-such-player' }],
  ])('signed by our key but with %s', async (_label, overrides) => {
    const claims: Record<string, unknown> = accessClaims(playerId, 'alpha-live', overrides);
    for (const k of Object.keys(claims)) if (claims[k] === undefined) delete claims[k];
    expectError(await me(h.base, await signedByUs(claims)), 401, 'unauthorized');
  });

  test('garbage', async () => {
    for (const garbage of ['x', 'a.b.c', `${accessToken}x`, accessToken.replace(/\./g, '')]) {
      expectError(await me(h.base, garbage), 401, 'unauthorized');
    }
  });
});

describe('the credential decides the environment', () => {
  test('a token of alpha-test acts in alpha-test: it is its own player there, and alpha-live players are not-found', async () => {
    const live = await signIn(h.base, liveKey, 'tok-env');
    const inTest = await signIn(h.base, h.serverKeys['alpha-test-key'], 'tok-env', 'Tess');
    expect(inTest.player.id).not.toBe(live.player.id);
    expect(decodePart(inTest.accessToken, 1).game).toBe('alpha-test');

    const mine = await me(h.base, inTest.accessToken);
    expect(mine.status).toBe(200);
    expect(mine.body).toEqual(inTest.player);
    // A token cannot name other players at all; the alpha-test key finds no alpha-live player.
    expectError(await call(h.base, 'GET', `/players/${live.player.id}`, { token: inTest.accessToken }), 403, 'forbidden');
    expectError(await call(h.base, 'GET', `/players/${live.player.id}`, { token: h.serverKeys['alpha-test-key'] }), 404, 'not-found');
    // Renaming with the alpha-test token renames the alpha-test player only.
    expect((await call(h.base, 'PATCH', '/players/me', { token: inTest.accessToken, body: { displayName: 'Changed' } })).status).toBe(200);
    expect((await call(h.base, 'GET', `/players/${live.player.id}`, { token: liveKey })).body.displayName).toBeNull();
    // A token claiming alpha-live for the alpha-test player is refused.
    expectError(await me(h.base, await signedByUs(accessClaims(inTest.player.id, 'alpha-live'))), 401, 'unauthorized');
  });
});

describe('signing-key rotation', () => {
  let other: ApiInstance;
  beforeAll(async () => {
    other = await h.startAnotherApi();
  });

  test('old tokens keep working, new ones carry the new kid, the set lists the new key first, every process follows', async () => {
    const old = await signIn(h.base, liveKey, 'tok-rotate');
    const oldKid = decodePart(old.accessToken, 0).kid;
    expect((await jwksOf(h.base)).keys.map((k) => k.kid)).toEqual([oldKid]);

    // Rotation without any announcement: a process started afterwards signs with the new key, and the
    // processes that never heard of it reload their keys when a token names an unknown kid.
    const first = await rotateSigningKey(h.db, h.masterKey);
    expect(first.retired).toEqual([oldKid]);
    const fresh = await h.startAnotherApi();
    const newer = await signIn(fresh.base, liveKey, 'tok-rotate');
    expect(decodePart(newer.accessToken, 0).kid).toBe(first.kid);
    for (const base of [h.base, other.base]) {
      // The unknown-kid reload is spaced 5 s from the last one: allow a little more.
      await eventually(async () => (await me(base, newer.accessToken)).status === 200, 8000, 250);
    }

    // With the announcement, as `hearth signing-keys rotate` does.
    await h.core.bus.announce({ kind: 'signing-keys' });
    await eventually(async () => (await jwksOf(h.base)).keys[0]?.kid === first.kid, 2000);
    const set = await jwksOf(h.base);
    expect(set.keys.map((k) => k.kid)).toEqual([first.kid, oldKid]);
    for (const key of set.keys) expect(key).toMatchObject({ kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA', use: 'sig' });

    // Old tokens still work everywhere, online and offline.
    for (const base of [h.base, other.base, fresh.base]) expect((await me(base, old.accessToken)).status).toBe(200);
    expect(verifyOffline(old.accessToken, set, 'alpha-live')).toBe(old.player.id);
    const fromH = await signIn(h.base, liveKey, 'tok-rotate');
    expect(decodePart(fromH.accessToken, 0).kid).toBe(first.kid);
    expect(decodePart(fromH.refreshToken, 0).kid).toBe(first.kid);
    expect(verifyOffline(fromH.accessToken, set, 'alpha-live')).toBe(old.player.id);
    // The old refresh token still refreshes.
    expect((await call(other.base, 'POST', '/auth/refresh', { body: { refreshToken: old.refreshToken } })).status).toBe(200);

    // A second rotation, announced: the other process signs with the newest key within moments.
    const second = await rotateSigningKey(h.db, h.masterKey);
    await h.core.bus.announce({ kind: 'signing-keys' });
    const tookMs = await eventually(async () => (await jwksOf(other.base)).keys[0]?.kid === second.kid, 1500, 25);
    expect(tookMs).toBeLessThan(1500);
    const fromOther = await signIn(other.base, liveKey, 'tok-rotate');
    expect(decodePart(fromOther.accessToken, 0).kid).toBe(second.kid);
    expect((await me(h.base, fromOther.accessToken)).status).toBe(200);
    expect((await me(h.base, old.accessToken)).status).toBe(200);
    expect((await jwksOf(other.base)).keys.map((k) => k.kid)).toEqual([second.kid, first.kid, oldKid]);
  });
});
