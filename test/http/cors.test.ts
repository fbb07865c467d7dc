/**
 * Browsers (docs/api-conventions.md "Browsers (CORS)", apps/api/src/http/cors.ts), over real HTTP: which
 * answers carry Access-Control-Allow-Origin, for which Origin, and the preflights, answered from memory
 * (with the database stopped), counted against the caller's address.
 */
import { randomBytes } from 'node:crypto';
import { createLogger } from '@hearth/core';
import { API_VERSION, type AnyManifest, type ManifestError, validateManifest, applyManifests } from '@hearth/core/manifests';
import { type Db, createDb, migrateLatest } from '@hearth/core/db';
import { parseTrustedProxies } from '@hearth/core/net';
import { routeTable } from '@hearth/api';
import { type ApiInstance, type Harness, startApiInstance, startHarness } from '../support/harness';
import { call, expectError, signIn, type Reply } from '../support/http';
import { NAMESPACE, environment, project, serverKey, standardManifests } from '../support/manifests';
import { dashboardMember, dashboardSettings, mintDashboardToken } from '../support/dashboards';
import { type OwnPostgres, startOwnPostgres } from '../support/own-postgres';

jest.setTimeout(120_000);

const GAME = 'https://game.example.com';
const LOCAL_GAME = 'http://127.0.0.1:8123';
/** alpha-test's page: allowed in the deployment, not in alpha-live. */
const TEST_GAME = 'https://test.game.example.com';
/** The dashboard's redirect URI's origin (DASHBOARD_CLIENT.redirectUri), and one it adds. */
const DASHBOARD = 'https://dashboard.example';
const DASHBOARD_EXTRA = 'https://ops.example.com';
/** A page of the project awaiting review. */
const PENDING = 'https://pending.example.com';

function withOrigins(name: string, projectName: string, allowedOrigins: string[]): AnyManifest {
  const doc = environment(name, projectName) as AnyManifest & { spec: Record<string, unknown> };
  return { ...doc, spec: { ...doc.spec, cors: { allowedOrigins } } } as AnyManifest;
}

const manifests = (): AnyManifest[] => [
  ...standardManifests(),
  project('alpha', { dashboard: dashboardSettings('https://idp.example', { allowedOrigins: [DASHBOARD_EXTRA] }) }),
  withOrigins('alpha-live', 'alpha', [GAME, LOCAL_GAME]),
  withOrigins('alpha-test', 'alpha', [TEST_GAME]),
  withOrigins('pending-live', 'pending', [PENDING]),
  dashboardMember('alpha-member', {
    project: 'alpha',
    subject: 'member',
    environments: [{ environment: 'alpha-live', permissions: ['open_dashboard', 'view_players'] }],
  }),
];

/** Every Access-Control-* header of an answer. */
function corsOf(reply: Reply): Record<string, string> {
  return Object.fromEntries([...reply.headers].filter(([name]) => name.startsWith('access-control-')));
}

function expectAllowed(reply: Reply, origin: string): void {
  expect(reply.headers.get('access-control-allow-origin')).toBe(origin);
  expect(reply.headers.get('access-control-allow-credentials')).toBeNull();
  expect(reply.headers.get('access-control-expose-headers')).toBe(
    'ETag, X-Request-Id, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After, Idempotent-Replayed',
  );
  expect(reply.headers.get('vary')).toBe('Origin');
}

function expectNoCors(reply: Reply): void {
  expect(corsOf(reply)).toEqual({});
}

const preflight = (base: string, path: string, origin: string, method: string, headers: Record<string, string> = {}) =>
  call(base, 'OPTIONS', path, { headers: { Origin: origin, 'Access-Control-Request-Method': method, ...headers } });

let h: Harness;
let player: string;
let server: string;

beforeAll(async () => {
  h = await startHarness({ manifests: manifests(), trustedProxies: parseTrustedProxies('loopback') });
  await h.core.origins.settled();
  server = h.serverKeys['alpha-live-key'];
  player = (await signIn(h.base, server, 'cors-player')).accessToken;
});

afterAll(async () => {
  await h?.close();
});

describe('answers', () => {
  test('an allowed origin is given back, with Vary and the headers a page may read; never * nor credentials', async () => {
    for (const origin of [GAME, LOCAL_GAME]) {
      const reply = await call(h.base, 'GET', '/flags', { token: player, headers: { Origin: origin } });
      expect(reply.status).toBe(200);
      expectAllowed(reply, origin);
    }
    // The server key's answers too (a page should never hold one, but the origin is the environment's).
    expectAllowed(await call(h.base, 'GET', '/players/me', { token: player, headers: { Origin: GAME } }), GAME);
  });

  test('a native client (no Origin) gets no CORS header, only Vary', async () => {
    const reply = await call(h.base, 'GET', '/flags', { token: player });
    expect(reply.status).toBe(200);
    expectNoCors(reply);
    expect(reply.headers.get('vary')).toBe('Origin');
  });

  test('an origin not allowed gets no CORS header at all, and the same answer otherwise', async () => {
    const allowed = await call(h.base, 'GET', '/flags', { token: player, headers: { Origin: GAME } });
    const reply = await call(h.base, 'GET', '/flags', { token: player, headers: { Origin: 'https://evil.example' } });
    expect(reply.status).toBe(200);
    expect(reply.text).toBe(allowed.text);
    expectNoCors(reply);
    expect(reply.headers.get('vary')).toBe('Origin');
  });

  test('null, reflected and look-alike origins are never given back', async () => {
    const attempts = [
      'null',
      '*',
      `${GAME}.evil.test`, // suffix trick
      'https://evilgame.example.com', // prefix trick
      'https://evil.game.example.com.evil.test',
      `${GAME}/`, // trailing slash
      `${GAME}/path`,
      'https://GAME.example.com', // not as a browser writes it
      'http://game.example.com', // scheme
      `${GAME}:443`,
      `${GAME}:8443`, // port
      'http://127.0.0.1:8124',
      'http://127.0.0.1',
      'http://localhost:8123',
      `${GAME}, https://evil.example`,
      `${GAME}%00`,
      'https://game.example.com@evil.example',
    ];
    for (const origin of attempts) {
      const reply = await call(h.base, 'GET', '/flags', { token: player, headers: { Origin: origin } });
      expect({ origin, status: reply.status, cors: corsOf(reply) }).toEqual({ origin, status: 200, cors: {} });
    }
  });

  test("another environment's page reads no answer of this one; its own environment's answers it reads", async () => {
    expectNoCors(await call(h.base, 'GET', '/flags', { token: player, headers: { Origin: TEST_GAME } }));
    const testPlayer = (await signIn(h.base, h.serverKeys['alpha-test-key'], 'cors-test-player')).accessToken;
    expectAllowed(await call(h.base, 'GET', '/flags', { token: testPlayer, headers: { Origin: TEST_GAME } }), TEST_GAME);
    expectNoCors(await call(h.base, 'GET', '/flags', { token: testPlayer, headers: { Origin: GAME } }));
  });

  test('an answer before the environment is known (a refused token, an unknown path) is readable by any allowed page', async () => {
    const expired = await call(h.base, 'GET', '/players/me', { token: 'not-a-token', headers: { Origin: GAME } });
    expectError(expired, 401, 'unauthorized');
    expectAllowed(expired, GAME);
    expectNoCors(await call(h.base, 'GET', '/players/me', { token: 'not-a-token', headers: { Origin: 'https://evil.example' } }));
    const unknown = await call(h.base, 'GET', '/no-such-route', { headers: { Origin: GAME } });
    expectError(unknown, 404, 'not-found');
    expectAllowed(unknown, GAME);
    // A page of a project awaiting review is no page of the deployment.
    expectNoCors(await call(h.base, 'GET', '/players/me', { token: 'not-a-token', headers: { Origin: PENDING } }));
  });

  test('the refresh and the identity-provider sign-in answer by the environment they find', async () => {
    const tokens = await signIn(h.base, server, 'cors-refresher');
    const refreshed = await call(h.base, 'POST', '/auth/refresh', { body: { refreshToken: tokens.refreshToken }, headers: { Origin: GAME } });
    expect(refreshed.status).toBe(200);
    expectAllowed(refreshed, GAME);
    const again = await signIn(h.base, server, 'cors-refresher');
    expectNoCors(await call(h.base, 'POST', '/auth/refresh', { body: { refreshToken: again.refreshToken }, headers: { Origin: TEST_GAME } }));
    // No provider is set up: the refusal is the environment's, and its page reads it.
    const idp = await call(h.base, 'POST', '/auth/idp', { body: { appKey: 'alpha-live', idToken: 'x' }, headers: { Origin: GAME } });
    expectError(idp, 403, 'provider-disabled');
    expectAllowed(idp, GAME);
    expectNoCors(await call(h.base, 'POST', '/auth/idp', { body: { appKey: 'alpha-live', idToken: 'x' }, headers: { Origin: TEST_GAME } }));
  });

  test("dashboard routes answer the project's dashboard pages, the config and flags reads both by the credential", async () => {
    const dashboard = await mintDashboardToken(h.core, h.db, 'alpha-member', 'alpha-live');
    for (const origin of [DASHBOARD, DASHBOARD_EXTRA]) {
      expectAllowed(await call(h.base, 'GET', '/dashboard/session', { token: dashboard, headers: { Origin: origin } }), origin);
      expectAllowed(await call(h.base, 'GET', '/flags', { token: dashboard, headers: { Origin: origin } }), origin);
    }
    expectNoCors(await call(h.base, 'GET', '/dashboard/session', { token: dashboard, headers: { Origin: GAME } }));
    expectNoCors(await call(h.base, 'GET', '/flags', { token: dashboard, headers: { Origin: GAME } }));
    // A player's read of the flags is a game page's.
    expectNoCors(await call(h.base, 'GET', '/flags', { token: player, headers: { Origin: DASHBOARD } }));
    // The licence routes serve no page at all.
    const licence = await call(h.base, 'POST', '/licence/check', { token: 'hlk_nope', body: {}, headers: { Origin: GAME } });
    expectNoCors(licence);
    expect(licence.headers.get('vary')).toBeNull();
  });
});

describe('preflights', () => {
  /** A path of each route, its parameters filled in. */
  const pathOf = (template: string) => template.replace(/:([A-Za-z]+)/g, (_m, name: string) => (name === 'playerId' ? 'me' : `x-${name}`));

  test('every route of the table: 204 with its methods, the headers the API reads and a max-age, from memory', async () => {
    const counted: string[] = [];
    const onQuery = (q: { sql: string }) => counted.push(q.sql);
    h.db.on('query', onQuery);
    try {
      for (const route of routeTable()) {
        const path = pathOf(route.path);
        const origin = route.credential === 'dashboard' || route.pages?.includes('dashboard') ? DASHBOARD : GAME;
        const reply = await preflight(h.base, path, origin, route.method, { 'Access-Control-Request-Headers': 'authorization,content-type,idempotency-key' });
        if (route.credential === 'licence') {
          expectError(reply, 404, 'not-found');
          expectNoCors(reply);
          continue;
        }
        expect({ route: `${route.method} ${route.path}`, status: reply.status, text: reply.text }).toEqual({
          route: `${route.method} ${route.path}`,
          status: 204,
          text: '',
        });
        expect(reply.headers.get('access-control-allow-origin')).toBe(origin);
        expect(reply.headers.get('access-control-allow-methods')!.split(', ')).toContain(route.method);
        expect(reply.headers.get('access-control-allow-headers')).toBe('Authorization, Content-Type, Idempotency-Key, If-None-Match, X-Request-Id');
        expect(reply.headers.get('access-control-max-age')).toBe('7200');
        expect(reply.headers.get('access-control-allow-credentials')).toBeNull();
        expect(reply.headers.get('vary')).toBe('Origin');
        expect(reply.headers.get('x-ratelimit-limit')).toBe('600');
      }
    } finally {
      h.db.off('query', onQuery);
    }
    // The environment cache's and the origins' own refreshes may fall in (every 10 s); never one a preflight.
    expect(counted.length).toBeLessThanOrEqual(2);
  });

  test("a path's methods are all named: GET with HEAD, and the others its routes take", async () => {
    const reply = await preflight(h.base, '/players/me', GAME, 'DELETE');
    expect(reply.status).toBe(204);
    expect(reply.headers.get('access-control-allow-methods')).toBe('GET, HEAD, PATCH, DELETE');
    const data = await preflight(h.base, '/players/me/data/slot-1/', GAME, 'PUT');
    expect(data.headers.get('access-control-allow-methods')).toBe('GET, HEAD, PUT, DELETE');
  });

  test('an origin not allowed, a look-alike, null, or a page of a project not approved: 404 with no CORS header', async () => {
    for (const origin of [
      'https://evil.example',
      `${GAME}.evil.test`,
      'https://evilgame.example.com',
      'null',
      `${GAME}/`,
      'http://game.example.com',
      `${GAME}:8443`,
      PENDING,
    ]) {
      const reply = await preflight(h.base, '/flags', origin, 'GET');
      expectError(reply, 404, 'not-found');
      expectNoCors(reply);
      expect(reply.headers.get('vary')).toBe('Origin');
    }
    // A game page may not preflight a dashboard route, nor a dashboard page a game's.
    expectError(await preflight(h.base, '/dashboard/session', GAME, 'GET'), 404, 'not-found');
    expectError(await preflight(h.base, '/players/me', DASHBOARD, 'GET'), 404, 'not-found');
    // The deployment's pages preflight any environment's routes (a preflight names no environment).
    expect((await preflight(h.base, '/flags', TEST_GAME, 'GET')).status).toBe(204);
  });

  test('an OPTIONS that is no preflight, or for a path no route takes, is 404 as before', async () => {
    expectError(await call(h.base, 'OPTIONS', '/flags'), 404, 'not-found');
    expectError(await call(h.base, 'OPTIONS', '/flags', { headers: { Origin: GAME } }), 404, 'not-found');
    const unknown = await preflight(h.base, '/no-such-route', GAME, 'GET');
    expectError(unknown, 404, 'not-found');
    expectNoCors(unknown);
  });

  test('origins applied later are honoured at once; removed ones are refused at once', async () => {
    const LATER = 'https://later.example.com';
    expectError(await preflight(h.base, '/flags', LATER, 'GET'), 404, 'not-found');
    await h.apply([withOrigins('alpha-live', 'alpha', [GAME, LOCAL_GAME, LATER])]);
    await h.core.origins.settled();
    expect((await preflight(h.base, '/flags', LATER, 'GET')).status).toBe(204);
    expectAllowed(await call(h.base, 'GET', '/flags', { token: player, headers: { Origin: LATER } }), LATER);
    await h.apply([withOrigins('alpha-live', 'alpha', [GAME, LOCAL_GAME])]);
    await h.core.origins.settled();
    expectError(await preflight(h.base, '/flags', LATER, 'GET'), 404, 'not-found');
    expectNoCors(await call(h.base, 'GET', '/flags', { token: player, headers: { Origin: LATER } }));
  });

  test("preflights count against the caller's address: past its minute, 429 with Retry-After and no CORS header", async () => {
    const address = `198.51.100.${(randomBytes(1)[0] % 200) + 20}`;
    let refused: Reply | undefined;
    // Up to two windows' worth: a minute that turns over midway starts the count again.
    for (let sent = 0; sent < 1300 && !refused; sent += 50) {
      const replies = await Promise.all(Array.from({ length: 50 }, () => preflight(h.base, '/flags', GAME, 'GET', { 'X-Forwarded-For': address })));
      for (const reply of replies) expect([204, 429]).toContain(reply.status);
      refused = replies.find((r) => r.status === 429);
    }
    expect(refused).toBeDefined();
    expectError(refused!, 429, 'rate-limited');
    expect(Number(refused!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(refused!.headers.get('x-ratelimit-limit')).toBe('600');
    expectNoCors(refused!);
    // Another address is not held by it.
    expect((await preflight(h.base, '/flags', GAME, 'GET', { 'X-Forwarded-For': '192.0.2.1' })).status).toBe(204);
  });
});

describe('allowed origins in the GameEnvironment', () => {
  const refusalOf = (origins: unknown) => {
    try {
      validateManifest(
        {
          apiVersion: API_VERSION,
          kind: 'GameEnvironment',
          metadata: { name: 'e', namespace: NAMESPACE },
          spec: { project: 'p', appKey: 'e', cors: { allowedOrigins: origins } },
        },
        'test',
      );
      return null;
    } catch (err) {
      return (err as ManifestError).message;
    }
  };

  test('exact origins as a browser writes them are taken', () => {
    expect(refusalOf([GAME, LOCAL_GAME, 'http://localhost:3000', 'https://[::1]:8443', 'https://a-b.c-d.example'])).toBeNull();
    expect(refusalOf([])).toBeNull();
  });

  test.each([
    ['a wildcard', '*'],
    ['a wildcard host', 'https://*.example.com'],
    ['null', 'null'],
    ['a path', 'https://game.example.com/play'],
    ['a trailing slash', 'https://game.example.com/'],
    ['an upper-case host', 'https://Game.example.com'],
    ['another scheme', 'ftp://game.example.com'],
    ['no scheme', 'game.example.com'],
    ['the default port of https', 'https://game.example.com:443'],
    ['the default port of http', 'http://game.example.com:80'],
    ['port 0', 'https://game.example.com:0'],
    ['a port past 65535', 'https://game.example.com:65536'],
    ['a user', 'https://me@game.example.com'],
    ['a query', 'https://game.example.com?x=1'],
  ])('%s is refused', (_what, origin) => {
    expect(refusalOf([origin])).toMatch(/spec\.cors\.allowedOrigins/);
  });

  test('the same origin twice, and more than 32, are refused', () => {
    expect(refusalOf([GAME, GAME])).toMatch(/spec\.cors\.allowedOrigins/);
    expect(refusalOf(Array.from({ length: 33 }, (_, i) => `https://g${i}.example.com`))).toMatch(/spec\.cors\.allowedOrigins/);
  });

  test('a dashboard adds origins by the same rule', () => {
    const settings = dashboardSettings('https://idp.example', { allowedOrigins: ['https://ops.example.com/'] });
    expect(() => validateManifest(JSON.parse(JSON.stringify(project('p', { dashboard: settings } as never))), 'test')).toThrow(
      /spec\.dashboard\.allowedOrigins/,
    );
  });
});

describe('with the database stopped', () => {
  let pg: OwnPostgres;
  let db: Db;
  let api: ApiInstance;

  beforeAll(async () => {
    pg = await startOwnPostgres();
    db = createDb(pg.url, 5, createLogger('silent'));
    await migrateLatest(db);
    api = await startApiInstance({ db, redisPrefix: `hearth-test:${randomBytes(6).toString('hex')}:`, masterKey: randomBytes(32) });
    const docs = [...manifests(), serverKey('alpha-live-key', 'alpha-live')];
    await applyManifests(
      db,
      docs.map((doc, i) => ({ doc: validateManifest(JSON.parse(JSON.stringify(doc)), `test#${i}`), origin: `test#${i}` })),
      api.core.bus,
    );
    await api.core.origins.settled();
  });

  afterAll(async () => {
    await api?.stop();
    await db?.destroy();
    await pg?.remove();
  });

  test('preflights are still answered, from memory', async () => {
    await pg.stop();
    const replies = await Promise.all([
      preflight(api.base, '/flags', GAME, 'GET'),
      preflight(api.base, '/players/me/purchases/items', GAME, 'POST'),
      preflight(api.base, '/dashboard/session', DASHBOARD, 'GET'),
    ]);
    expect(replies.map((r) => r.status)).toEqual([204, 204, 204]);
    expect(replies.map((r) => r.headers.get('access-control-allow-origin'))).toEqual([GAME, GAME, DASHBOARD]);
    // What needs the database says so (and an unknown page still gets nothing).
    expectError(await call(api.base, 'POST', '/auth/idp', { body: { appKey: 'alpha-live', idToken: 'x' } }), 503, 'unavailable');
    expectError(await preflight(api.base, '/flags', 'https://evil.example', 'GET'), 404, 'not-found');
  });
});
