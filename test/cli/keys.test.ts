/**
 * `hearth keys create|list|revoke`, `hearth signing-keys rotate` and `hearth migrate` as real
 * subprocesses, with an API instance over the same database and Redis prefix to prove the effects.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import knexFactory from 'knex';
import Redis from 'ioredis';
import { applyManifests, validateManifest } from '@hearth/core/manifests';
import { createDb } from '@hearth/core/db';
import { type ApiInstance, type TestDatabase, createTestDatabase, startApiInstance } from '../support/harness';
import { TEST_DATABASE_URL, TEST_REDIS_URL, databaseUrl } from '../support/env';
import { standardManifests } from '../support/manifests';
import { call, expectError } from '../support/http';
import { TestClock } from '../support/clock';
import { eventually } from '../support/wait';
import { oneLine, runHearth, tempDir } from './run-hearth';

const LIVE_KEY_LIMIT = 3;
jest.setTimeout(120_000); // every step runs the real command, a process start each

let database: TestDatabase;
let api: ApiInstance;
let masterKey: Buffer;
let env: Record<string, string>;

beforeAll(async () => {
  database = await createTestDatabase();
  masterKey = randomBytes(32);
  const redisPrefix = `hearth-test:${randomBytes(6).toString('hex')}:`;
  const docs = standardManifests({ serverKeysPerEnvironment: LIVE_KEY_LIMIT });
  await applyManifests(
    database.db,
    docs.map((doc, i) => ({ doc: validateManifest(JSON.parse(JSON.stringify(doc)), `test#${i + 1}`), origin: `test#${i + 1}` })),
  );
  api = await startApiInstance({ db: database.db, redisPrefix, masterKey });
  // The CLI publishes revocations and key rotations on the API's own Redis prefix.
  env = { DATABASE_URL: database.url, REDIS_URL: TEST_REDIS_URL, REDIS_PREFIX: redisPrefix, HEARTH_MASTER_KEY: masterKey.toString('base64') };
});
afterAll(async () => {
  await api.stop();
  await database.drop();
});

async function createKey(appKey: string, name: string) {
  const run = await runHearth(['keys', 'create', '--environment', appKey, '--name', name, '--json'], env);
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
  return JSON.parse(run.stdout) as { keyId: string; key: string; environment: string; name: string };
}

describe('keys create', () => {
  let created: { keyId: string; key: string; environment: string; name: string };

  beforeAll(async () => {
    created = await createKey('alpha-live', 'match servers');
  });

  test('--json prints { keyId, key, environment, name } and the database keeps only a hash', async () => {
    expect(Object.keys(created).sort()).toEqual(['environment', 'key', 'keyId', 'name']);
    expect(created).toMatchObject({ environment: 'alpha-live', name: 'match servers' });
    expect(created.key).toMatch(new RegExp(`^hsk_${created.keyId}_[0-9A-Za-z]{40}$`));
    const row = await database.db('server_keys').where({ key_id: created.keyId }).first();
    const secret = created.key.split('_')[2];
    expect(Buffer.from(row.secret_hash).equals(createHash('sha256').update(secret).digest())).toBe(true);
    expect(row.secret_hint).toBe(secret.slice(-4));
    expect(row.revoked_at).toBeNull();
    const envRow = await database.db('environments').where({ app_key: 'alpha-live' }).first();
    expect(Number(row.environment_id)).toBe(Number(envRow.id));
  });

  test('the key works against a running API, in its own environment', async () => {
    const reply = await call(api.base, 'GET', '/flags', { token: created.key });
    expect(reply.status).toBe(200);
    const signIn = await call(api.base, 'POST', '/auth/server', { token: created.key, body: { subject: 'cli-made' } });
    expect(signIn.status).toBe(201);
    const player = await database.db('players').where({ id: signIn.body.player.id }).first();
    const envRow = await database.db('environments').where({ app_key: 'alpha-live' }).first();
    expect(Number(player.environment_id)).toBe(Number(envRow.id));
  });

  test('without --json the whole key is printed once, with its id', async () => {
    const run = await runHearth(['keys', 'create', '--environment', 'alpha-test', '--name', 'text mode'], env);
    expect(run.code).toBe(0);
    const key = /hsk_([0-9A-Za-z]{16})_[0-9A-Za-z]{40}/.exec(run.stdout);
    expect(key).not.toBeNull();
    expect(run.stdout).toContain(`server key ${key![1]} "text mode" for alpha-test`);
    expect((await call(api.base, 'GET', '/flags', { token: key![0] })).status).toBe(200);
  });

  test('an unknown environment is exit 1 with one line naming it, and mints nothing', async () => {
    const before = await database.db('server_keys').count({ n: '*' });
    const run = await runHearth(['keys', 'create', '--environment', 'nowhere', '--name', 'x', '--json'], env);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(oneLine(run.stderr)).toBe('hearth: no environment has app key "nowhere"');
    expect(await database.db('server_keys').count({ n: '*' })).toEqual(before);
  });

  test('an empty name is exit 1 naming --name', async () => {
    const run = await runHearth(['keys', 'create', '--environment', 'alpha-live', '--name', '  '], env);
    expect(run.code).toBe(1);
    expect(oneLine(run.stderr)).toBe('hearth: --name must be 1-200 characters (says what the key is for)');
  });

  test("past the plan's live-key limit is exit 1 naming the limit; revoked keys do not count", async () => {
    // pending-live has its manifest key; two more reach the limit of 3.
    await createKey('pending-live', 'second');
    const third = await createKey('pending-live', 'third');
    const envRow = await database.db('environments').where({ app_key: 'pending-live' }).first();
    const live = () => database.db('server_keys').where({ environment_id: envRow.id }).whereNull('revoked_at').count({ n: '*' });
    expect(Number((await live())[0].n)).toBe(LIVE_KEY_LIMIT);

    const refused = await runHearth(['keys', 'create', '--environment', 'pending-live', '--name', 'fourth'], env);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe('');
    const line = oneLine(refused.stderr);
    expect(line).toContain(`already has ${LIVE_KEY_LIMIT} live server keys`);
    expect(line).toContain('the most its plan allows');
    expect(line).toContain(`(plan "test": serverKeysPerEnvironment ${LIVE_KEY_LIMIT})`);
    expect(Number((await live())[0].n)).toBe(LIVE_KEY_LIMIT);

    expect((await runHearth(['keys', 'revoke', third.keyId], env)).code).toBe(0);
    const again = await createKey('pending-live', 'fourth');
    expect(again.name).toBe('fourth');
    expect(Number((await live())[0].n)).toBe(LIVE_KEY_LIMIT);
  });
});

describe('keys list', () => {
  test('shows each key with a hint of its secret, never the secret', async () => {
    const made = await createKey('alpha-test', 'listed');
    const secret = made.key.split('_')[2];

    const text = await runHearth(['keys', 'list', '--environment', 'alpha-test'], env);
    expect(text.code).toBe(0);
    // A table: a header line, then one line per key with its columns.
    const [header, ...lines] = text.stdout.trimEnd().split('\n');
    expect(header.split(/\s{2,}/)).toEqual(['KEY ID', 'NAME', 'SECRET', 'CREATED', 'LAST USED', 'REVOKED']);
    const line = lines.find((l) => l.startsWith(made.keyId));
    expect(line?.split(/\s{2,}/)).toEqual([made.keyId, 'listed', `…${secret.slice(-4)}`, expect.any(String), 'never', '-']);
    expect(text.stdout).not.toContain(secret.slice(0, 12));
    expect(text.stdout).not.toContain(made.key);

    const json = await runHearth(['keys', 'list', '--environment', 'alpha-test', '--json'], env);
    expect(json.code).toBe(0);
    const listed = JSON.parse(json.stdout);
    expect(listed.environment).toBe('alpha-test');
    const entry = listed.keys.find((k: { keyId: string }) => k.keyId === made.keyId);
    expect(entry).toMatchObject({ keyId: made.keyId, name: 'listed', secretHint: secret.slice(-4), lastUsedAt: null, revokedAt: null });
    expect(Object.keys(entry)).not.toContain('key');
    expect(json.stdout).not.toContain(secret.slice(0, 12));
    // Every key of the environment and only those: the manifest key, the text-mode key, this one.
    expect(listed.keys.every((k: { environmentId: number }) => k.environmentId === listed.keys[0].environmentId)).toBe(true);
    expect(listed.keys.map((k: { name: string }) => k.name)).toEqual(['alpha-test-key', 'text mode', 'listed']);
  });

  test('an unknown environment is exit 1', async () => {
    const run = await runHearth(['keys', 'list', '--environment', 'nowhere'], env);
    expect(run.code).toBe(1);
    expect(oneLine(run.stderr)).toBe('hearth: no environment has app key "nowhere"');
  });
});

describe('keys revoke', () => {
  test('given the whole key instead of its id: refused in one line that names the id, never prints the key back, and revokes nothing', async () => {
    const made = await createKey('alpha-live', 'pasted');
    const secret = made.key.split('_')[2];
    const run = await runHearth(['keys', 'revoke', made.key], env);
    expect(run.code).toBe(1);
    expect(oneLine(run.stderr)).toBe(
      `hearth: that is a whole key, not its id (a secret: not printed back here); revoke it by its id: hearth keys revoke ${made.keyId}`,
    );
    expect(`${run.stdout}${run.stderr}`).not.toContain(secret);
    expect((await database.db('server_keys').where({ key_id: made.keyId }).first()).revoked_at).toBeNull();
    expect((await call(api.base, 'GET', '/flags', { token: made.key })).status).toBe(200);
    // Revoked by its id as the line says, so the environment's live keys are as the next tests expect.
    expect((await runHearth(['keys', 'revoke', made.keyId], env)).code).toBe(0);
  });

  test('a revoked key is refused 401 by a running API within moments (pushed over Redis, not the cache TTL)', async () => {
    const made = await createKey('alpha-live', 'to revoke');
    // A second API process: both have this key freshly cached, so only the pushed revocation can drop it in time.
    // The second's clock stands still: its copy never expires at all.
    const other = await startApiInstance({ db: database.db, redisPrefix: env.REDIS_PREFIX, masterKey, clock: new TestClock({ at: Date.now() }) });
    try {
      expect((await call(api.base, 'GET', '/flags', { token: made.key })).status).toBe(200);
      expect((await call(other.base, 'GET', '/flags', { token: made.key })).status).toBe(200);
      const cachedAt = Date.now();

      const heard: unknown[] = [];
      const listener = new Redis(TEST_REDIS_URL);
      listener.on('message', (_channel: string, message: string) => heard.push(JSON.parse(message)));
      await listener.subscribe(`${env.REDIS_PREFIX}invalidate`);
      let run;
      try {
        run = await runHearth(['keys', 'revoke', made.keyId, '--json'], env);
        // The command has exited, its announcement made: wait for it to reach this listener.
        await eventually(async () => heard.length > 0, 2000, 10);
      } finally {
        listener.disconnect();
      }
      // The revocation is pushed to every process on the deployment's own prefix.
      expect(heard).toContainEqual({ kind: 'server-key', keyId: made.keyId });
      expect(run.code).toBe(0);
      expect(JSON.parse(run.stdout)).toMatchObject({ keyId: made.keyId, name: 'to revoke' });
      expect(JSON.parse(run.stdout).revokedAt).not.toBeNull();
      const revokedAt = Date.now();

      let status = 0;
      let seenAt = 0;
      await eventually(
        async () => {
          status = (await call(other.base, 'GET', '/flags', { token: made.key })).status;
          seenAt = Date.now();
          return status === 401;
        },
        1000,
        25,
      ).catch(() => undefined); // the assertions below say what was seen
      expect(status).toBe(401);
      expect(seenAt - revokedAt).toBeLessThan(1000);
      // The verifier caches a key for 5 s: when the CLI was quick, a 401 before then is the push's doing.
      if (revokedAt - cachedAt < 4000) expect(seenAt - cachedAt).toBeLessThan(5000);
      const firstSeenAt = Date.now();
      expectError(await call(api.base, 'GET', '/flags', { token: made.key }), 401, 'unauthorized');
      if (revokedAt - cachedAt < 4000) expect(firstSeenAt - cachedAt).toBeLessThan(5000);
    } finally {
      await other.stop();
    }

    const row = await database.db('server_keys').where({ key_id: made.keyId }).first();
    expect(row.revoked_at).not.toBeNull();
    const list = await runHearth(['keys', 'list', '--environment', 'alpha-live'], env);
    // Its REVOKED column holds the time it was revoked.
    expect(
      list.stdout
        .split('\n')
        .find((l) => l.startsWith(made.keyId))
        ?.split(/\s{2,}/)
        .at(-1),
    ).toMatch(/^\d{4}-\d\d-\d\dT/);
  });

  test('an unknown key id, or one already revoked, is exit 1 naming it', async () => {
    const unknown = await runHearth(['keys', 'revoke', 'NoSuchKey0000000'], env);
    expect(unknown.code).toBe(1);
    expect(oneLine(unknown.stderr)).toBe('hearth: no live server key has id "NoSuchKey0000000"');

    const made = await createKey('plain-live', 'twice');
    expect((await runHearth(['keys', 'revoke', made.keyId], env)).code).toBe(0);
    const revokedAt = (await database.db('server_keys').where({ key_id: made.keyId }).first()).revoked_at;
    const again = await runHearth(['keys', 'revoke', made.keyId], env);
    expect(again.code).toBe(1);
    expect(oneLine(again.stderr)).toBe(`hearth: no live server key has id "${made.keyId}"`);
    expect((await database.db('server_keys').where({ key_id: made.keyId }).first()).revoked_at).toEqual(revokedAt);
  });
});

describe('signing-keys rotate', () => {
  test('needs HEARTH_MASTER_KEY, named in one line', async () => {
    const run = await runHearth(['signing-keys', 'rotate', '--json'], { ...env, HEARTH_MASTER_KEY: undefined });
    expect(run.code).toBe(1);
    expect(oneLine(run.stderr)).toMatch(/^hearth: HEARTH_MASTER_KEY: is required/);
  });

  test('--json answers the new kid and the retired one; the API publishes both, the new first', async () => {
    const before = await call(api.base, 'GET', '/.well-known/jwks.json');
    expect(before.body.keys).toHaveLength(1);
    const oldKid = before.body.keys[0].kid;

    const run = await runHearth(['signing-keys', 'rotate', '--json'], env);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const result = JSON.parse(run.stdout);
    expect(result).toEqual({ kid: expect.any(String), retired: [oldKid] });
    expect(result.kid).not.toBe(oldKid);
    // The player tokens' set only: the licence tokens' keys are a set of their own, rotated apart.
    const rows = await database.db('signing_keys').where({ key_set: 'player' }).orderBy('created_at');
    expect(rows.map((r) => [r.kid, r.retired_at === null])).toEqual([
      [oldKid, false],
      [result.kid, true],
    ]);

    let kids: string[] = [];
    await eventually(
      async () => {
        kids = (await call(api.base, 'GET', '/.well-known/jwks.json')).body.keys.map((k: { kid: string }) => k.kid);
        return kids[0] === result.kid;
      },
      2000,
      50,
    ).catch(() => undefined); // the assertion below says what was seen
    expect(kids).toEqual([result.kid, oldKid]);
  });
});

describe('migrate', () => {
  test('--json lists what it applied on an empty database, and nothing the second time', async () => {
    const name = `hearth_t_${randomBytes(6).toString('hex')}`;
    const admin = knexFactory({ client: 'pg', connection: TEST_DATABASE_URL, pool: { min: 0, max: 1 } });
    await admin.raw(`CREATE DATABASE ${name}`);
    try {
      const first = await runHearth(['migrate', '--json'], { DATABASE_URL: databaseUrl(name) }, 60_000);
      expect(first.stderr).toBe('');
      expect(first.code).toBe(0);
      const applied = JSON.parse(first.stdout).applied as string[];
      expect(applied.length).toBeGreaterThan(0);
      expect(applied[0]).toMatch(/^20261121000000_tenancy_credentials_players_content\.ts$/);

      const db = createDb(databaseUrl(name), 1);
      try {
        const done = await db('knex_migrations').orderBy('id').pluck('name');
        expect(done).toEqual(applied);
        expect(await db.schema.hasTable('config_values')).toBe(true);
      } finally {
        await db.destroy();
      }

      const second = await runHearth(['migrate', '--json'], { DATABASE_URL: databaseUrl(name) });
      expect(second.code).toBe(0);
      expect(JSON.parse(second.stdout)).toEqual({ applied: [], functions: [] });
      const text = await runHearth(['migrate'], { DATABASE_URL: databaseUrl(name) });
      expect(text.stdout.trim()).toBe('database is up to date');
    } finally {
      await admin.raw(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.destroy();
    }
  });

  test('without DATABASE_URL it is exit 1 naming the variable', async () => {
    const run = await runHearth(['migrate', '--json'], {});
    expect(run.code).toBe(1);
    expect(oneLine(run.stderr)).toBe('hearth: DATABASE_URL: is required');
  });

  test('beside a hearth dev that was killed (its connection.json left, its process gone) it says so in one line', async () => {
    const checkout = tempDir();
    fs.mkdirSync(path.join(checkout, '.hearth'));
    // The pid of a process that has ended: a node that exits at once, waited for.
    const ended = spawnSync(process.execPath, ['-e', 'process.exit(0)']);
    fs.writeFileSync(
      path.join(checkout, '.hearth', 'connection.json'),
      JSON.stringify({ databaseUrl: 'postgres://hearth:x@127.0.0.1:1/hearth', pid: ended.pid }),
    );
    const run = await runHearth(['keys', 'list', '--environment', 'demo-dev'], {}, 20_000, checkout);
    expect(run.code).toBe(1);
    expect(oneLine(run.stderr)).toBe('hearth: hearth dev is not running (its data is in .hearth/); start it (make dev), or set DATABASE_URL');
  });
});
