/**
 * Config values, config tables and flags (spec §4 Config and flags; §2 ConfigRow, ConfigTable,
 * Flag): order, shapes, filters, path rules, credentials, review and service switches, tenancy,
 * and conditional reads.
 */
import { type Harness, startHarness } from '../support/harness';
import { gameConfig, standardManifests } from '../support/manifests';
import { type Reply, call, expectError, signIn } from '../support/http';

let h: Harness;
let liveKey: string;
let testKey: string;
let playerToken: string;

const liveConfig = gameConfig('alpha-live-config', {
  environment: 'alpha-live',
  values: [
    { key: 'a', type: 'string', value: 'lower a', groupName: 'b' },
    { key: 'B', type: 'int', value: 7, groupName: 'a' },
    { key: '_x', type: 'bool', value: false, groupName: 'a' },
    { key: 'f', type: 'float', value: 0.25 },
    { key: 'unset', type: 'int', value: null },
  ],
  tables: [
    {
      key: 'weapons',
      name: 'Weapons',
      description: 'What players hit with',
      groupName: 'balance',
      columns: [
        { key: 'damage', label: 'Damage', type: 'int' },
        { key: 'rare', label: 'Rare', type: 'bool' },
        { key: 'title', label: 'Title', type: 'string' },
      ],
      // The editor's order, on purpose not the keys' order.
      rows: [
        { key: 'sword', cells: { damage: 10, rare: false, title: 'Sword' } },
        { key: 'axe', cells: { damage: 12, rare: null } },
        { key: 'bow', cells: { damage: 7, rare: true, title: 'Bow' } },
      ],
    },
    { key: 'Zones', name: 'Zones', columns: [{ key: 'level', label: 'Level', type: 'float' }], rows: [] },
    { key: 'armor', name: 'Armor', columns: [], rows: [] },
  ],
  flags: [
    { name: 'new_shop', enabled: true },
    { name: 'Beta', enabled: false },
    { name: '_hidden', enabled: true },
  ],
});

const testConfig = gameConfig('alpha-test-config', {
  environment: 'alpha-test',
  values: [{ key: 'test_only', type: 'string', value: 'test' }],
  tables: [{ key: 'test-table', name: 'Test table', columns: [], rows: [] }],
  flags: [{ name: 'test_flag', enabled: true }],
});

// Same keys in another environment: a different thing, never mixed up.
const plainConfig = gameConfig('plain-live-config', {
  environment: 'plain-live',
  values: [{ key: 'B', type: 'int', value: 1 }],
  flags: [{ name: 'new_shop', enabled: false }],
});

beforeAll(async () => {
  h = await startHarness({ manifests: [...standardManifests(), liveConfig, testConfig, plainConfig] });
  liveKey = h.serverKeys['alpha-live-key'];
  testKey = h.serverKeys['alpha-test-key'];
  playerToken = (await signIn(h.base, liveKey, 'config-reader')).accessToken;
});
afterAll(async () => {
  await h.close();
});

const nulls = { valueStr: null, valueInt: null, valueFloat: null, valueBool: null, LevelRateConfig: null };
const weapons = {
  key: 'weapons',
  name: 'Weapons',
  description: 'What players hit with',
  groupName: 'balance',
  columns: [
    { key: 'damage', label: 'Damage', type: 'int' },
    { key: 'rare', label: 'Rare', type: 'bool' },
    { key: 'title', label: 'Title', type: 'string' },
  ],
  rows: [
    { key: 'sword', sortOrder: 0, cells: { damage: 10, rare: false, title: 'Sword' } },
    { key: 'axe', sortOrder: 1, cells: { damage: 12, rare: null } },
    { key: 'bow', sortOrder: 2, cells: { damage: 7, rare: true, title: 'Bow' } },
  ],
};

describe('GET /config/values', () => {
  const allValues = [
    { key: 'B', groupName: 'a', type: 'int', ...nulls, valueInt: 7 },
    { key: '_x', groupName: 'a', type: 'bool', ...nulls, valueBool: false },
    { key: 'a', groupName: 'b', type: 'string', ...nulls, valueStr: 'lower a' },
    { key: 'f', groupName: null, type: 'float', ...nulls, valueFloat: 0.25 },
    { key: 'unset', groupName: null, type: 'int', ...nulls },
  ];

  test('a page ordered by key in byte order, only the value field of its type set', async () => {
    const reply = await call(h.base, 'GET', '/config/values', { token: liveKey });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ items: allValues, next: null });
    // Every field of ConfigRow present, even when null.
    for (const item of reply.body.items) {
      expect(Object.keys(item).sort()).toEqual(['LevelRateConfig', 'groupName', 'key', 'type', 'valueBool', 'valueFloat', 'valueInt', 'valueStr']);
    }
  });

  test('a player token reads the same', async () => {
    const reply = await call(h.base, 'GET', '/config/values', { token: playerToken });
    expect(reply.status).toBe(200);
    expect(reply.body.items).toEqual(allValues);
  });

  test('pages follow the same order through the cursor', async () => {
    const keys: string[] = [];
    let cursor: string | null = null;
    for (let i = 0; i < 10; i++) {
      const reply: Reply = await call(h.base, 'GET', `/config/values?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { token: liveKey });
      expect(reply.status).toBe(200);
      expect(reply.body.items.length).toBeLessThanOrEqual(2);
      keys.push(...reply.body.items.map((r: { key: string }) => r.key));
      cursor = reply.body.next;
      if (!cursor) break;
    }
    expect(keys).toEqual(['B', '_x', 'a', 'f', 'unset']);
  });

  test('groupName filters, exactly', async () => {
    const a = await call(h.base, 'GET', '/config/values?groupName=a', { token: liveKey });
    expect(a.status).toBe(200);
    expect(a.body).toEqual({ items: allValues.filter((v) => v.groupName === 'a'), next: null });
    const b = await call(h.base, 'GET', '/config/values?groupName=b', { token: liveKey });
    expect(b.body.items.map((r: { key: string }) => r.key)).toEqual(['a']);
    const upper = await call(h.base, 'GET', '/config/values?groupName=A', { token: liveKey });
    expect(upper.body).toEqual({ items: [], next: null });
  });

  test('groupName of 120 characters is taken; 121 or none is 400 query.groupName', async () => {
    const ok = await call(h.base, 'GET', `/config/values?groupName=${'g'.repeat(120)}`, { token: liveKey });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ items: [], next: null });
    expectError(await call(h.base, 'GET', `/config/values?groupName=${'g'.repeat(121)}`, { token: liveKey }), 400, 'invalid-request', 'query.groupName');
    expectError(await call(h.base, 'GET', '/config/values?groupName=', { token: liveKey }), 400, 'invalid-request', 'query.groupName');
  });

  test('an unknown query parameter, a bad limit or a foreign cursor is 400 naming it', async () => {
    expectError(await call(h.base, 'GET', '/config/values?group=a', { token: liveKey }), 400, 'invalid-request', 'query.group');
    expectError(await call(h.base, 'GET', '/config/values?limit=0', { token: liveKey }), 400, 'invalid-request', 'query.limit');
    expectError(await call(h.base, 'GET', '/config/values?limit=201', { token: liveKey }), 400, 'invalid-request', 'query.limit');
    // A cursor made by another list (flags) is not this list's.
    const flags = await call(h.base, 'GET', '/flags?limit=1', { token: liveKey });
    expect(flags.body.next).toEqual(expect.any(String));
    expectError(
      await call(h.base, 'GET', `/config/values?cursor=${encodeURIComponent(flags.body.next)}`, { token: liveKey }),
      400,
      'invalid-request',
      'query.cursor',
    );
    // Nor is the same list's cursor with another filter.
    const page = await call(h.base, 'GET', '/config/values?groupName=a&limit=1', { token: liveKey });
    expectError(
      await call(h.base, 'GET', `/config/values?groupName=b&cursor=${encodeURIComponent(page.body.next)}`, { token: liveKey }),
      400,
      'invalid-request',
      'query.cursor',
    );
  });
});

describe('GET /config/tables and /config/tables/:key', () => {
  test('a page of tables ordered by key in byte order, rows in the editor order with sortOrder', async () => {
    const reply = await call(h.base, 'GET', '/config/tables', { token: liveKey });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({
      items: [
        { key: 'Zones', name: 'Zones', description: null, groupName: null, columns: [{ key: 'level', label: 'Level', type: 'float' }], rows: [] },
        { key: 'armor', name: 'Armor', description: null, groupName: null, columns: [], rows: [] },
        weapons,
      ],
      next: null,
    });
  });

  test('one table, with a server key and with a player token', async () => {
    for (const token of [liveKey, playerToken]) {
      const reply = await call(h.base, 'GET', '/config/tables/weapons', { token });
      expect(reply.status).toBe(200);
      expect(reply.body).toEqual(weapons);
    }
  });

  test('an unknown key is 404 not-found; keys compare exactly', async () => {
    expectError(await call(h.base, 'GET', '/config/tables/nope', { token: liveKey }), 404, 'not-found');
    expectError(await call(h.base, 'GET', '/config/tables/Weapons', { token: liveKey }), 404, 'not-found');
    expect((await call(h.base, 'GET', '/config/tables/weapons/', { token: liveKey })).status).toBe(200);
  });

  test.each([
    ['a space (%20)', 'wea%20pons'],
    ['a tab (%09)', 'wea%09pons'],
    ['an escaped % (%25)', 'wea%25pons'],
    ['a bare %', 'wea%pons'],
    ['a ? (%3F)', 'wea%3Fpons'],
    ['a backslash (%5C)', 'wea%5Cpons'],
    ['an encoded / (%2F)', 'wea%2Fpons'],
    ['201 characters', 'k'.repeat(201)],
  ])('a key with %s is 400 path.key', async (_what, key) => {
    expectError(await call(h.base, 'GET', `/config/tables/${key}`, { token: liveKey }), 400, 'invalid-request', 'path.key');
  });

  test('a key of 200 characters is taken (and not found)', async () => {
    expectError(await call(h.base, 'GET', `/config/tables/${'k'.repeat(200)}`, { token: liveKey }), 404, 'not-found');
  });

  test('/config/tables takes no query but the page', async () => {
    expectError(await call(h.base, 'GET', '/config/tables?groupName=balance', { token: liveKey }), 400, 'invalid-request', 'query.groupName');
  });
});

describe('GET /flags', () => {
  test('a page of flags ordered by name in byte order', async () => {
    const expected = {
      items: [
        { name: 'Beta', isEnabled: false },
        { name: '_hidden', isEnabled: true },
        { name: 'new_shop', isEnabled: true },
      ],
      next: null,
    };
    for (const token of [liveKey, playerToken]) {
      const reply = await call(h.base, 'GET', '/flags', { token });
      expect(reply.status).toBe(200);
      expect(reply.body).toEqual(expected);
    }
  });
});

const ROUTES = ['/config/values', '/config/tables', '/config/tables/weapons', '/flags'];

describe('credentials, review and service switches', () => {
  test.each(ROUTES)('%s without a credential, or with a bad one, is 401', async (path) => {
    expectError(await call(h.base, 'GET', path), 401, 'unauthorized');
    expectError(await call(h.base, 'GET', path, { token: 'hsk_AAAAAAAAAAAAAAAA_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' }), 401, 'unauthorized');
  });

  test.each(ROUTES)('%s in project plain (config and flags switched off) is 403 service-disabled', async (path) => {
    expectError(await call(h.base, 'GET', path, { token: h.serverKeys['plain-live-key'] }), 403, 'service-disabled');
    const player = await signIn(h.base, h.serverKeys['plain-live-key'], 'plain-player');
    expectError(await call(h.base, 'GET', path, { token: player.accessToken }), 403, 'service-disabled');
  });

  test.each(ROUTES)('%s in project pending (awaiting review) is 403 project-not-approved', async (path) => {
    expectError(await call(h.base, 'GET', path, { token: h.serverKeys['pending-live-key'] }), 403, 'project-not-approved');
  });

  test('review is checked before validation: a pending project with a bad query is still 403', async () => {
    expectError(
      await call(h.base, 'GET', `/config/values?groupName=${'g'.repeat(121)}`, { token: h.serverKeys['pending-live-key'] }),
      403,
      'project-not-approved',
    );
  });
});

describe("another environment's content is never visible", () => {
  test('alpha-test sees only its own values, tables and flags', async () => {
    const values = await call(h.base, 'GET', '/config/values', { token: testKey });
    expect(values.body).toEqual({ items: [{ key: 'test_only', groupName: null, type: 'string', ...nulls, valueStr: 'test' }], next: null });
    const tables = await call(h.base, 'GET', '/config/tables', { token: testKey });
    expect(tables.body.items.map((t: { key: string }) => t.key)).toEqual(['test-table']);
    expectError(await call(h.base, 'GET', '/config/tables/weapons', { token: testKey }), 404, 'not-found');
    const flags = await call(h.base, 'GET', '/flags', { token: testKey });
    expect(flags.body).toEqual({ items: [{ name: 'test_flag', isEnabled: true }], next: null });
    const grouped = await call(h.base, 'GET', '/config/values?groupName=a', { token: testKey });
    expect(grouped.body).toEqual({ items: [], next: null });
  });

  test('alpha-live sees none of alpha-test', async () => {
    expectError(await call(h.base, 'GET', '/config/tables/test-table', { token: liveKey }), 404, 'not-found');
    const flags = await call(h.base, 'GET', '/flags', { token: liveKey });
    expect(flags.body.items.map((f: { name: string }) => f.name)).not.toContain('test_flag');
  });

  test("a cursor of alpha-live's list is refused in alpha-test", async () => {
    const page = await call(h.base, 'GET', '/flags?limit=1', { token: liveKey });
    expectError(await call(h.base, 'GET', `/flags?cursor=${encodeURIComponent(page.body.next)}`, { token: testKey }), 400, 'invalid-request', 'query.cursor');
  });

  test("the same key in another environment (plain-live's B = 1) does not leak into alpha-live", async () => {
    const rows = await h.db('config_values').where({ key: 'B' });
    expect(rows).toHaveLength(2);
    const values = await call(h.base, 'GET', '/config/values?groupName=a', { token: liveKey });
    expect(values.body.items[0]).toMatchObject({ key: 'B', valueInt: 7 });
  });
});

describe('conditional reads', () => {
  test.each(ROUTES)('%s answers an ETag; sending it back is 304 with no body', async (path) => {
    const first = await call(h.base, 'GET', path, { token: liveKey });
    expect(first.status).toBe(200);
    const etag = first.headers.get('etag');
    expect(etag).toMatch(/^"[^"]+"$/);

    const again = await call(h.base, 'GET', path, { token: liveKey, headers: { 'If-None-Match': etag! } });
    expect(again.status).toBe(304);
    expect(again.text).toBe('');
    expect(again.headers.get('etag')).toBe(etag);

    // A player reading the same thing gets the same tag.
    const player = await call(h.base, 'GET', path, { token: playerToken, headers: { 'If-None-Match': etag! } });
    expect(player.status).toBe(304);
    // Any of several tags, weak or not, matches; a stale one does not.
    expect((await call(h.base, 'GET', path, { token: liveKey, headers: { 'If-None-Match': `"stale", W/${etag}` } })).status).toBe(304);
    const stale = await call(h.base, 'GET', path, { token: liveKey, headers: { 'If-None-Match': '"stale"' } });
    expect(stale.status).toBe(200);
    expect(stale.body).toEqual(first.body);
  });

  test('the ETag names what was asked: groupName=a and groupName=b differ, as do other pages and tables', async () => {
    const tag = async (path: string, token = liveKey) => (await call(h.base, 'GET', path, { token })).headers.get('etag');
    const a = await tag('/config/values?groupName=a');
    const b = await tag('/config/values?groupName=b');
    expect(a).not.toBe(b);
    expect(a).not.toBe(await tag('/config/values'));
    expect(await tag('/config/values?limit=1')).not.toBe(await tag('/config/values?limit=2'));
    expect(await tag('/config/tables/weapons')).not.toBe(await tag('/config/tables/armor'));
    // alpha-test's reads are tagged apart from alpha-live's.
    expect(await tag('/flags', testKey)).not.toBe(await tag('/flags'));
    // The tag of one group does not answer 304 for the other.
    expect((await call(h.base, 'GET', '/config/values?groupName=b', { token: liveKey, headers: { 'If-None-Match': a! } })).status).toBe(200);
  });

  test("a change to the environment's content makes every old ETag stale; another environment's change does not", async () => {
    const before = await Promise.all(ROUTES.map(async (path) => (await call(h.base, 'GET', path, { token: liveKey })).headers.get('etag')!));
    const testBefore = (await call(h.base, 'GET', '/flags', { token: testKey })).headers.get('etag')!;

    await h.apply([
      gameConfig('alpha-live-config', {
        ...(liveConfig as { spec: Record<string, unknown> }).spec,
        flags: [
          { name: 'new_shop', enabled: false },
          { name: 'Beta', enabled: false },
        ],
      }),
    ]);

    for (const [i, path] of ROUTES.entries()) {
      const reply = await call(h.base, 'GET', path, { token: liveKey, headers: { 'If-None-Match': before[i] } });
      expect(reply.status).toBe(200);
      expect(reply.headers.get('etag')).not.toBe(before[i]);
    }
    const flags = await call(h.base, 'GET', '/flags', { token: liveKey });
    expect(flags.body.items).toEqual([
      { name: 'Beta', isEnabled: false },
      { name: 'new_shop', isEnabled: false },
    ]);
    // alpha-test did not change: its tag still holds.
    expect((await call(h.base, 'GET', '/flags', { token: testKey, headers: { 'If-None-Match': testBefore } })).status).toBe(304);

    // Applying the same document again changes nothing, so the new tags hold.
    const after = (await call(h.base, 'GET', '/flags', { token: liveKey })).headers.get('etag')!;
    await h.apply([
      gameConfig('alpha-live-config', {
        ...(liveConfig as { spec: Record<string, unknown> }).spec,
        flags: [
          { name: 'new_shop', enabled: false },
          { name: 'Beta', enabled: false },
        ],
      }),
    ]);
    expect((await call(h.base, 'GET', '/flags', { token: liveKey, headers: { 'If-None-Match': after } })).status).toBe(304);
  });

  test('a 304 still carries the rate-limit headers', async () => {
    const first = await call(h.base, 'GET', '/flags', { token: liveKey });
    const again = await call(h.base, 'GET', '/flags', { token: liveKey, headers: { 'If-None-Match': first.headers.get('etag')! } });
    expect(again.status).toBe(304);
    for (const header of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset']) expect(again.headers.get(header)).toMatch(/^\d+$/);
  });
});
