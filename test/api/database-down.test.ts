/**
 * A database that cannot be reached answers 503 `unavailable` (spec §7: retry later), never a bare
 * 500; /readyz says not ready; and the API recovers by itself once the database answers again, with
 * no restart. Connections cut under a running API (pg_terminate_backend) are dropped by the pool.
 */
import { randomBytes } from 'node:crypto';
import knexFactory from 'knex';
import { createLogger } from '@hearth/core';
import { createDb, migrateLatest, type Db } from '@hearth/core/db';
import { validateManifest, applyManifests } from '@hearth/core/manifests';
import { type ApiInstance, type Harness, startApiInstance, startHarness } from '../support/harness';
import { call, expectError, type Reply } from '../support/http';
import { TEST_DATABASE_URL } from '../support/env';
import { standardManifests } from '../support/manifests';
import { type OwnPostgres, startOwnPostgres } from '../support/own-postgres';
import { eventually } from '../support/wait';

jest.setTimeout(180_000);

const rootOf = (base: string) => base.replace(/\/v1$/, '');
let subjects = 0;
const signIn = (base: string, key: string) => call(base, 'POST', '/auth/server', { token: key, body: { subject: `down-${++subjects}` } });

/** Every answer is a sign-in or the spec's 503: never a 500. */
function expectSignedInOrUnavailable(reply: Reply): void {
  if (reply.status === 201) return;
  expectError(reply, 503, 'unavailable');
}

describe('connections cut under a running API (pg_terminate_backend)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    await h.close();
  });

  test('requests in flight hear 503 unavailable at worst; the API keeps answering afterwards', async () => {
    const key = h.serverKeys['alpha-live-key'];
    expect((await signIn(h.base, key)).status).toBe(201);

    // Only the backends of this test's own database are cut (never another test's).
    const admin = knexFactory({ client: 'pg', connection: TEST_DATABASE_URL, pool: { min: 0, max: 1 } });
    try {
      for (let round = 0; round < 3; round++) {
        const inFlight = Array.from({ length: 12 }, () => signIn(h.base, key));
        // Cut once the requests hold connections (the pool opens them on demand, so not at once).
        let cut = 0;
        await eventually(
          async () => {
            const result = await admin.raw(
              'SELECT count(pg_terminate_backend(pid)) AS cut FROM pg_stat_activity WHERE datname = ? AND pid <> pg_backend_pid()',
              [h.database.name],
            );
            cut = Number(result.rows[0].cut);
            return cut > 0;
          },
          5_000,
          5,
        );
        expect(cut).toBeGreaterThan(0);
        for (const reply of await Promise.all(inFlight)) expectSignedInOrUnavailable(reply);
      }
      // Idle connections cut too: the pool sees them go and does not hand them out again.
      await admin.raw('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = ? AND pid <> pg_backend_pid()', [h.database.name]);
    } finally {
      await admin.destroy();
    }
    // A connection whose end the pool has not yet seen can fail one more request, with 503; from the
    // first success on, every request succeeds.
    await eventually(async () => (await signIn(h.base, key)).status === 201, 10_000);
    const after = await Promise.all(Array.from({ length: 20 }, () => signIn(h.base, key)));
    expect(after.map((r) => r.status)).toEqual(Array(20).fill(201));
    expect((await call(rootOf(h.base), 'GET', '/readyz')).status).toBe(200);
  });
});

describe('a database that stops and comes back, under a running API', () => {
  let pg: OwnPostgres;
  let db: Db;
  let api: ApiInstance;
  const keys: Record<string, string> = {};

  beforeAll(async () => {
    pg = await startOwnPostgres();
    db = createDb(pg.url, 5, createLogger('silent'));
    await migrateLatest(db);
    api = await startApiInstance({ db, redisPrefix: `hearth-test:${randomBytes(6).toString('hex')}:`, masterKey: randomBytes(32) });
    const loaded = standardManifests().map((doc, i) => ({ doc: validateManifest(JSON.parse(JSON.stringify(doc)), `test#${i + 1}`), origin: `test#${i + 1}` }));
    for (const result of await applyManifests(db, loaded, api.core.bus)) if (result.serverKey) keys[result.name] = result.serverKey.key;
  });
  afterAll(async () => {
    await api?.stop();
    await db?.destroy();
    await pg?.remove();
  });

  test('503 unavailable while it is down, /readyz still ready (it says the pod can serve) and naming the database, hearth_dependency_up 0; back without a restart', async () => {
    const used = keys['alpha-live-key'];
    expect((await signIn(api.base, used)).status).toBe(201);
    const ready = await call(rootOf(api.base), 'GET', '/readyz');
    expect({ status: ready.status, body: ready.body }).toEqual({ status: 200, body: { status: 'ready', postgres: true, redis: true } });

    await pg.stop();

    // A request that needs the database: the spec's 503, promptly (a refused connection is not waited on).
    const started = Date.now();
    const down = await signIn(api.base, used);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(Object.keys(expectError(down, 503, 'unavailable')).sort()).toEqual(['error', 'message']);
    // A key never seen before is looked up in the database: 503 too, not 401 (the key is fine).
    expectError(await call(api.base, 'GET', '/flags', { token: keys['alpha-test-key'] }), 503, 'unavailable');
    // Readiness does not follow a dependency every pod shares (that would empty the Service): it
    // names it, and the metric the alerts read says so.
    const stillReady = await call(rootOf(api.base), 'GET', '/readyz');
    expect({ status: stillReady.status, body: stillReady.body }).toEqual({ status: 200, body: { status: 'ready', postgres: false, redis: true } });
    const scraped = await (await fetch(api.api.metricsUrl!)).text();
    expect(scraped).toContain('hearth_dependency_up{dependency="postgres"} 0');
    expect(scraped).toContain('hearth_dependency_up{dependency="redis"} 1');
    // Routes that need no database keep answering.
    expect((await call(rootOf(api.base), 'GET', '/healthz')).status).toBe(200);
    expect((await call(api.base, 'GET', '/.well-known/jwks.json')).status).toBe(200);

    await pg.start();

    // Back without restarting the API: the pool opens new connections as they are needed.
    await eventually(async () => (await call(rootOf(api.base), 'GET', '/readyz')).body.postgres === true, 20_000, 100);
    expect(await (await fetch(api.api.metricsUrl!)).text()).toContain('hearth_dependency_up{dependency="postgres"} 1');
    expect((await signIn(api.base, used)).status).toBe(201);
    expect((await call(api.base, 'GET', '/flags', { token: keys['alpha-test-key'] })).status).toBe(200);
  });
});
