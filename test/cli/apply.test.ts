/**
 * `hearth apply -f FILE_OR_DIR` as a real subprocess against a fresh database: what it applies,
 * that applying again changes nothing, folders, and that a bad document leaves nothing applied.
 */
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { AnyManifest } from '@hearth/core/manifests';
import { type TestDatabase, createTestDatabase, startApiInstance, toYaml } from '../support/harness';
import { TEST_REDIS_URL } from '../support/env';
import { call, type Reply } from '../support/http';
import { eventually } from '../support/wait';
import { NAMESPACE, currency, environment, gameConfig, plan, project, serverKey } from '../support/manifests';
import { oneLine, runHearth, snapshot, tempDir } from './run-hearth';

jest.setTimeout(120_000); // every step runs the real command, a process start each

let database: TestDatabase;
/** The API processes these tests start share the database, so they seal its signing keys with one key. */
const API_MASTER_KEY = randomBytes(32);
let dir: string;
let env: Record<string, string>;

beforeAll(async () => {
  database = await createTestDatabase();
  dir = tempDir();
  env = { DATABASE_URL: database.url };
});
afterAll(async () => {
  await database.drop();
  fs.rmSync(dir, { recursive: true, force: true });
});

function write(name: string, docs: AnyManifest[] | string): string {
  const file = path.join(dir, name);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, typeof docs === 'string' ? docs : toYaml(docs));
  return file;
}

const starfallConfig = gameConfig('starfall-config', {
  environment: 'starfall-live',
  values: [
    { key: 'max_party_size', type: 'int', value: 4, groupName: 'matchmaking' },
    { key: 'motd', type: 'string', value: 'Welcome' },
    { key: 'xp_rate', type: 'float', value: 1.5 },
  ],
  tables: [
    {
      key: 'weapons',
      name: 'Weapons',
      groupName: 'balance',
      columns: [
        { key: 'damage', label: 'Damage', type: 'int' },
        { key: 'rare', label: 'Rare', type: 'bool' },
      ],
      rows: [
        { key: 'sword', cells: { damage: 10, rare: false } },
        { key: 'axe', cells: { damage: 12, rare: null } },
      ],
    },
  ],
  flags: [{ name: 'new_shop', enabled: true }],
});

const starfall: AnyManifest[] = [
  plan('starter', { serverKeysPerEnvironment: 2, sessionSeats: 8 }),
  project('starfall', { plan: 'starter', sessionSeats: 8 }),
  environment('starfall-live', 'starfall', 'starfall-live-key'),
  serverKey('game-servers', 'starfall-live'),
  starfallConfig,
];

describe('a file of every kind', () => {
  let file: string;
  let firstRun: { results: { kind: string; namespace: string | null; name: string; action: string; serverKey?: { keyId: string; key: string } }[] };

  beforeAll(async () => {
    file = write('starfall.yaml', starfall);
    const run = await runHearth(['apply', '-f', file, '--json'], env);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    firstRun = JSON.parse(run.stdout); // one JSON document, nothing else on stdout
  });

  test('--json reports every document created, and the minted key once', () => {
    const results = firstRun.results.map(({ serverKey: _key, ...rest }) => rest);
    expect(results).toEqual([
      { kind: 'Plan', namespace: null, name: 'starter', action: 'created' },
      { kind: 'Project', namespace: NAMESPACE, name: 'starfall', action: 'created' },
      { kind: 'GameEnvironment', namespace: NAMESPACE, name: 'starfall-live', action: 'created' },
      { kind: 'ServerKey', namespace: NAMESPACE, name: 'game-servers', action: 'created' },
      { kind: 'GameConfig', namespace: NAMESPACE, name: 'starfall-config', action: 'created' },
    ]);
    expect(firstRun.results.filter((r) => r.serverKey)).toHaveLength(1);
    expect(firstRun.results[3].serverKey!.key).toMatch(new RegExp(`^hsk_${firstRun.results[3].serverKey!.keyId}_[0-9A-Za-z]{40}$`));
  });

  test('the database holds what the documents say', async () => {
    const db = database.db;
    const planRow = await db('plans').where({ name: 'starter' }).first();
    expect(planRow.spec).toEqual((starfall[0] as { spec: unknown }).spec);
    const projectRow = await db('projects').where({ namespace: NAMESPACE, name: 'starfall' }).first();
    expect(projectRow.plan_name).toBe('starter');
    expect(projectRow.spec.sessionSeats).toBe(8);
    const envRow = await db('environments').where({ namespace: NAMESPACE, name: 'starfall-live' }).first();
    expect({ project: Number(envRow.project_id), appKey: envRow.app_key }).toEqual({ project: Number(projectRow.id), appKey: 'starfall-live-key' });

    // Only the hash of the minted key's secret is stored.
    const minted = firstRun.results[3].serverKey!;
    const keys = await db('server_keys').where({ environment_id: envRow.id });
    expect(keys).toHaveLength(1);
    const secret = minted.key.split('_')[2];
    expect(keys[0]).toMatchObject({
      key_id: minted.keyId,
      name: 'game-servers',
      manifest_namespace: NAMESPACE,
      manifest_name: 'game-servers',
      revoked_at: null,
    });
    expect(Buffer.from(keys[0].secret_hash).equals(createHash('sha256').update(secret).digest())).toBe(true);
    expect(keys[0].secret_hint).toBe(secret.slice(-4));

    const values = await db('config_values').where({ environment_id: envRow.id }).orderBy('key');
    expect(values.map((v) => [v.key, v.type, v.value, v.group_name])).toEqual([
      ['max_party_size', 'int', 4, 'matchmaking'],
      ['motd', 'string', 'Welcome', null],
      ['xp_rate', 'float', 1.5, null],
    ]);
    const table = await db('config_tables').where({ environment_id: envRow.id, key: 'weapons' }).first();
    expect(table.rows).toEqual([
      { key: 'sword', sortOrder: 0, cells: { damage: 10, rare: false } },
      { key: 'axe', sortOrder: 1, cells: { damage: 12, rare: null } },
    ]);
    const flags = await db('flags').where({ environment_id: envRow.id });
    expect(flags.map((f) => [f.name, f.enabled, f.owner])).toEqual([['new_shop', true, `${NAMESPACE}/starfall-config`]]);
    const version = await db('content_versions').where({ environment_id: envRow.id }).first();
    expect(Number(version.version)).toBe(1);
  });

  test('applying the same file again says unchanged for each document and changes nothing', async () => {
    const before = await snapshot(database.db);
    const run = await runHearth(['apply', '-f', file], env);
    expect(run.code).toBe(0);
    expect(run.stderr).toBe('');
    expect(run.stdout.trim().split('\n')).toEqual([
      'Plan starter: unchanged',
      `Project ${NAMESPACE}/starfall: unchanged`,
      `GameEnvironment ${NAMESPACE}/starfall-live: unchanged`,
      `ServerKey ${NAMESPACE}/game-servers: unchanged`,
      `GameConfig ${NAMESPACE}/starfall-config: unchanged`,
    ]);
    expect(run.stdout).not.toContain('hsk_'); // no second key minted, none shown
    expect(await snapshot(database.db)).toEqual(before);
  });

  test('a changed GameConfig is the only document updated, and bumps the content version once', async () => {
    const changed = gameConfig('starfall-config', {
      ...(starfallConfig as { spec: Record<string, unknown> }).spec,
      flags: [{ name: 'new_shop', enabled: false }],
    });
    const changedFile = write('starfall-changed.yaml', [...starfall.slice(0, 4), changed]);
    const run = await runHearth(['apply', '-f', changedFile, '--json'], env);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout).results.map((r: { kind: string; action: string }) => `${r.kind}:${r.action}`)).toEqual([
      'Plan:unchanged',
      'Project:unchanged',
      'GameEnvironment:unchanged',
      'ServerKey:unchanged',
      'GameConfig:updated',
    ]);
    const versions = await database.db('content_versions');
    expect(versions.map((v) => Number(v.version))).toEqual([2]);
    expect((await database.db('flags').first()).enabled).toBe(false);
  });
});

describe('running API processes hear of an apply at once', () => {
  test('with REDIS_URL, a changed GameConfig shows on the next read (not after the cache expires)', async () => {
    const redisPrefix = `hearth-test:${randomBytes(6).toString('hex')}:`;
    const api = await startApiInstance({ db: database.db, redisPrefix, masterKey: API_MASTER_KEY });
    try {
      // A key of our own: the minted one was only shown once, to the first test.
      const made = await runHearth(['keys', 'create', '--environment', 'starfall-live-key', '--name', 'reader', '--json'], env);
      const token = JSON.parse(made.stdout).key as string;
      const first = await call(api.base, 'GET', '/flags', { token });
      expect(first.status).toBe(200);
      const etag = first.headers.get('etag')!;
      expect((await call(api.base, 'GET', '/flags', { token, headers: { 'If-None-Match': etag } })).status).toBe(304);

      const flipped = gameConfig('starfall-config', {
        ...(starfallConfig as { spec: Record<string, unknown> }).spec,
        flags: [
          { name: 'new_shop', enabled: true },
          { name: 'winter', enabled: true },
        ],
      });
      const file = write('starfall-pushed.yaml', [flipped]);
      const run = await runHearth(['apply', '-f', file], { ...env, REDIS_URL: TEST_REDIS_URL, REDIS_PREFIX: redisPrefix });
      expect(run.code).toBe(0);
      expect(run.stdout.trim()).toBe(`GameConfig ${NAMESPACE}/starfall-config: updated`);

      let reply!: Reply;
      await eventually(
        async () => (reply = await call(api.base, 'GET', '/flags', { token, headers: { 'If-None-Match': etag } })).status !== 304,
        1000,
        50,
      ).catch(() => undefined); // the assertions below say what was seen
      expect(reply.status).toBe(200);
      expect(reply.body.items).toEqual([
        { name: 'new_shop', isEnabled: true },
        { name: 'winter', isEnabled: true },
      ]);
      expect(reply.headers.get('etag')).not.toBe(etag);
    } finally {
      await api.stop();
    }
  });

  test('a ServerKey pointed at another environment is refused and its key keeps working; the explicit move (a new key, then the old revoked) reaches a cached API process at once over REDIS_URL', async () => {
    const redisPrefix = `hearth-test:${randomBytes(6).toString('hex')}:`;
    const withRedis = { ...env, REDIS_URL: TEST_REDIS_URL, REDIS_PREFIX: redisPrefix };
    const api = await startApiInstance({ db: database.db, redisPrefix, masterKey: API_MASTER_KEY });
    try {
      const placed = await runHearth(
        [
          'apply',
          '-f',
          write('mover.yaml', [
            environment('starfall-test', 'starfall', 'starfall-test-key'),
            environment('starfall-staging', 'starfall', 'starfall-staging-key'),
            serverKey('mover', 'starfall-test'),
          ]),
          '--json',
        ],
        withRedis,
      );
      expect(placed.code).toBe(0);
      const oldKey = JSON.parse(placed.stdout).results.find((r: { kind: string }) => r.kind === 'ServerKey').serverKey.key as string;
      expect((await call(api.base, 'GET', '/flags', { token: oldKey })).status).toBe(200);
      // The key's last use is written after the answer, off the request's path: waited for (bounded),
      // so the snapshot below does not race it.
      await eventually(async () => (await database.db('server_keys').where({ manifest_name: 'mover' }).first())?.last_used_at != null, 5_000);

      // A plain edit of spec.environment: refused, saying how a key moves; the live key is untouched.
      const before = await snapshot(database.db);
      const edited = await runHearth(['apply', '-f', write('mover-moved.yaml', [serverKey('mover', 'starfall-staging')])], withRedis);
      expect(edited.code).toBe(1);
      expect(oneLine(edited.stderr)).toContain(
        `ServerKey ${NAMESPACE}/mover: spec.environment is immutable: it names an identity; a key does not move: create a ServerKey in the other environment, deploy its key, then delete this one (it is "starfall-test")`,
      );
      expect(await snapshot(database.db)).toEqual(before);
      expect((await call(api.base, 'GET', '/flags', { token: oldKey })).status).toBe(200);

      // The move as the message says: a key of its own in the other environment, then the old one revoked.
      const made = await runHearth(['apply', '-f', write('mover-staging.yaml', [serverKey('mover-staging', 'starfall-staging')]), '--json'], withRedis);
      expect(made.code).toBe(0);
      const newKey = JSON.parse(made.stdout).results[0].serverKey.key as string;
      expect((await call(api.base, 'GET', '/flags', { token: newKey })).status).toBe(200);
      const revoked = await runHearth(['keys', 'revoke', oldKey.split('_')[1]], withRedis);
      expect(revoked.code).toBe(0);
      const revokedAt = Date.now();
      let status = 0;
      let seenAt = 0;
      await eventually(
        async () => {
          status = (await call(api.base, 'GET', '/flags', { token: oldKey })).status;
          seenAt = Date.now();
          return status === 401;
        },
        1000,
        25,
      ).catch(() => undefined); // the assertions below say what was seen
      expect(status).toBe(401);
      expect(seenAt - revokedAt).toBeLessThan(1000);
      expect((await call(api.base, 'GET', '/flags', { token: newKey })).status).toBe(200);
    } finally {
      await api.stop();
    }
  });
});

describe('a folder of several files', () => {
  test('applies every .yaml/.yml file, in dependency order whatever the file order, and nothing else', async () => {
    // The Project sorts before its Plan by file name; kinds are applied in dependency order anyway.
    const folder = path.join(dir, 'folder');
    write('folder/a-project.yaml', [project('nebula', { plan: 'nebula-plan' })]);
    write('folder/b-environments.yml', [environment('nebula-live', 'nebula'), environment('nebula-test', 'nebula')]);
    write('folder/c-plan.yaml', [plan('nebula-plan')]);
    write('folder/notes.txt', 'kind: Plan\nthis is not a manifest');
    const run = await runHearth(['apply', '-f', folder], env);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout.trim().split('\n')).toEqual([
      'Plan nebula-plan: created',
      `Project ${NAMESPACE}/nebula: created`,
      `GameEnvironment ${NAMESPACE}/nebula-live: created`,
      `GameEnvironment ${NAMESPACE}/nebula-test: created`,
    ]);
    const envs = await database.db('environments').where({ namespace: NAMESPACE }).whereIn('name', ['nebula-live', 'nebula-test']).orderBy('name');
    expect(envs.map((e) => e.app_key)).toEqual(['nebula-live', 'nebula-test']);

    const again = await runHearth(['apply', '-f', folder], env);
    expect(again.code).toBe(0);
    expect(
      again.stdout
        .trim()
        .split('\n')
        .every((l) => l.endsWith(': unchanged')),
    ).toBe(true);
  });
});

describe('a bad document is refused and nothing of its file is applied', () => {
  // Every bad file starts with a good, new Plan: it must not reach the database.
  const goodFirst = () => plan('must-not-exist');

  const cases: { name: string; docs: () => AnyManifest[]; expect: string[] }[] = [
    {
      name: 'an unknown field',
      docs: () => [
        goodFirst(),
        { ...project('oddball'), spec: { ...(project('oddball') as { spec: object }).spec, colour: 'blue' } } as unknown as AnyManifest,
      ],
      expect: ['bad.yaml#2', 'Project', `${NAMESPACE}/oddball`, 'spec.colour', 'is not taken here'],
    },
    {
      name: 'a field of the wrong type',
      docs: () => [goodFirst(), project('oddball', { sessionSeats: 'eight' as unknown as number })],
      expect: ['bad.yaml#2', 'Project', `${NAMESPACE}/oddball`, 'spec.sessionSeats', 'must be integer'],
    },
    {
      name: 'a review state that does not exist',
      docs: () => [goodFirst(), project('oddball', { review: 'maybe' as 'approved' })],
      expect: ['bad.yaml#2', 'Project', 'spec.review', 'must be one of "pending", "approved", "rejected", "suspended"'],
    },
    {
      name: 'a missing spec field',
      docs: () => [goodFirst(), { ...environment('oddball-live', 'starfall'), spec: { project: 'starfall' } } as AnyManifest],
      expect: ['bad.yaml#2', 'GameEnvironment', `${NAMESPACE}/oddball-live`, 'spec.appKey', 'is required'],
    },
    {
      name: 'a Project whose plan does not exist',
      docs: () => [goodFirst(), project('oddball', { plan: 'platinum' })],
      expect: ['bad.yaml#2', 'Project', `${NAMESPACE}/oddball`, 'spec.plan', 'plan "platinum", which does not exist'],
    },
    {
      name: "sessionSeats over the plan's",
      docs: () => [goodFirst(), project('oddball', { plan: 'starter', sessionSeats: 9 })],
      expect: ['bad.yaml#2', 'Project', `${NAMESPACE}/oddball`, 'spec.sessionSeats', 'is 9, more than plan "starter" allows (8)'],
    },
    {
      name: 'an app key already used by another environment',
      docs: () => [goodFirst(), environment('starfall-copy', 'starfall', 'starfall-live-key')],
      expect: [
        'bad.yaml#2',
        'GameEnvironment',
        `${NAMESPACE}/starfall-copy`,
        'spec.appKey',
        `already the app key of GameEnvironment ${NAMESPACE}/starfall-live`,
      ],
    },
    // Identity fields (immutable): the same rule the CRDs' transition rules give the API server.
    {
      name: "a live environment's app key changed",
      docs: () => [goodFirst(), environment('starfall-live', 'starfall', 'starfall-new-key')],
      expect: ['bad.yaml#2', 'GameEnvironment', `${NAMESPACE}/starfall-live`, 'spec.appKey is immutable', 'create it again', '(it is "starfall-live-key")'],
    },
    {
      name: "a live environment's project changed",
      docs: () => [goodFirst(), project('starfall-2', { plan: 'starter' }), environment('starfall-live', 'starfall-2', 'starfall-live-key')],
      expect: ['bad.yaml#3', 'GameEnvironment', `${NAMESPACE}/starfall-live`, 'spec.project is immutable', '(it is "starfall")'],
    },
    {
      name: 'a GameConfig value of the wrong type',
      docs: () => [
        goodFirst(),
        gameConfig('starfall-config', { environment: 'starfall-live', values: [{ key: 'max_party_size', type: 'int', value: 'four' }] }),
      ],
      expect: ['bad.yaml#2', 'GameConfig', `${NAMESPACE}/starfall-config`, 'spec.values.0.value', 'must be of type int'],
    },
    {
      name: 'a GameConfig table cell of the wrong type',
      docs: () => [
        goodFirst(),
        gameConfig('starfall-config', {
          environment: 'starfall-live',
          tables: [
            { key: 'weapons', name: 'Weapons', columns: [{ key: 'damage', label: 'Damage', type: 'int' }], rows: [{ key: 'sword', cells: { damage: 1.5 } }] },
          ],
        }),
      ],
      expect: ['bad.yaml#2', 'GameConfig', 'spec.tables.0.rows.0.cells.damage', 'must be of type int'],
    },
    {
      name: 'a GameConfig naming an environment that does not exist',
      docs: () => [goodFirst(), gameConfig('ghost-config', { environment: 'ghost' })],
      expect: ['bad.yaml#2', 'GameConfig', `${NAMESPACE}/ghost-config`, 'spec.environment', '"ghost", which does not exist'],
    },
  ];

  test.each(cases)('$name', async (c) => {
    const file = write('bad.yaml', c.docs());
    const before = await snapshot(database.db);
    const run = await runHearth(['apply', '-f', file], env);
    expect(run.code).not.toBe(0);
    expect(run.stdout).toBe('');
    const line = oneLine(run.stderr);
    for (const part of c.expect) expect(line).toContain(part);
    expect(await database.db('plans').where({ name: 'must-not-exist' }).first()).toBeUndefined();
    expect(await snapshot(database.db)).toEqual(before);
  });

  test('a refusal after good documents of every kind rolls all of them back', async () => {
    // These pass schema checks and get reconciled (in the transaction) before the bad one fails.
    const file = write('bad.yaml', [
      plan('rollback-plan'),
      project('rollback', { plan: 'rollback-plan' }),
      environment('rollback-live', 'rollback'),
      serverKey('rollback-key', 'rollback-live'),
      gameConfig('rollback-config', { environment: 'rollback-live', flags: [{ name: 'x', enabled: true }] }),
      gameConfig('rollback-config-2', { environment: 'rollback-live', flags: [{ name: 'x', enabled: false }] }),
    ]);
    const before = await snapshot(database.db);
    const run = await runHearth(['apply', '-f', file, '--json'], env);
    expect(run.code).not.toBe(0);
    expect(run.stdout).toBe('');
    const line = oneLine(run.stderr);
    expect(line).toContain(`bad.yaml#6 GameConfig ${NAMESPACE}/rollback-config-2`);
    expect(line).toContain(`spec.flags.0.name "x" already belongs to GameConfig ${NAMESPACE}/rollback-config`);
    expect(await snapshot(database.db)).toEqual(before);
  });

  test("a currency's key (defaulted to its name) or environment changed: refused; the same document again is unchanged", async () => {
    const gold = currency('gold', { environment: 'starfall-live', name: 'Gold', scope: 'account', kind: 'balance' });
    expect((await runHearth(['apply', '-f', write('gold.yaml', [gold])], env)).code).toBe(0);
    const keyChange = write('bad.yaml', [currency('gold', { environment: 'starfall-live', key: 'coins', name: 'Gold', scope: 'account', kind: 'balance' })]);
    const before = await snapshot(database.db);
    const run = await runHearth(['apply', '-f', keyChange], env);
    expect(run.code).not.toBe(0);
    expect(oneLine(run.stderr)).toContain(`Currency ${NAMESPACE}/gold: spec.key is immutable`);
    expect(oneLine(run.stderr)).toContain('(it is "gold")');
    // Moved to another environment: refused too (its balances stay where they are).
    const moved = write('bad.yaml', [
      environment('starfall-test', 'starfall', 'starfall-test-key'),
      currency('gold', { environment: 'starfall-test', name: 'Gold', scope: 'account', kind: 'balance' }),
    ]);
    const movedRun = await runHearth(['apply', '-f', moved], env);
    expect(movedRun.code).not.toBe(0);
    expect(oneLine(movedRun.stderr)).toContain('spec.environment is immutable');
    expect(oneLine(movedRun.stderr)).toContain('(it is "starfall-live")');
    expect(await snapshot(database.db)).toEqual(before);
    // The key written out as it was (its name) is no change.
    const same = await runHearth(
      [
        'apply',
        '-f',
        write('gold.yaml', [currency('gold', { environment: 'starfall-live', key: 'gold', name: 'Gold', scope: 'account', kind: 'balance' })]),
        '--json',
      ],
      env,
    );
    expect(same.code).toBe(0);
    expect(JSON.parse(same.stdout).results[0].action).toBe('unchanged');
  });

  test('YAML that does not parse names the document', async () => {
    const file = write('bad.yaml', `${toYaml([plan('must-not-exist')])}---\nkind: Plan\nmetadata: { name: [unclosed\n`);
    const run = await runHearth(['apply', '-f', file], env);
    expect(run.code).not.toBe(0);
    // The document, and the line of the file the parser points at, quoted.
    expect(oneLine(run.stderr)).toMatch(/bad\.yaml#2.* at line \d+, column \d+: "metadata: \{ name: \[unclosed"( \(line \d+\))?$/);
    expect(await database.db('plans').where({ name: 'must-not-exist' }).first()).toBeUndefined();
  });

  test('a file that does not exist', async () => {
    const run = await runHearth(['apply', '-f', path.join(dir, 'nope.yaml')], env);
    expect(run.code).toBe(1);
    expect(oneLine(run.stderr)).toMatch(/nope\.yaml: no such file or folder$/);
  });
});
