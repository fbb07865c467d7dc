/**
 * A real browser (Debian's chromium, driven by playwright-core: no browser is downloaded) runs a
 * browser game's page served from another 127.0.0.1 origin (another port) than the API's. The page
 * signs a player in as a client does (POST /auth/idp with an id token of the game's identity
 * provider: a page holds no server key), reads the flags with their ETag (the second read 304), and
 * buys an item, all through @hearth/client (apps/client, bundled for the browser as a game would).
 * The same page from an origin the environment does not allow gets nothing: the browser refuses its
 * preflight, and the request never leaves. docs/api-conventions.md "Browsers (CORS)".
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { generateKeyPair, type KeyLike } from 'jose';
import path from 'node:path';
import { build } from 'esbuild';
import { chromium, type Browser, type Page } from 'playwright-core';
import type { AnyManifest } from '@hearth/core/manifests';
import { type Harness, startHarness } from '../support/harness';
import { call } from '../support/http';
import { idpSettings, publicJwk, signIdToken } from '../support/idp';
import { currency, environment, gameConfig, itemType, project, standardManifests } from '../support/manifests';

jest.setTimeout(120_000);

/** Debian's package (`apt-get install chromium`, .ci/services.sh installs it for `make test`). */
const CHROMIUM = process.env.HEARTH_CHROMIUM ?? '/usr/bin/chromium';

/** The page: a game's few calls to the API, through the SDK (bundled for the browser in beforeAll). */
const PAGE = `<!doctype html>
<meta charset="utf-8">
<title>A browser game</title>
<script src="/sdk.js"></script>
<script>
const game = {
  player: null,
  async signIn(api, appKey, idToken) {
    const client = new HearthClient.Hearth({ baseUrl: api });
    game.player = await client.signInWithIdentityProvider(appKey, idToken);
    return { playerId: game.player.playerId };
  },
  /** The SDK's typed client: the answer's status and headers as the page sees them. */
  async flags() {
    const { data, response } = await game.player.api.GET('/flags');
    return { status: response.status, cache: response.headers.get('X-Hearth-Cache'), etag: response.headers.get('ETag'), remaining: response.headers.get('X-RateLimit-Remaining'), body: data };
  },
  buy(itemTypeKey) {
    return game.player.call('post', '/players/{playerId}/purchases/items', { params: { path: { playerId: 'me' } }, body: { itemTypeKey } });
  },
  useToken(api, tokens) {
    game.player = new HearthClient.Hearth({ baseUrl: api, retry: { attempts: 1 } }).player(tokens);
  },
};
window.game = game;
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
  // The SDK as a browser game ships it: one minified script, its classes under `HearthClient`.
  const sdk = await build({
    entryPoints: [path.join(__dirname, '..', '..', 'apps', 'client', 'src', 'index.ts')],
    bundle: true,
    minify: true,
    format: 'iife',
    globalName: 'HearthClient',
    platform: 'browser',
    target: 'es2022',
    write: false,
    logLevel: 'silent',
  });
  const script = sdk.outputFiles[0].contents;
  const serve: http.RequestListener = (req, res) =>
    req.url === '/sdk.js'
      ? res.writeHead(200, { 'Content-Type': 'text/javascript' }).end(script)
      : res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(PAGE);
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
        environment: 'web-live',
        key: 'potion',
        name: 'Potion',
        category: 'consumable',
        ownership: 'counted',
        scope: 'account',
        purchasable: true,
        priceRule: 'all',
        prices: [{ currencyKey: 'gold', amount: 3 }],
      }),
      {
        apiVersion: live.apiVersion,
        kind: 'ServerKey',
        metadata: { name: 'web-live-key', namespace: live.metadata.namespace },
        spec: { environment: 'web-live' },
      } as AnyManifest,
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
    const { playerId } = await page.evaluate(([api, token]) => (globalThis as any).game.signIn(api, 'web-live', token), [h.base, idToken]);
    expect(playerId).toMatch(/.+/);

    const first = await page.evaluate(() => (globalThis as any).game.flags());
    expect(first.status).toBe(200);
    expect(first.remaining).toMatch(/^\d+$/); // X-RateLimit-* are exposed to the page
    expect(first.body.items).toEqual([{ name: 'winter_event', isEnabled: true }]);
    expect(first.etag).toMatch(/^"/); // the ETag is exposed to the page, so the SDK can send it back
    // The SDK sent If-None-Match; the API answered 304, and the SDK the kept body.
    const second = await page.evaluate(() => (globalThis as any).game.flags());
    expect([second.status, second.cache]).toEqual([200, 'revalidated']);
    expect(second.body).toEqual(first.body);

    // The game's server gives the player gold (with its server key, outside the browser).
    const credit = await call(h.base, 'POST', `/players/${playerId}/currencies/gold/credit`, {
      token: h.serverKeys['web-live-key'],
      body: { amount: 10, reason: 'quest' },
      headers: { 'Idempotency-Key': 'browser-credit' },
    });
    expect(credit.status).toBe(200);

    // A move: the SDK adds its Idempotency-Key, a header the preflight allows.
    const bought = await page.evaluate(() => (globalThis as any).game.buy('potion'));
    expect(bought.charges).toEqual([expect.objectContaining({ currencyKey: 'gold', amount: -3, balanceAfter: 7 })]);
    expect(bought.replayed).toBe(false);
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
      ([api, token]) =>
        (globalThis as any).game.signIn(api, 'web-live', token).then(
          () => 'answered',
          (err: Error) => err.name,
        ),
      [h.base, idToken],
    );
    expect(outcome).toBe('HearthTransportError'); // the browser's "Failed to fetch", as the SDK reports it
    // The browser stopped at the preflight: no player was made.
    expect(await h.db('players').count({ n: '*' }).first()).toEqual(before);
    // Even a read with good player tokens (made here by the game's server) is refused to it by the browser.
    const signedIn = await call(h.base, 'POST', '/auth/server', { token: h.serverKeys['web-live-key'], body: { subject: 'held-token' } });
    const reading = await page.evaluate(
      ([api, tokens]) => {
        const game = (globalThis as any).game;
        game.useToken(api, tokens);
        return game.flags().then(
          () => 'answered',
          (err: Error) => err.name,
        );
      },
      [h.base, signedIn.body] as const,
    );
    expect(reading).toBe('TypeError');
  } finally {
    await page.close();
  }
});
