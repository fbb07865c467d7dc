/**
 * A real browser (Debian's chromium, driven by playwright-core: no browser is downloaded) runs a
 * browser game's page served from another 127.0.0.1 origin (another port) than the API's. The page
 * signs a player in as a client does (POST /auth/idp with an id token of the game's identity
 * provider: a page holds no server key), reads the flags with their ETag (the second read 304), and
 * buys an item. The same page from an origin the environment does not allow gets nothing: the
 * browser refuses its preflight, and the request never leaves. docs/api-conventions.md "Browsers (CORS)".
 *
 * The page's script is the least a game would write; a later SDK replaces it.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { generateKeyPair, type KeyLike } from 'jose';
import { chromium, type Browser, type Page } from 'playwright-core';
import type { AnyManifest } from '@hearth/core';
import { type Harness, startHarness } from '../support/harness';
import { call } from '../support/http';
import { idpSettings, publicJwk, signIdToken } from '../support/idp';
import { currency, environment, gameConfig, itemType, project, standardManifests } from '../support/manifests';

jest.setTimeout(120_000);

/** Debian's package (`apt-get install chromium`, .ci/services.sh installs it for `make test`). */
const CHROMIUM = process.env.HEARTH_CHROMIUM ?? '/usr/bin/chromium';

/** The page: a game's few calls to the API, by fetch. */
const PAGE = `<!doctype html>
<meta charset="utf-8">
<title>A browser game</title>
<script>
const hearth = {
  api: '', token: '', etag: '',
  async call(method, path, body, headers = {}) {
    if (hearth.token) headers.Authorization = 'Bearer ' + hearth.token;
    if (body) headers['Content-Type'] = 'application/json';
    const res = await fetch(hearth.api + path, { method, headers, body: body && JSON.stringify(body) });
    const text = await res.text();
    return { status: res.status, etag: res.headers.get('ETag'), remaining: res.headers.get('X-RateLimit-Remaining'), body: text ? JSON.parse(text) : null };
  },
  async signIn(api, appKey, idToken) {
    hearth.api = api;
    const answer = await hearth.call('POST', '/auth/idp', { appKey, idToken });
    hearth.token = answer.body.accessToken;
    return answer;
  },
  async flags() {
    const answer = await hearth.call('GET', '/flags', null, hearth.etag ? { 'If-None-Match': hearth.etag } : {});
    if (answer.etag) hearth.etag = answer.etag;
    return answer;
  },
  buy(itemTypeKey, key) {
    return hearth.call('POST', '/players/me/purchases/items', { itemTypeKey }, { 'Idempotency-Key': key });
  },
};
window.hearth = hearth;
</script>`;

async function listen(server: http.Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

let h: Harness;
let provider: http.Server;
let pages: http.Server;
let otherPages: http.Server;
let gameOrigin: string;
let otherOrigin: string;
let idKey: KeyLike;
let browser: Browser;

beforeAll(async () => {
  if (!fs.existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium (make services does)`);
  const { privateKey, publicKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
  idKey = privateKey;
  const keys = [await publicJwk(publicKey, 'ed-1', 'EdDSA')];
  provider = http.createServer((_req, res) => res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ keys })));
  const jwksUri = `${await listen(provider)}/jwks`;
  const serve: http.RequestListener = (_req, res) => res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(PAGE);
  pages = http.createServer(serve);
  otherPages = http.createServer(serve);
  gameOrigin = await listen(pages);
  otherOrigin = await listen(otherPages);

  const live = environment('web-live', 'web') as AnyManifest & { spec: Record<string, unknown> };
  h = await startHarness({
    manifests: [
      ...standardManifests(),
      project('web', { identityProvider: idpSettings(jwksUri) }),
      { ...live, spec: { ...live.spec, cors: { allowedOrigins: [gameOrigin] } } } as AnyManifest,
      gameConfig('web-config', { environment: 'web-live', flags: [{ name: 'winter_event', enabled: true }] }),
      currency('web-gold', { environment: 'web-live', key: 'gold', name: 'Gold', scope: 'account', kind: 'balance' }),
      itemType('web-potion', {
        environment: 'web-live', key: 'potion', name: 'Potion', category: 'consumable', ownership: 'counted', scope: 'account',
        purchasable: true, priceRule: 'all', prices: [{ currencyKey: 'gold', amount: 3 }],
      }),
      { apiVersion: live.apiVersion, kind: 'ServerKey', metadata: { name: 'web-live-key', namespace: live.metadata.namespace }, spec: { environment: 'web-live' } } as AnyManifest,
    ],
  });
  await h.core.origins.settled();
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox'] });
});

afterAll(async () => {
  await browser?.close();
  await h?.close();
  for (const server of [provider, pages, otherPages]) await new Promise((resolve) => server?.close(resolve));
});

async function open(origin: string): Promise<Page> {
  const page = await browser.newPage();
  await page.goto(`${origin}/`);
  return page;
}

test('a page of an allowed origin signs a player in, reads the flags with their ETag, and buys an item', async () => {
  const page = await open(gameOrigin);
  try {
    const idToken = await signIdToken(idKey, { sub: 'browser-player' });
    const signedIn = await page.evaluate(([api, token]) => (globalThis as any).hearth.signIn(api, 'web-live', token), [h.base, idToken]);
    expect(signedIn.status).toBe(201);
    expect(signedIn.remaining).toMatch(/^\d+$/); // X-RateLimit-* are exposed to the page
    const playerId = signedIn.body.player.id as string;

    const first = await page.evaluate(() => (globalThis as any).hearth.flags());
    expect(first.status).toBe(200);
    expect(first.body.items).toEqual([{ name: 'winter_event', isEnabled: true }]);
    expect(first.etag).toMatch(/^"/); // the ETag is exposed to the page
    const second = await page.evaluate(() => (globalThis as any).hearth.flags());
    expect(second.status).toBe(304);
    expect(second.body).toBeNull();

    // The game's server gives the player gold (with its server key, outside the browser).
    const credit = await call(h.base, 'POST', `/players/${playerId}/currencies/gold/credit`, {
      token: h.serverKeys['web-live-key'],
      body: { amount: 10, reason: 'quest' },
      headers: { 'Idempotency-Key': 'browser-credit' },
    });
    expect(credit.status).toBe(200);

    const bought = await page.evaluate(() => (globalThis as any).hearth.buy('potion', 'browser-buy-1'));
    expect(bought.status).toBe(200);
    expect(bought.body.charges).toEqual([expect.objectContaining({ currencyKey: 'gold', amount: -3, balanceAfter: 7 })]);
    expect(bought.body.replayed).toBe(false);
  } finally {
    await page.close();
  }
});

test('the same page from an origin not allowed gets nothing: its calls fail in the browser and never reach the API', async () => {
  const page = await open(otherOrigin);
  try {
    const before = await h.db('players').count({ n: '*' }).first();
    const idToken = await signIdToken(idKey, { sub: 'blocked-player' });
    const outcome = await page.evaluate(
      ([api, token]) => (globalThis as any).hearth.signIn(api, 'web-live', token).then(() => 'answered', (err: Error) => `${err.name}: ${err.message}`),
      [h.base, idToken],
    );
    expect(outcome).toMatch(/^TypeError: /); // the browser's "Failed to fetch"
    // The browser stopped at the preflight: no player was made.
    expect(await h.db('players').count({ n: '*' }).first()).toEqual(before);
    // Even a read with a good player token (made here by the game's server) is refused to it by the browser.
    const signedIn = await call(h.base, 'POST', '/auth/server', { token: h.serverKeys['web-live-key'], body: { subject: 'held-token' } });
    const reading = await page.evaluate(([api, token]) => {
      const hearth = (globalThis as any).hearth;
      hearth.api = api;
      hearth.token = token;
      return hearth.flags().then(() => 'answered', (err: Error) => err.name);
    }, [h.base, signedIn.body.accessToken as string]);
    expect(reading).toBe('TypeError');
  } finally {
    await page.close();
  }
});
