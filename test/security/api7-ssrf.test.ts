/**
 * OWASP API Security Top 10 (2023), API7 "Server-side request forgery". Hearth fetches one kind of
 * URL: the identity provider's key set, whose URL is the Project manifest's
 * `identityProvider.jwksUri` (applied by an operator, never taken from a request). This holds that:
 * - no route takes a URL: no request field of the route table is a URI or named like one, so a new
 *   route that took one would fail here first;
 * - an id token cannot point Hearth elsewhere: `jku`, `x5u`, `x5c` and `jwk` headers and an `iss`
 *   naming another host are never fetched (a listener counts every request made to it);
 * - the manifest's URL is fetched as it is: a redirect from it is not followed.
 * The presigned upload URLs Hearth hands out are its own store's, made by Hearth (docs/storage.md).
 */
import type http from 'node:http';
import { generateKeyPair, type KeyLike } from 'jose';
import { routeTable } from '@hearth/api';
import { type Harness, startHarness } from '../support/harness';
import { call, expectError } from '../support/http';
import { idpSettings as settings, publicJwk, signIdToken } from '../support/idp';
import { environment, project, standardManifests } from '../support/manifests';
import { reportFigure } from '../support/figures';
import { closeServer, listenOnLoopback } from '../support/loopback-server';

jest.setTimeout(60_000);

let h: Harness;
let providerKey: KeyLike;
let attackerKey: KeyLike;
let attackerJwk: Record<string, unknown>;
/** Every request the attacker's listener got, by path. */
const attackerHits: string[] = [];
const providerHits: string[] = [];
let attackerBase = '';
const servers: http.Server[] = [];

async function listen(handler: http.RequestListener): Promise<string> {
  const { server, url } = await listenOnLoopback(handler);
  servers.push(server);
  return url;
}

beforeAll(async () => {
  const provider = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
  const attacker = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
  providerKey = provider.privateKey;
  attackerKey = attacker.privateKey;
  attackerJwk = await publicJwk(attacker.publicKey, 'ed-1', 'EdDSA');
  const providerKeys = { keys: [await publicJwk(provider.publicKey, 'ed-1', 'EdDSA')] };
  // The attacker serves its own key set everywhere, so a fetch of its URL would let its token pass.
  attackerBase = await listen((req, res) => {
    attackerHits.push(req.url ?? '');
    res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ keys: [attackerJwk] }));
  });
  const providerBase = await listen((req, res) => {
    providerHits.push(req.url ?? '');
    if (req.url === '/redirect') return void res.writeHead(302, { Location: `${attackerBase}/from-redirect` }).end();
    res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(providerKeys));
  });
  h = await startHarness({
    manifests: [
      ...standardManifests(),
      project('idp', { identityProvider: settings(`${providerBase}/jwks`) }),
      environment('idp-live', 'idp'),
      project('idp-redirect', { identityProvider: settings(`${providerBase}/redirect`) }),
      environment('idp-redirect-live', 'idp-redirect'),
    ],
  });
});
afterAll(async () => {
  await h.close();
  for (const server of servers) await closeServer(server);
});

const idToken = (key: KeyLike, header: Record<string, unknown> = {}, iss?: string) => signIdToken(key, { sub: 'ssrf-user', header, iss });

const signInIdp = (appKey: string, idToken: string) => call(h.base, 'POST', '/auth/idp', { body: { appKey, idToken } });

test('no route takes a URL: no request field of the route table is a URI or named like one', () => {
  // A name that ends in one of these words (`jwksUri`, `callbackUrl`, `webhook`), or begins with url/uri.
  const URLISH = /(url|uri|href|link|callback|webhook|endpoint|redirect|host|hostname)s?$|^(url|uri)/i;
  const found: string[] = [];
  const walk = (schema: any, at: string) => {
    if (!schema || typeof schema !== 'object') return;
    if (schema.type === 'string' && ['uri', 'url', 'uri-reference', 'iri', 'hostname'].includes(schema.format)) found.push(at);
    for (const [name, child] of Object.entries<any>(schema.properties ?? {})) {
      if (URLISH.test(name)) found.push(`${at}.${name}`);
      walk(child, `${at}.${name}`);
    }
    walk(schema.items, `${at}[]`);
    for (const branch of [...(schema.anyOf ?? []), ...(schema.oneOf ?? [])]) walk(branch, at);
  };
  const routes = routeTable();
  for (const route of routes) for (const where of ['params', 'query', 'body'] as const) walk((route as any)[where], `${route.operationId}:${where}`);
  expect(found).toEqual([]);
  reportFigure(`api7: ${routes.length} routes walked, no request field takes a URL`);
});

test("the control: a token of the provider signs in, fetching only the manifest's URL", async () => {
  expect((await signInIdp('idp-live', await idToken(providerKey))).status).toBe(201);
  expect(providerHits).toContain('/jwks');
});

test.each([
  ['jku', (base: string) => ({ jku: `${base}/jku` })],
  ['x5u', (base: string) => ({ x5u: `${base}/x5u` })],
  ['jwk (embedded key)', () => ({ jwk: attackerJwk })],
  ['x5c (embedded certificate)', () => ({ x5c: ['MIIBfake'] })],
])("an attacker's token with a %s header: 401, and the attacker's server is never asked", async (_name, header) => {
  const reply = await signInIdp('idp-live', await idToken(attackerKey, header(attackerBase)));
  expectError(reply, 401, 'unauthorized');
  expect(attackerHits).toEqual([]);
});

test("an iss naming the attacker's host: 401, and the host is never asked", async () => {
  expectError(await signInIdp('idp-live', await idToken(attackerKey, {}, `${attackerBase}/issuer`)), 401, 'unauthorized');
  expectError(await signInIdp('idp-live', await idToken(providerKey, {}, `${attackerBase}/issuer`)), 401, 'unauthorized');
  expect(attackerHits).toEqual([]);
});

test("a redirect from the manifest's key-set URL is not followed: 503, the target never asked", async () => {
  expectError(await signInIdp('idp-redirect-live', await idToken(attackerKey)), 503, 'unavailable');
  expect(providerHits).toContain('/redirect');
  expect(attackerHits).toEqual([]);
});
