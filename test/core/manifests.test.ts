/**
 * Manifests at the unit level, against a real database: validateManifest's messages, and how a
 * GameConfig owns its rows and moves the content version.
 */
import { type AnyManifest, API_VERSION, ManifestError, type ReconcileResult, applyManifests, loadManifests, validateManifest } from '@hearth/core/manifests';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type TestDatabase, createTestDatabase, toYaml } from '../support/harness';
import { NAMESPACE, environment, gameConfig, plan, project, standardManifests } from '../support/manifests';

let database: TestDatabase;
let liveId: number;
let testId: number;

function loaded(docs: AnyManifest[]) {
  return docs.map((doc, i) => ({ doc: validateManifest(JSON.parse(JSON.stringify(doc)), `t.yaml#${i + 1}`), origin: `t.yaml#${i + 1}` }));
}
const apply = (docs: AnyManifest[]): Promise<ReconcileResult[]> => applyManifests(database.db, loaded(docs));

/** The ManifestError a promise or call ends with (fails the test when there is none). */
async function refusal(run: () => unknown): Promise<ManifestError> {
  try {
    await run();
  } catch (err) {
    expect(err).toBeInstanceOf(ManifestError);
    return err as ManifestError;
  }
  throw new Error('expected a ManifestError');
}

async function version(envId: number): Promise<number> {
  const row = await database.db('content_versions').where({ environment_id: envId, kind: 'game-config' }).first();
  return row ? Number(row.version) : 0;
}

async function content(envId: number) {
  const db = database.db;
  return {
    values: await db('config_values').where({ environment_id: envId }).orderBy('key').select('key', 'owner', 'type', 'value', 'group_name'),
    tables: await db('config_tables').where({ environment_id: envId }).orderBy('key').select('key', 'owner', 'rows'),
    flags: await db('flags').where({ environment_id: envId }).orderBy('name').select('name', 'owner', 'enabled'),
  };
}

beforeAll(async () => {
  database = await createTestDatabase();
  await apply(standardManifests());
  liveId = Number((await database.db('environments').where({ app_key: 'alpha-live' }).first()).id);
  testId = Number((await database.db('environments').where({ app_key: 'alpha-test' }).first()).id);
});
afterAll(async () => {
  await database.drop();
});

test('an unknown field far from every field the object takes gets no guess', () => {
  const doc = {
    apiVersion: API_VERSION,
    kind: 'Tour',
    metadata: { name: 'basics', namespace: 'games' },
    spec: { environment: 'live', name: 'Basics', colour: 'red' },
  };
  expect(() => validateManifest(doc, 'games.yaml#1')).toThrow(expect.objectContaining({ field: 'spec.colour', reason: 'is not taken here' }));
});

describe('validateManifest names the document, the field and the reason', () => {
  const base = { apiVersion: API_VERSION, metadata: { name: 'starfall', namespace: 'games' } };
  const projectSpec = { plan: 'free', review: 'approved', sessionSeats: 4, services: {} };

  test.each([
    ['an unknown kind', { ...base, kind: 'Planet', spec: {} }, 'kind', 'must be one of Plan, Project, GameEnvironment, ServerKey, GameConfig'],
    ['no kind', { ...base, spec: {} }, 'kind', 'must be one of Plan, Project, GameEnvironment, ServerKey, GameConfig'],
    ['another apiVersion', { ...base, apiVersion: 'hearth.gg/v2', kind: 'Project', spec: projectSpec }, 'apiVersion', 'must be "hearth.gg/v1alpha1"'],
    ['an unknown spec field', { ...base, kind: 'Project', spec: { ...projectSpec, seats: 4 } }, 'spec.seats', 'is not taken here'],
    ['an unknown service', { ...base, kind: 'Project', spec: { ...projectSpec, services: { chat: true } } }, 'spec.services.chat', 'is not taken here'],
    // A typo of a field the object takes: the nearest is suggested; a word far from every field gets no guess.
    [
      'a mistyped field',
      { ...base, kind: 'CardType', spec: { environment: 'live', name: 'Archer', perDecklimit: 3 } },
      'spec.perDecklimit',
      'is not taken here (did you mean perDeckLimit?)',
    ],
    [
      'a mistyped field in a list',
      { ...base, kind: 'SkillTree', spec: { environment: 'live', name: 'T', nodes: [{ key: 'a', name: 'A', parnets: [] }] } },
      'spec.nodes.0.parnets',
      'is not taken here (did you mean parents?)',
    ],
    ['a field far from any', { ...base, kind: 'Tour', spec: { environment: 'live', name: 'Basics', colour: 'red' } }, 'spec.colour', 'is not taken here'],
    ['a wrong type', { ...base, kind: 'Project', spec: { ...projectSpec, sessionSeats: '4' } }, 'spec.sessionSeats', 'must be integer'],
    ['a number out of range', { ...base, kind: 'Project', spec: { ...projectSpec, sessionSeats: 0 } }, 'spec.sessionSeats', 'must be >= 1'],
    [
      'a review state not in the list',
      { ...base, kind: 'Project', spec: { ...projectSpec, review: 'Approved' } },
      'spec.review',
      'must be one of "pending", "approved", "rejected", "suspended"',
    ],
    ['a missing spec field', { ...base, kind: 'GameEnvironment', spec: { project: 'starfall' } }, 'spec.appKey', 'is required'],
    ['no spec', { ...base, kind: 'ServerKey' }, 'spec', 'is required'],
    [
      'a name Kubernetes would refuse',
      { ...base, metadata: { name: 'Star Fall' }, kind: 'ServerKey', spec: { environment: 'live' } },
      'metadata.name',
      'must match pattern',
    ],
    [
      'a config value that is not a cell',
      { ...base, kind: 'GameConfig', spec: { environment: 'live', values: [{ key: 'k', type: 'int', value: [1] }] } },
      'spec.values.0.value',
      'must be one of string, number, boolean, null',
    ],
    [
      'a config key with a space',
      { ...base, kind: 'GameConfig', spec: { environment: 'live', values: [{ key: 'a b', type: 'int', value: 1 }] } },
      'spec.values.0.key',
      'must match pattern',
    ],
    [
      'a column type that does not exist',
      {
        ...base,
        kind: 'GameConfig',
        spec: { environment: 'live', tables: [{ key: 't', name: 'T', columns: [{ key: 'c', label: 'C', type: 'date' }], rows: [] }] },
      },
      'spec.tables.0.columns.0.type',
      'must be one of "string", "int", "float", "bool"',
    ],
  ])('%s', (_what, doc, field, reason) => {
    let error: unknown;
    try {
      validateManifest(doc, 'games.yaml#3');
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ManifestError);
    const e = error as ManifestError;
    expect(e.field).toBe(field);
    expect(e.reason).toContain(reason);
    const kind = typeof (doc as { kind?: unknown }).kind === 'string' ? (doc as { kind: string }).kind : 'document';
    const name = (doc.metadata as { namespace?: string }).namespace ? `games/${doc.metadata.name}` : doc.metadata.name;
    expect(e.document).toBe(`games.yaml#3 ${kind} ${name}`);
    expect(e.message).toBe(`games.yaml#3 ${kind} ${name}: ${field} ${e.reason}`);
  });

  test('a good document passes unchanged', () => {
    const doc = { ...base, kind: 'Project', spec: projectSpec };
    expect(validateManifest(JSON.parse(JSON.stringify(doc)))).toEqual(doc);
  });

  test('loadManifests reads a file, skips empty documents, and names the bad one by file#index', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-manifests-'));
    try {
      const file = path.join(dir, 'games.yaml');
      fs.writeFileSync(file, `${toYaml([plan('p1')])}---\n---\n${toYaml([plan('p2')])}`);
      expect(loadManifests(file).map((l) => [l.origin, l.doc.metadata.name])).toEqual([
        ['games.yaml#1', 'p1'],
        ['games.yaml#3', 'p2'],
      ]);
      fs.writeFileSync(file, `${toYaml([plan('p1'), { ...plan('p2'), spec: { sessionSeats: 2 } } as AnyManifest])}`);
      expect(() => loadManifests(file)).toThrow('games.yaml#2 Plan p2: spec.playersPerEnvironment is required');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('reconcile refusals', () => {
  test('a Project whose plan does not exist, and seats over the plan', async () => {
    const noPlan = await refusal(() => apply([project('orphan', { plan: 'gold' })]));
    expect([noPlan.document, noPlan.field]).toEqual([`t.yaml#1 Project ${NAMESPACE}/orphan`, 'spec.plan']);
    expect(noPlan.reason).toBe('names plan "gold", which does not exist');

    const tooMany = await refusal(() => apply([project('greedy', { sessionSeats: 17 })]));
    expect([tooMany.field, tooMany.reason]).toEqual(['spec.sessionSeats', 'is 17, more than plan "test" allows (16)']);
    expect(await database.db('projects').whereIn('name', ['orphan', 'greedy'])).toEqual([]);
  });

  test('an app key belongs to one environment, but re-applying an environment with its own app key is fine', async () => {
    const taken = await refusal(() => apply([environment('alpha-copy', 'alpha', 'alpha-live')]));
    expect([taken.field, taken.reason]).toEqual(['spec.appKey', `"alpha-live" is already the app key of GameEnvironment ${NAMESPACE}/alpha-live`]);
    const again = await apply([environment('alpha-live', 'alpha')]);
    expect(again.map((r) => r.action)).toEqual(['unchanged']);
  });
});

describe('GameConfig owns its rows', () => {
  const first = (spec: Record<string, unknown> = {}) =>
    gameConfig('first', {
      environment: 'alpha-live',
      values: [
        { key: 'speed', type: 'float', value: 1.5, groupName: 'movement' },
        { key: 'title', type: 'string', value: 'Hello' },
      ],
      tables: [
        {
          key: 'loot',
          name: 'Loot',
          columns: [{ key: 'weight', label: 'Weight', type: 'int' }],
          rows: [
            { key: 'gold', cells: { weight: 5 } },
            { key: 'gem', cells: { weight: 1 } },
          ],
        },
      ],
      flags: [
        { name: 'shop', enabled: true },
        { name: 'pvp', enabled: false },
      ],
      ...spec,
    });

  test('first apply creates, the same again is unchanged and keeps the version', async () => {
    expect((await apply([first()]))[0].action).toBe('created');
    expect(await version(liveId)).toBe(1);
    const rows = await content(liveId);
    expect(rows.flags).toEqual([
      { name: 'pvp', owner: `${NAMESPACE}/first`, enabled: false },
      { name: 'shop', owner: `${NAMESPACE}/first`, enabled: true },
    ]);
    expect(rows.tables[0].rows).toEqual([
      { key: 'gold', sortOrder: 0, cells: { weight: 5 } },
      { key: 'gem', sortOrder: 1, cells: { weight: 1 } },
    ]);

    expect((await apply([first()]))[0].action).toBe('unchanged');
    expect(await version(liveId)).toBe(1);
    expect(await content(liveId)).toEqual(rows);
  });

  test('a second GameConfig cannot take over a key the first owns', async () => {
    const before = await content(liveId);
    const v = await version(liveId);
    const second = (spec: Record<string, unknown>) => gameConfig('second', { environment: 'alpha-live', ...spec });

    const flag = await refusal(() =>
      apply([
        second({
          flags: [
            { name: 'fresh', enabled: true },
            { name: 'shop', enabled: false },
          ],
        }),
      ]),
    );
    expect([flag.document, flag.field, flag.reason]).toEqual([
      `t.yaml#1 GameConfig ${NAMESPACE}/second`,
      'spec.flags.1.name',
      `"shop" already belongs to GameConfig ${NAMESPACE}/first`,
    ]);
    const value = await refusal(() => apply([second({ values: [{ key: 'speed', type: 'float', value: 9 }] })]));
    expect(value.field).toBe('spec.values.0.key');
    const table = await refusal(() => apply([second({ tables: [{ key: 'loot', name: 'Mine', columns: [], rows: [] }] })]));
    expect(table.field).toBe('spec.tables.0.key');

    // Nothing moved, not even the second's own new flag listed before the clash.
    expect(await content(liveId)).toEqual(before);
    expect(await version(liveId)).toBe(v);
  });

  test('two GameConfigs share an environment; each sync touches only its own rows', async () => {
    const second = gameConfig('second', { environment: 'alpha-live', flags: [{ name: 'extra', enabled: true }] });
    expect((await apply([second]))[0].action).toBe('created');
    // Re-applying the first (which does not list `extra`) keeps the second's flag.
    expect((await apply([first()]))[0].action).toBe('unchanged');
    const flags = (await content(liveId)).flags.map((f) => [f.name, f.owner]);
    expect(flags).toEqual([
      ['extra', `${NAMESPACE}/second`],
      ['pvp', `${NAMESPACE}/first`],
      ['shop', `${NAMESPACE}/first`],
    ]);
    // Emptied, the second gives its flag up and the version moves once.
    const v = await version(liveId);
    expect((await apply([gameConfig('second', { environment: 'alpha-live' })]))[0].action).toBe('updated');
    expect(await version(liveId)).toBe(v + 1);
    expect((await content(liveId)).flags.map((f) => f.name)).toEqual(['pvp', 'shop']);
  });

  test('removing a flag, a value or a table from the document deletes it; the version bumps once', async () => {
    const v = await version(liveId);
    const result = await apply([
      first({
        values: [{ key: 'speed', type: 'float', value: 1.5, groupName: 'movement' }],
        tables: [],
        flags: [{ name: 'shop', enabled: true }],
      }),
    ]);
    expect(result[0].action).toBe('updated');
    expect(await version(liveId)).toBe(v + 1);
    const rows = await content(liveId);
    expect(rows.flags.map((f) => f.name)).toEqual(['shop']);
    expect(rows.values.map((r) => r.key)).toEqual(['speed']);
    expect(rows.tables).toEqual([]);
  });

  test('each kind of change is seen: a value, a group, a row order, a cell, a description', async () => {
    await apply([first()]);
    // Each change is to the original document; the last one's table is checked at the end.
    const changes: Record<string, unknown>[] = [
      {
        flags: [
          { name: 'shop', enabled: false },
          { name: 'pvp', enabled: false },
        ],
      },
      {
        values: [
          { key: 'speed', type: 'float', value: 2.5, groupName: 'movement' },
          { key: 'title', type: 'string', value: 'Hello' },
        ],
      },
      {
        values: [
          { key: 'speed', type: 'float', value: 2.5 },
          { key: 'title', type: 'string', value: 'Hello' },
        ],
      },
      {
        tables: [
          {
            key: 'loot',
            name: 'Loot',
            columns: [{ key: 'weight', label: 'Weight', type: 'int' }],
            rows: [
              { key: 'gem', cells: { weight: 1 } },
              { key: 'gold', cells: { weight: 5 } },
            ],
          },
        ],
      },
      {
        tables: [
          {
            key: 'loot',
            name: 'Loot',
            description: 'What drops',
            columns: [{ key: 'weight', label: 'Weight', type: 'int' }],
            rows: [
              { key: 'gem', cells: { weight: 2 } },
              { key: 'gold', cells: { weight: 5 } },
            ],
          },
        ],
      },
    ];
    for (const change of changes) {
      const v = await version(liveId);
      expect((await apply([first(change)]))[0].action).toBe('updated');
      expect(await version(liveId)).toBe(v + 1);
      expect((await apply([first(change)]))[0].action).toBe('unchanged');
      expect(await version(liveId)).toBe(v + 1);
    }
    const loot = (await content(liveId)).tables.find((t) => t.key === 'loot');
    expect(loot?.rows).toEqual([
      { key: 'gem', sortOrder: 0, cells: { weight: 2 } },
      { key: 'gold', sortOrder: 1, cells: { weight: 5 } },
    ]);
  });

  test('a cell of the wrong type, a cell of no column and a key listed twice are refused naming the field', async () => {
    const before = await content(liveId);
    const v = await version(liveId);
    const table = (cells: Record<string, unknown>) => ({
      key: 'loot',
      name: 'Loot',
      columns: [{ key: 'weight', label: 'Weight', type: 'int' }],
      rows: [{ key: 'gold', cells }],
    });

    const cases: [Record<string, unknown>, string, string][] = [
      [{ values: [{ key: 'speed', type: 'int', value: 1.5 }] }, 'spec.values.0.value', 'must be of type int'],
      [{ values: [{ key: 'speed', type: 'bool', value: 'yes' }] }, 'spec.values.0.value', 'must be of type bool'],
      [{ values: [{ key: 'speed', type: 'string', value: 1 }] }, 'spec.values.0.value', 'must be of type string'],
      [{ tables: [table({ weight: 'heavy' })] }, 'spec.tables.0.rows.0.cells.weight', 'must be of type int'],
      [{ tables: [table({ colour: 'red' })] }, 'spec.tables.0.rows.0.cells.colour', 'is not a column of table "loot"'],
      [
        {
          flags: [
            { name: 'shop', enabled: true },
            { name: 'shop', enabled: false },
          ],
        },
        'spec.flags.1.name',
        '"shop" is listed twice',
      ],
      [
        {
          values: [
            { key: 'a', type: 'int', value: 1 },
            { key: 'a', type: 'int', value: 2 },
          ],
        },
        'spec.values.1.key',
        '"a" is listed twice',
      ],
    ];
    for (const [change, field, reason] of cases) {
      const e = await refusal(() => apply([first(change)]));
      expect([e.document, e.field, e.reason]).toEqual([`t.yaml#1 GameConfig ${NAMESPACE}/first`, field, reason]);
    }
    expect(await content(liveId)).toEqual(before);
    expect(await version(liveId)).toBe(v);
  });

  test('moved to another environment, a GameConfig takes its rows along and both versions move', async () => {
    const liveBefore = await version(liveId);
    const testBefore = await version(testId);
    const moved = gameConfig('first', { environment: 'alpha-test', flags: [{ name: 'shop', enabled: true }] });
    expect((await apply([moved]))[0].action).toBe('updated');
    expect((await content(liveId)).flags).toEqual([]);
    expect((await content(liveId)).values).toEqual([]);
    expect((await content(testId)).flags).toEqual([{ name: 'shop', owner: `${NAMESPACE}/first`, enabled: true }]);
    expect(await version(liveId)).toBe(liveBefore + 1);
    expect(await version(testId)).toBe(testBefore + 1);
    expect((await apply([moved]))[0].action).toBe('unchanged');
  });
});
