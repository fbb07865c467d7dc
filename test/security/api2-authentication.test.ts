/**
 * OWASP API2:2023, broken authentication: forged, stale and misused credentials, each sent to EVERY
 * route of the table that takes a credential (walked, so a new route is attacked too), each refused
 * 401 `unauthorized` (spec §4 "Credentials" 2: a missing, malformed, unknown, revoked or expired
 * credential, a refresh token used as an access token, a player signed out everywhere).
 *
 * Forged with jose. What the area tests already hold is not repeated in depth here, only sent to
 * every route: test/api/tokens.test.ts (alg none, HS256 keyed with the public key, another key under
 * our kid, unknown kid, wrong aud, expired, claims of another environment, garbage),
 * test/api/refresh.test.ts (refresh replay, a deleted player's refresh, sign-out on every process),
 * test/api/server-keys.test.ts (malformed, unknown and revoked keys, keys of another environment).
 * New here: `jku`, `x5u` and `jwk` headers (refused, and never fetched: a listener on 127.0.0.1
 * counts requests), `crit`, `nbf` and `iat` in the future, a lifetime longer than we issue, kid
 * injection, tampered and truncated signatures, a deleted player's access token. And the licence
 * tokens a plugin checks offline: one obtained with another organisation's licence key, for the same
 * product name and the victim's machine, fails the check docs/licence.md gives a plugin.
 */
import { generateKeyPairSync, createHmac, sign as cryptoSign, type KeyObject } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT, createLocalJWKSet, exportJWK, type JWK } from 'jose';
import { loadSigningKeys, mintServerKey, revokeServerKey, TOKEN_AUDIENCE } from '@hearth/core/auth';
import { mintLicenceKey, revokeLicenceKey } from '@hearth/core/licence';
import { organisationNamed } from '@hearth/core/tenancy';
import { NAMESPACE } from '../support/manifests';
import type { AnyRoute } from '@hearth/api';
import { call, expectError } from '../support/http';
import { eventually } from '../support/wait';
import { verifyAsPlugin } from '../support/licence';
import { type Actor, LICENCE_PRODUCTS, ROUTES, type World, routeName, startWorld } from './world';
import { reportFigure } from '../support/figures';

jest.setTimeout(60_000);

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
const now = () => Math.floor(Date.now() / 1000);

let w: World;
let owner: Actor;
/** Every request the API makes to this listener is a fetch of a URL a token named: there must be none. */
let listener: http.Server;
const fetched: string[] = [];
let elsewhere: string;
const attacker = generateKeyPairSync('ed25519');
let attackerJwk: JWK;
let forgeries: Array<[string, string]> = [];
let ran = 0;

function claims(playerId: string, overrides: Record<string, unknown> = {}) {
  const iat = now();
  const c: Record<string, unknown> = {
    type: 'access',
    game: 'alpha-live',
    aud: TOKEN_AUDIENCE,
    sub: playerId,
    iat,
    exp: iat + 3600,
    jti: `sec-${Math.random().toString(36).slice(2)}`,
    ...overrides,
  };
  for (const k of Object.keys(c)) if (c[k] === undefined) delete c[k];
  return c;
}

async function ourKey(): Promise<{ kid: string; privateKey: KeyObject }> {
  const [active] = await loadSigningKeys(w.h.db, w.h.masterKey);
  return { kid: active.kid, privateKey: active.privateKey as KeyObject };
}

const signed = (c: Record<string, unknown>, header: Record<string, unknown>, key: KeyObject) =>
  new SignJWT(c).setProtectedHeader({ alg: 'EdDSA', typ: 'JWT', ...header } as { alg: string }).sign(key);

/** Signs by hand (Ed25519 over the two parts as sent), for headers jose will not put its name to (`crit`). */
const signedRaw = (c: Record<string, unknown>, header: Record<string, unknown>, key: KeyObject) => {
  const input = `${b64({ alg: 'EdDSA', typ: 'JWT', ...header })}.${b64(c)}`;
  return `${input}.${cryptoSign(null, Buffer.from(input), key).toString('base64url')}`;
};

beforeAll(async () => {
  w = await startWorld();
  owner = await w.newActor('alpha-live', 'token-owner');
  attackerJwk = await exportJWK(attacker.publicKey);
  listener = http.createServer((req, res) => {
    fetched.push(`${req.method} ${req.url}`);
    res.setHeader('Content-Type', 'application/json');
    res.end(JSON.stringify({ keys: [{ ...attackerJwk, kid: 'attacker', alg: 'EdDSA', use: 'sig' }] }));
  });
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  elsewhere = `http://127.0.0.1:${(listener.address() as AddressInfo).port}`;

  const ours = await ourKey();
  const good = await signed(claims(owner.id), { kid: ours.kid }, ours.privateKey);
  const [head, body, sig] = good.split('.');
  const other = await w.newActor('alpha-live', 'other-victim');
  const otherSig = other.token.split('.')[2];
  const flipped = Buffer.from(sig, 'base64url');
  flipped[10] ^= 0x01;

  const deleted = await w.newActor('alpha-live', 'to-delete');
  expect((await call(w.h.base, 'DELETE', `/players/${deleted.id}`, { token: deleted.key })).status).toBe(204);
  const signedOut = await w.newActor('alpha-live', 'to-sign-out');
  expect((await call(w.h.base, 'POST', '/players/me/sign-out', { token: signedOut.token })).status).toBe(204);
  await eventually(async () => (await call(w.h.base, 'GET', '/players/me', { token: signedOut.token })).status === 401, 3000);

  const envId = (await w.h.core.environments.byAppKey('alpha-live'))!.id;
  const revoked = await mintServerKey(w.h.db, envId, 'to-revoke', 10);
  await revokeServerKey(w.h.db, w.h.core.bus, revoked.keyId);
  // Licence keys: one revoked, and the good one's parts under the wrong prefix or with its secret changed.
  const alpha = await organisationNamed(w.h.db, NAMESPACE, 'alpha');
  const revokedLicence = await mintLicenceKey(w.h.db, alpha!.id, 'to-revoke', ['p']);
  await revokeLicenceKey(w.h.db, w.h.core.bus, revokedLicence.keyId);
  const licence = w.licenceKeys.alpha;
  const lastFlipped = (key: string) => `${key.slice(0, -1)}${key.endsWith('a') ? 'b' : 'a'}`;
  const licenceToken = (await call(w.h.base, 'POST', '/licence/activate', { token: licence, body: { machineId: 'api2-machine', product: 'p', version: '1' } }))
    .body.token as string;

  const hs256 = (secret: Buffer) => {
    const h = b64({ alg: 'HS256', kid: ours.kid, typ: 'JWT' });
    const p = b64(claims(owner.id));
    return `${h}.${p}.${createHmac('sha256', secret).update(`${h}.${p}`).digest('base64url')}`;
  };
  const jwks = (await call(w.h.base, 'GET', '/.well-known/jwks.json')).body;

  forgeries = [
    ['alg none', `${b64({ alg: 'none', kid: ours.kid, typ: 'JWT' })}.${body}.`],
    ['alg none, the real signature kept', `${b64({ alg: 'none', kid: ours.kid, typ: 'JWT' })}.${body}.${sig}`],
    ['HS256 keyed with the public key from the JWKS route', hs256(Buffer.from(jwks.keys[0].x, 'base64url'))],
    ['HS256 keyed with the JWKS document', hs256(Buffer.from(JSON.stringify(jwks.keys[0])))],
    ['a foreign kid (the attacker’s key)', await signed(claims(owner.id), { kid: 'attacker' }, attacker.privateKey)],
    ['jku pointing elsewhere', await signed(claims(owner.id), { kid: 'attacker', jku: `${elsewhere}/jwks.json` }, attacker.privateKey)],
    ['x5u pointing elsewhere', await signed(claims(owner.id), { kid: 'attacker', x5u: `${elsewhere}/cert.pem` }, attacker.privateKey)],
    ['jwk embedded (the attacker’s), under our kid', await signed(claims(owner.id), { kid: ours.kid, jwk: attackerJwk }, attacker.privateKey)],
    ['jwk embedded (the attacker’s), no kid', await signed(claims(owner.id), { jwk: attackerJwk }, attacker.privateKey)],
    ['kid path traversal', await signed(claims(owner.id), { kid: '../../../../dev/null' }, attacker.privateKey)],
    ['kid SQL', await signed(claims(owner.id), { kid: "' OR '1'='1" }, attacker.privateKey)],
    ['crit names an extension we do not know', signedRaw(claims(owner.id), { kid: ours.kid, crit: ['x-hearth'], 'x-hearth': 1 }, ours.privateKey)],
    ['expired beyond the clock tolerance', await signed(claims(owner.id, { iat: now() - 3700, exp: now() - 30 }), { kid: ours.kid }, ours.privateKey)],
    ['not yet valid (nbf in an hour)', await signed(claims(owner.id, { nbf: now() + 3600 }), { kid: ours.kid }, ours.privateKey)],
    ['issued in the future (iat in an hour)', await signed(claims(owner.id, { iat: now() + 3600, exp: now() + 7200 }), { kid: ours.kid }, ours.privateKey)],
    ['a lifetime we never issue (ten years)', await signed(claims(owner.id, { exp: now() + 10 * 365 * 86400 }), { kid: ours.kid }, ours.privateKey)],
    ['a wrong audience', await signed(claims(owner.id, { aud: 'another-service' }), { kid: ours.kid }, ours.privateKey)],
    ['a refresh token as an access token', owner.refresh],
    ['an access token of a deleted player', deleted.token],
    ['an access token of a signed-out player', signedOut.token],
    ['a signature with one bit flipped', `${head}.${body}.${flipped.toString('base64url')}`],
    ['a truncated signature', `${head}.${body}.${sig.slice(0, -6)}`],
    ['no signature part', `${head}.${body}`],
    ['another player’s token’s signature', `${head}.${body}.${otherSig}`],
    [
      'the payload changed to another player, signature kept',
      `${head}.${b64(claims(other.id, { iat: JSON.parse(Buffer.from(body, 'base64url').toString()).iat }))}.${sig}`,
    ],
    ['a revoked server key', revoked.key],
    ['a revoked licence key', revokedLicence.key],
    ['a licence key with its secret changed', lastFlipped(licence)],
    ['a licence key under the server key prefix', licence.replace(/^hlk_/, 'hsk_')],
    ['a server key under the licence key prefix', w.victim.key.replace(/^hsk_/, 'hlk_')],
    ['a licence token (signed by the licence keys) as a credential', licenceToken],
  ];
});
afterAll(async () => {
  reportFigure(
    `api2: ${forgeries.length} forged or misused credentials × ${credentialed.length} routes = ${ran} requests, ${fetched.length} fetches of URLs named by tokens`,
  );
  await new Promise((resolve) => listener?.close(resolve));
  await w?.h.close();
});

const credentialed = ROUTES.filter((r) => r.credential !== 'none');
const fill = (route: AnyRoute) => route.path.replace(/:([A-Za-z0-9_]+)/g, (_m, name: string) => (name === 'playerId' ? 'me' : 'x'));

test('the forging machinery is right: a token signed by our key with good claims, and one with jku/x5u/jwk headers, work (the headers are ignored, never fetched)', async () => {
  const ours = await ourKey();
  // The hand signer is right too: without `crit` its token works.
  expect((await call(w.h.base, 'GET', '/players/me', { token: signedRaw(claims(owner.id), { kid: ours.kid }, ours.privateKey) })).status).toBe(200);
  for (const header of [{}, { jku: `${elsewhere}/jwks.json` }, { x5u: `${elsewhere}/cert.pem` }, { jwk: attackerJwk }]) {
    const reply = await call(w.h.base, 'GET', '/players/me', { token: await signed(claims(owner.id), { kid: ours.kid, ...header }, ours.privateKey) });
    expect({ header, status: reply.status, id: reply.body?.id }).toEqual({ header, status: 200, id: owner.id });
  }
  expect(fetched).toEqual([]);
  expect(forgeries.length).toBeGreaterThanOrEqual(25);
});

test.each(credentialed.map((r, i) => [routeName(r), r, i] as const))('%s: every forged or misused credential → 401 unauthorized', async (name, route, i) => {
  // Requests without a good credential count against their address (600 a minute): one address per route.
  const headers = { 'X-Forwarded-For': `198.51.100.${i + 1}` };
  for (const [label, token] of forgeries) {
    const reply = await call(w.h.base, route.method, fill(route), { token, headers });
    ran++;
    try {
      expectError(reply, 401, 'unauthorized');
    } catch (err) {
      throw new Error(`${name} with ${label}: ${(err as Error).message}\nanswer: ${reply.status} ${reply.text}`);
    }
  }
});

test('no URL a token named was ever fetched, and the owner of the forged tokens is untouched', async () => {
  expect(fetched).toEqual([]);
  const me = await call(w.h.base, 'GET', '/players/me', { token: owner.token });
  expect(me.status).toBe(200);
  expect(me.body.displayName).toBe('token-owner');
});

describe("a licence token is worth nothing to another organisation's plugin", () => {
  const VICTIM_MACHINE = 'api2-victim-machine';
  /** What each organisation's plugin is built with (docs/licence.md "What a plugin checks"): its audience and its product. */
  const pluginOf = (project: string) => ({ audience: `hearth-licence:${NAMESPACE}/${project}`, product: LICENCE_PRODUCTS[0] });
  const activate = (token: string, product: string) =>
    call(w.h.base, 'POST', '/licence/activate', { token, body: { machineId: VICTIM_MACHINE, product, version: '1' } });
  const keySet = async () => createLocalJWKSet((await call(w.h.base, 'GET', '/licence/jwks.json')).body);

  test("the reproduction: rival's key naming alpha's product for the victim's machine is refused when rival's licence does not cover it", async () => {
    const rival = await organisationNamed(w.h.db, NAMESPACE, 'rival');
    const rivalOwn = (await mintLicenceKey(w.h.db, rival!.id, 'rival-own-product', ['rival-tool'])).key;
    expectError(await activate(rivalOwn, pluginOf('alpha').product), 403, 'forbidden', 'body.product');
    expect(await w.h.db('licence_seats').where({ machine_id: VICTIM_MACHINE })).toEqual([]);
  });

  test("a token rival's key gets for a product named as alpha's, on the victim's machine, fails alpha's plugin check", async () => {
    // Product names belong to no one: rival's key covers the very names alpha's does.
    const reply = await activate(w.licenceKeys.rival, pluginOf('alpha').product);
    expect(reply.status).toBe(200);
    const keys = await keySet();
    await expect(verifyAsPlugin(reply.body.token, keys, pluginOf('alpha'), VICTIM_MACHINE)).rejects.toThrow(/"aud"/);
    // Under the single deployment-wide audience of before it would have passed; that audience is no token's now.
    await expect(verifyAsPlugin(reply.body.token, keys, { ...pluginOf('alpha'), audience: 'hearth-licence' }, VICTIM_MACHINE)).rejects.toThrow(/"aud"/);
    // It is rival's, and rival's plugin takes it; alpha's own token passes alpha's check and not rival's.
    expect(await verifyAsPlugin(reply.body.token, keys, pluginOf('rival'), VICTIM_MACHINE)).toMatchObject({ org: `${NAMESPACE}/rival` });
    const alphaToken = (await activate(w.licenceKeys.alpha, pluginOf('alpha').product)).body.token as string;
    expect(await verifyAsPlugin(alphaToken, keys, pluginOf('alpha'), VICTIM_MACHINE)).toMatchObject({ org: `${NAMESPACE}/alpha` });
    await expect(verifyAsPlugin(alphaToken, keys, pluginOf('rival'), VICTIM_MACHINE)).rejects.toThrow(/"aud"/);
    for (const key of [w.licenceKeys.rival, w.licenceKeys.alpha]) {
      expect((await call(w.h.base, 'POST', '/licence/release', { token: key, body: { machineId: VICTIM_MACHINE } })).status).toBe(204);
    }
  });
});
