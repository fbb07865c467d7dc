/**
 * Expand/contract, tested (docs/operations.md "Upgrades and rollbacks"): the previous release's
 * `hearth api` serves the core routes on the schema of THIS checkout's migrations. That is the
 * database a rollback leaves (`helm rollback` never migrates back) and the one a rolling upgrade's
 * old pods meet once the migrations hook has run. `make upgrade-test`; CI runs it after `make test`.
 *
 * 1. The previous release (./previous-release.ts: the newest tag v*, else main just before its newest
 *    migration) is checked out with `git archive` into a temporary folder, its dependencies beside it.
 * 2. A fresh database is migrated by THIS checkout's `hearth migrate`.
 * 3. The previous release's own `hearth migrate` is run on it and must refuse, changing nothing: knex
 *    finds migrations it does not know. That is why a rollback is `helm rollback` (whose hooks do not
 *    migrate) and never a `helm upgrade` to the older chart with its migrations hook on.
 * 4. The manifests are applied by the previous release's `hearth apply -f`: its reconcilers (the ones
 *    its operator runs after a rollback) write to the new schema. They are a literal text here, of
 *    fields a release back knows, never built from this checkout's schemas.
 * 5. The previous release's `hearth api` and this checkout's run side by side on that database (as
 *    during a rolling upgrade); the old one walks the core routes over real HTTP, the new one reads
 *    what the old one wrote and the old one what the new one wrote. Neither may log an error.
 *
 * The answers are read with plain fetch, not the test client that holds every answer to this
 * checkout's OpenAPI document: the old code answers by its own. Without the history (a shallow clone,
 * an export) the suite is skipped, saying why; HEARTH_UPGRADE_TEST_REQUIRED=1 (CI) fails it instead.
 */
import fs from 'node:fs';
import path from 'node:path';
import knexFactory from 'knex';
import {
  type HearthService,
  REPO_ROOT,
  type ScratchRun,
  hearthBin,
  hearthEnv,
  logTail,
  makeScratchRun,
  runHearthLogged,
  startHearthService,
  waitReady,
} from '../support/hearth-process';
import { freePort } from '../support/ports';
import { runCollected, stopProcess } from '../support/processes';
import { testTempDir } from '../support/temp-dir';
import { NoPreviousRelease, type PreviousRelease, checkOut, findPreviousRelease, migrationFiles } from './previous-release';

/** One line in the test's output (and the CI stage's summary), outside jest's console decoration. */
const say = (line: string) => process.stderr.write(`upgrade-test: ${line}\n`);

function previousRelease(): PreviousRelease | NoPreviousRelease {
  try {
    return findPreviousRelease();
  } catch (err) {
    if (err instanceof NoPreviousRelease) return err;
    throw err;
  }
}

/**
 * What the previous release's `hearth apply -f` applies: only kinds and fields a release back knows.
 * When a kind drops or renames a field (a contract step, a release after it stopped being read),
 * this text follows a release later.
 */
const MANIFESTS = `
apiVersion: hearth.gg/v1alpha1
kind: Plan
metadata: { name: upgrade }
spec:
  playersPerEnvironment: 1000
  playerDataBytesPerEnvironment: 1073741824
  serverKeysPerEnvironment: 5
  requestsPerMinutePerEnvironment: 100000
  requestsPerMinutePerCredential: 100000
  requestsPerDayPerEnvironment: 10000000
  sessionSeats: 16
  realtime: { maxMessageBytes: 4096, messagesPerSecond: 10, messagesPerMinute: 300, maxSubscriptions: 10 }
  licenceSeats: 2
---
apiVersion: hearth.gg/v1alpha1
kind: Project
metadata: { name: upgrade, namespace: upgrade }
spec:
  plan: upgrade
  review: approved
  sessionSeats: 8
  services: { config: true, flags: true, sessions: true, persistence: true, inventory: true, progression: true, stats: true }
---
apiVersion: hearth.gg/v1alpha1
kind: GameEnvironment
metadata: { name: upgrade-live, namespace: upgrade }
spec: { project: upgrade, appKey: upgrade-live }
---
apiVersion: hearth.gg/v1alpha1
kind: ServerKey
metadata: { name: upgrade-live-key, namespace: upgrade }
spec: { environment: upgrade-live }
---
apiVersion: hearth.gg/v1alpha1
kind: GameConfig
metadata: { name: upgrade-live, namespace: upgrade }
spec:
  environment: upgrade-live
  values:
    - { key: max_party_size, type: int, value: 4, groupName: matchmaking }
    - { key: motd, type: string, value: Welcome }
  flags:
    - { name: new_shop, enabled: true }
    - { name: winter_event, enabled: false }
---
apiVersion: hearth.gg/v1alpha1
kind: Currency
metadata: { name: upgrade-gold, namespace: upgrade }
spec: { environment: upgrade-live, key: gold, name: Gold, scope: account, kind: balance }
---
apiVersion: hearth.gg/v1alpha1
kind: ItemType
metadata: { name: upgrade-potion, namespace: upgrade }
spec: { environment: upgrade-live, key: potion, name: Potion, category: consumable, ownership: counted, purchasable: true, prices: [ { currencyKey: gold, amount: 10 } ] }
---
apiVersion: hearth.gg/v1alpha1
kind: SkillTree
metadata: { name: upgrade-magic, namespace: upgrade }
spec:
  environment: upgrade-live
  key: magic
  name: Magic
  nodes:
    - { key: spark, name: Spark, prices: [ { currencyKey: gold, amount: 5 } ] }
`;

interface Answer {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

/** A request to one of the two APIs (plain fetch: see the top of the file). */
async function request(
  base: string,
  method: string,
  route: string,
  options: { token?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.Authorization = `Bearer ${options.token}`;
  if (options.body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetch(`${base}${route}`, { method, headers, body: options.body === undefined ? undefined : JSON.stringify(options.body) });
  const text = await res.text();
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  return { status: res.status, headers: res.headers, body, text };
}

/** The status and body together, so a failure shows what the API answered. */
const seen = (a: Answer) => ({ status: a.status, body: a.body });

const release = previousRelease();

if (release instanceof NoPreviousRelease) {
  const required = process.env.HEARTH_UPGRADE_TEST_REQUIRED === '1';
  say(`${required ? 'failed (HEARTH_UPGRADE_TEST_REQUIRED=1)' : 'skipped'}: ${release.message}`);
  if (required) {
    test('finds the previous release (HEARTH_UPGRADE_TEST_REQUIRED=1)', () => {
      throw release;
    });
  } else {
    test.skip(`the previous release's API on this schema: skipped, ${release.message}`, () => undefined);
  }
} else {
  describe(`the previous release (${release.commit.slice(0, 12)}) on this release's schema`, () => {
    let oldRoot: string;
    let logs: string;
    let scratch: ScratchRun | undefined;
    let added: string[];
    let gone: string[];
    const services: HearthService[] = [];
    let oldApi: string;
    let newApi: string;
    let serverKey: string;
    const fail = (message: string) => new Error(message);

    beforeAll(async () => {
      const started = Date.now();
      oldRoot = testTempDir('hearth-previous-release-');
      logs = testTempDir('hearth-upgrade-logs-');
      const how = checkOut(release, oldRoot);
      const before = migrationFiles(oldRoot);
      const now = migrationFiles(REPO_ROOT);
      added = now.filter((f) => !before.includes(f));
      gone = before.filter((f) => !now.includes(f));
      say(`previous release ${release.commit.slice(0, 12)}: ${release.chosenAs}`);
      say(`its dependencies: ${how} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
      say(`migrations this release adds: ${added.length ? added.join(', ') : 'none'}`);

      scratch = await makeScratchRun('upgrade', fail);
      const base = { ...scratch.env, LOG_LEVEL: 'warn' };
      await runHearthLogged(['migrate', '--json'], hearthEnv(base), path.join(logs, 'migrate.log'), fail);
      const file = path.join(logs, 'manifests.yaml');
      fs.writeFileSync(file, MANIFESTS);
      const applied = JSON.parse(await runHearthLogged(['apply', '-f', file, '--json'], hearthEnv(base), path.join(logs, 'apply-previous.log'), fail, oldRoot));
      serverKey = applied.results.find((r: any) => r.kind === 'ServerKey')?.serverKey?.key;
      if (!serverKey) throw new Error(`the previous release's hearth apply minted no server key: ${JSON.stringify(applied)}`);

      const start = async (name: string, root: string) => {
        const [port, metricsPort] = [await freePort(), await freePort()];
        const service = startHearthService(
          name,
          ['api'],
          hearthEnv({ ...base, PORT: String(port), METRICS_PORT: String(metricsPort) }),
          path.join(logs, `${name}.log`),
          root,
        );
        services.push(service);
        await waitReady(service, `http://127.0.0.1:${port}/readyz`, fail);
        return `http://127.0.0.1:${port}/v1`;
      };
      [oldApi, newApi] = await Promise.all([start('previous-api', oldRoot), start('this-api', REPO_ROOT)]);
      say(`ready: migrated, applied and both APIs up in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    }, 400_000);

    afterAll(async () => {
      await Promise.all(services.map((s) => stopProcess(s.child)));
      await scratch?.drop();
    });

    test('no migration of the previous release is gone from this one (a landed migration is never removed or renamed)', () => {
      expect(gone).toEqual([]);
    });

    test("the previous release's `hearth migrate` refuses this schema and changes nothing (why a rollback never runs it)", async () => {
      const db = knexFactory({ client: 'pg', connection: scratch!.env.DATABASE_URL, pool: { min: 0, max: 1 } });
      try {
        const recorded = async () => (await db('knex_migrations').select('name').orderBy('id')).map((r: { name: string }) => r.name);
        const before = await recorded();
        const run = await runCollected(process.execPath, [hearthBin(oldRoot), 'migrate'], {
          timeoutMs: 60_000,
          env: hearthEnv({ ...scratch!.env, LOG_LEVEL: 'warn' }),
        });
        if (added.length === 0) {
          // Nothing newer than it knows: it finds the database up to date.
          expect({ status: run.status, stdout: run.stdout }).toEqual({ status: 0, stdout: expect.stringContaining('up to date') });
        } else {
          expect({ status: run.status, stderr: run.stderr }).toEqual({
            status: 1,
            stderr: expect.stringMatching(new RegExp(`migration directory is corrupt, the following files are missing: .*${added[0].replace('.', '\\.')}`)),
          });
        }
        expect(await recorded()).toEqual(before);
      } finally {
        await db.destroy();
      }
    });

    describe('the core routes on the previous release', () => {
      let player: { id: string; accessToken: string };

      test('POST /auth/server signs a player in (201 made, then 200 found), GET /players/me reads it', async () => {
        const made = await request(oldApi, 'POST', '/auth/server', { token: serverKey, body: { subject: 'upgrade-player', displayName: 'Ada' } });
        expect(seen(made)).toEqual({ status: 201, body: expect.objectContaining({ accessToken: expect.any(String), refreshToken: expect.any(String) }) });
        player = { id: made.body.player.id, accessToken: made.body.accessToken };
        const found = await request(oldApi, 'POST', '/auth/server', { token: serverKey, body: { subject: 'upgrade-player' } });
        expect(seen(found)).toEqual({ status: 200, body: expect.objectContaining({ player: expect.objectContaining({ id: player.id }) }) });
        const me = await request(oldApi, 'GET', '/players/me', { token: player.accessToken });
        expect(seen(me)).toEqual({ status: 200, body: expect.objectContaining({ id: player.id, displayName: 'Ada' }) });
        const refreshed = await request(oldApi, 'POST', '/auth/refresh', { body: { refreshToken: made.body.refreshToken } });
        expect(seen(refreshed)).toEqual({ status: 200, body: expect.objectContaining({ player: expect.objectContaining({ id: player.id }) }) });
      });

      test.each(['/flags', '/config/values'])('GET %s answers with an ETag, then 304 with no body for it', async (route) => {
        const first = await request(oldApi, 'GET', route, { token: player.accessToken });
        expect(seen(first)).toEqual({ status: 200, body: expect.objectContaining({ items: expect.any(Array) }) });
        expect(first.body.items).toHaveLength(2);
        const etag = first.headers.get('etag');
        expect(etag).toBeTruthy();
        const again = await request(oldApi, 'GET', route, { token: player.accessToken, headers: { 'If-None-Match': etag! } });
        expect({ status: again.status, text: again.text }).toEqual({ status: 304, text: '' });
      });

      test('a currency credit under an Idempotency-Key, its replay, a conflicting reuse and a bad amount refused', async () => {
        const route = `/players/${player.id}/currencies/gold/credit`;
        const headers = { 'Idempotency-Key': 'upgrade-credit-1' };
        const credited = await request(oldApi, 'POST', route, { token: serverKey, headers, body: { amount: 100, reason: 'upgrade' } });
        expect(seen(credited)).toEqual({ status: 200, body: expect.objectContaining({ amount: 100, balanceAfter: 100, replayed: false }) });
        const replayed = await request(oldApi, 'POST', route, { token: serverKey, headers, body: { amount: 100, reason: 'upgrade' } });
        expect(seen(replayed)).toEqual({ status: 200, body: { ...credited.body, replayed: true } });
        const conflict = await request(oldApi, 'POST', route, { token: serverKey, headers, body: { amount: 7, reason: 'upgrade' } });
        expect(seen(conflict)).toEqual({ status: 409, body: expect.objectContaining({ error: 'idempotency-conflict' }) });
        const bad = await request(oldApi, 'POST', route, {
          token: serverKey,
          headers: { 'Idempotency-Key': 'upgrade-credit-bad' },
          body: { amount: 0, reason: 'upgrade' },
        });
        expect(seen(bad)).toEqual({ status: 400, body: expect.objectContaining({ error: 'invalid-request' }) });
      });

      test('a save written (201, version 1), read back, and a stale expectedVersion refused', async () => {
        const route = '/players/me/data/slot-1';
        const written = await request(oldApi, 'PUT', route, { token: player.accessToken, body: { data: { level: 3 }, expectedVersion: 0 } });
        expect(seen(written)).toEqual({ status: 201, body: expect.objectContaining({ key: 'slot-1', version: 1 }) });
        const read = await request(oldApi, 'GET', route, { token: player.accessToken });
        expect(seen(read)).toEqual({ status: 200, body: expect.objectContaining({ key: 'slot-1', version: 1, data: { level: 3 } }) });
        const stale = await request(oldApi, 'PUT', route, { token: player.accessToken, body: { data: { level: 4 }, expectedVersion: 0 } });
        expect(seen(stale)).toEqual({ status: 409, body: expect.objectContaining({ error: 'conflict' }) });
      });

      test('a session made (201, CONFIGURING, the caller its host) and read with the server key', async () => {
        const made = await request(oldApi, 'POST', '/sessions', { token: player.accessToken, body: { gameMode: 'duel', map: 'harbour' } });
        expect(seen(made)).toEqual({ status: 201, body: expect.objectContaining({ status: 'CONFIGURING' }) });
        const read = await request(oldApi, 'GET', `/sessions/${made.body.id}`, { token: serverKey });
        expect(seen(read)).toEqual({ status: 200, body: expect.objectContaining({ id: made.body.id, status: 'CONFIGURING' }) });
      });

      test('an item bought with gold, and a skill node unlocked (a database function this release replaced, called as the old code calls it)', async () => {
        const bought = await request(oldApi, 'POST', '/players/me/purchases/items', {
          token: player.accessToken,
          headers: { 'Idempotency-Key': 'upgrade-potion-1' },
          body: { itemTypeKey: 'potion', quantity: 2 },
        });
        expect(seen(bought)).toEqual({ status: 200, body: expect.objectContaining({ replayed: false }) });
        expect(bought.body.charges).toEqual([expect.objectContaining({ currencyKey: 'gold', amount: -20, balanceAfter: 80 })]);
        const unlocked = await request(oldApi, 'POST', '/players/me/skill-nodes/spark/unlock', { token: player.accessToken, body: {} });
        expect(seen(unlocked)).toEqual({ status: 200, body: expect.objectContaining({ nodeKey: 'spark', alreadyUnlocked: false }) });
        expect(unlocked.body.charges).toEqual([expect.objectContaining({ currencyKey: 'gold', amount: -5, balanceAfter: 75 })]);
        const poor = await request(oldApi, 'POST', '/players/me/purchases/items', {
          token: player.accessToken,
          headers: { 'Idempotency-Key': 'upgrade-potion-2' },
          body: { itemTypeKey: 'potion', quantity: 8 },
        });
        expect(seen(poor)).toEqual({ status: 409, body: expect.objectContaining({ error: 'insufficient-balance' }) });
      });

      test("stat counters incremented by both releases (the old code's database function is kept as a step of the new one)", async () => {
        const increment = (base: string, route: string, by: number) => request(base, 'POST', route, { token: serverKey, body: { by } });
        for (const route of ['/stats/upgrade.kills/increment', `/players/${player.id}/stats/upgrade.kills/increment`]) {
          const first = await increment(oldApi, route, 2);
          expect(seen(first)).toEqual({ status: 200, body: { key: 'upgrade.kills', value: '2' } });
          expect(seen(await increment(newApi, route, 3))).toEqual({ status: 200, body: { key: 'upgrade.kills', value: '5' } });
          expect(seen(await increment(oldApi, route, -1))).toEqual({ status: 200, body: { key: 'upgrade.kills', value: '4' } });
        }
        const read = await request(oldApi, 'GET', '/stats', { token: serverKey });
        expect(seen(read)).toEqual({ status: 200, body: expect.objectContaining({ items: [{ key: 'upgrade.kills', value: '4' }] }) });
      });

      test('beside this release, as in a rolling upgrade: each reads what the other wrote', async () => {
        const gold = async (base: string) => {
          const page = await request(base, 'GET', `/players/${player.id}/inventories/account/balances`, { token: serverKey });
          expect(page.status).toBe(200);
          return page.body.items.find((b: { currencyKey: string }) => b.currencyKey === 'gold')?.amount;
        };
        expect(await gold(newApi)).toBe(75);
        const save = await request(newApi, 'GET', '/players/me/data/slot-1', { token: player.accessToken });
        expect(seen(save)).toEqual({ status: 200, body: expect.objectContaining({ version: 1, data: { level: 3 } }) });
        // A retry reaching the other release answers the first receipt: one idempotency record for both.
        const replay = await request(newApi, 'POST', `/players/${player.id}/currencies/gold/credit`, {
          token: serverKey,
          headers: { 'Idempotency-Key': 'upgrade-credit-1' },
          body: { amount: 100, reason: 'upgrade' },
        });
        expect(seen(replay)).toEqual({ status: 200, body: expect.objectContaining({ amount: 100, balanceAfter: 100, replayed: true }) });
        const credited = await request(newApi, 'POST', `/players/${player.id}/currencies/gold/credit`, {
          token: serverKey,
          headers: { 'Idempotency-Key': 'upgrade-credit-2' },
          body: { amount: 25, reason: 'upgrade' },
        });
        expect(seen(credited)).toEqual({ status: 200, body: expect.objectContaining({ balanceAfter: 100, replayed: false }) });
        expect(await gold(oldApi)).toBe(100);
        const rewritten = await request(newApi, 'PUT', '/players/me/data/slot-1', {
          token: player.accessToken,
          body: { data: { level: 5 }, expectedVersion: 1 },
        });
        expect(seen(rewritten)).toEqual({ status: 200, body: expect.objectContaining({ version: 2 }) });
        const readByOld = await request(oldApi, 'GET', '/players/me/data/slot-1', { token: player.accessToken });
        expect(seen(readByOld)).toEqual({ status: 200, body: expect.objectContaining({ version: 2, data: { level: 5 } }) });
      });
    });

    test('neither API logged an error', () => {
      for (const service of services) {
        const errors = fs
          .readFileSync(service.log, 'utf8')
          .split('\n')
          .filter((line) => line.startsWith('{') && (JSON.parse(line) as { level: number }).level >= 50);
        expect({ service: service.name, errors }).toEqual({ service: service.name, errors: [] });
        expect(service.child.exitCode).toBeNull();
      }
      if (services.length < 2) throw new Error(`the APIs did not both start:\n${services.map((s) => logTail(s.log)).join('\n')}`);
    });
  });
}
