/**
 * Player saves over real HTTP (spec §2 Save / SaveEntry / SaveList, §4 "Player saves", §8 limits):
 * 201 for a slot made and 200 for one replaced, 204 for a deletion, the status and body of each refusal
 * (conflict, forbidden, quota-exceeded, the route's schema for values, versions and keys, the body
 * limit), the path rule of player tokens and `me`, and the list's signed cursors. The rules themselves
 * (versions, the value and key rules, `server:` slots, both quotas, what a deletion gives back, each
 * refusal changing nothing) are held on core's save service in test/saves/rules.test.ts.
 */
import { type Harness, startHarness } from '../support/harness';
import { call, expectError, signIn } from '../support/http';
import { standardManifests } from '../support/manifests';
import { PLAYER_LIMIT, VALUE_LIMIT, gameWithSavesOf, valueOfBytes } from '../support/fixtures/saves';

let h: Harness;
let liveKey: string;

beforeAll(async () => {
  h = await startHarness({
    manifests: [...standardManifests(), ...gameWithSavesOf('small', 1000)],
  });
  liveKey = h.serverKeys['alpha-live-key'];
});
afterAll(async () => {
  await h.close();
});

const put = (token: string, player: string, key: string, body: unknown) => call(h.base, 'PUT', `/players/${player}/data/${key}`, { token, body });
const read = (token: string, player: string, key: string) => call(h.base, 'GET', `/players/${player}/data/${key}`, { token });
const remove = (token: string, player: string, key: string) => call(h.base, 'DELETE', `/players/${player}/data/${key}`, { token });
const list = (token: string, player: string, query = '') => call(h.base, 'GET', `/players/${player}/data${query}`, { token });

describe('PUT and GET /players/:playerId/data/:key', () => {
  test('the first write answers 201 with the entry, a later one 200; GET answers the save to either credential', async () => {
    const { accessToken: token, player } = await signIn(h.base, liveKey, 'sv-basic');
    const first = { zeta: 1, alpha: [true, 'é', { b: null, a: 2.5 }], 'a key': 'x' };
    const made = await put(token, 'me', 'slot.1', { data: first });
    expect(made.status).toBe(201);
    expect(made.body).toEqual({ key: 'slot.1', version: 1, sizeBytes: Buffer.byteLength(JSON.stringify(first)), updatedAt: expect.any(String) });
    const got = await read(token, 'me', 'slot.1');
    expect(got.status).toBe(200);
    expect(got.body).toEqual({ ...made.body, data: first, createdAt: expect.any(String) });
    expect(JSON.stringify(got.body.data)).toBe(JSON.stringify(first));
    const replaced = await put(token, 'me', 'slot.1', { data: 'second' });
    expect(replaced.status).toBe(200);
    expect(replaced.body).toMatchObject({ key: 'slot.1', version: 2, sizeBytes: 8 });
    expect((await read(h.serverKeys['alpha-live-key'], player.id, 'slot.1')).body).toMatchObject({ version: 2, data: 'second', createdAt: got.body.createdAt });
  });

  test('a version conflict is 409 conflict; a version past 2^53-1 is refused by the schema, never sent to the database', async () => {
    const { accessToken: token } = await signIn(h.base, liveKey, 'sv-versions');
    expectError(await put(token, 'me', 'v', { data: 1, expectedVersion: 1 }), 409, 'conflict');
    expect((await put(token, 'me', 'v', { data: 1, expectedVersion: 0 })).status).toBe(201);
    expectError(await put(token, 'me', 'v', { data: 2, expectedVersion: 0 }), 409, 'conflict');
    // Versions are exact integers up to 2^53-1; a larger one is refused, never sent to the database (a 500 the fuzzer found).
    expectError(await put(token, 'me', 'v', { data: 3, expectedVersion: 2 ** 53 }), 400, 'invalid-request', 'body.expectedVersion');
    expectError(await put(token, 'me', 'v', { data: 3, expectedVersion: 2.029485497014107e24 }), 400, 'invalid-request', 'body.expectedVersion');
    expectError(await put(token, 'me', 'v', { data: 3, expectedVersion: Number.MAX_SAFE_INTEGER }), 409, 'conflict');
    expect((await read(token, 'me', 'v')).body).toMatchObject({ version: 1, data: 1 });
  });

  test('the value: null, absent or over 256 KB compact is invalid-request naming body.data; whitespace and the body limit', async () => {
    const { accessToken: token } = await signIn(h.base, liveKey, 'sv-values');
    expectError(await put(token, 'me', 'val', { data: null }), 400, 'invalid-request', 'body.data');
    expectError(await put(token, 'me', 'val', {}), 400, 'invalid-request', 'body.data');
    expectError(await put(token, 'me', 'val', { data: valueOfBytes(VALUE_LIMIT + 1) }), 400, 'invalid-request', 'body.data');
    expectError(await read(token, 'me', 'val'), 404, 'not-found');

    // Exactly 256 KB compact is taken, even sent with 200 KB of whitespace around it.
    const padded = `{"data":   ${' '.repeat(200 * 1024)}${JSON.stringify(valueOfBytes(VALUE_LIMIT))}  }`;
    const atLimit = await call(h.base, 'PUT', '/players/me/data/val', { token, rawBody: padded, headers: { 'Content-Type': 'application/json' } });
    expect(atLimit.status).toBe(201);
    expect(atLimit.body.sizeBytes).toBe(VALUE_LIMIT);

    // A body over 512 KB is 413 before it is read.
    const tooLarge = await put(token, 'me', 'val', { data: ['x'.repeat(300 * 1024), 'y'.repeat(230 * 1024)] });
    expectError(tooLarge, 413, 'payload-too-large');
    expect(tooLarge.body.details).toEqual({ limit: 512 * 1024 });

    for (const expectedVersion of [-1, 1.5, '1']) {
      expectError(await put(token, 'me', 'val', { data: 1, expectedVersion }), 400, 'invalid-request', 'body.expectedVersion');
    }
    expectError(await put(token, 'me', 'val', { data: 1, extra: true }), 400, 'invalid-request', 'body.extra');
    expect((await read(token, 'me', 'val')).body).toMatchObject({ version: 1, sizeBytes: VALUE_LIMIT });
  });

  test('keys: 1-120 characters of letters, digits and . _ : -; anything else is invalid-request naming path.key', async () => {
    const { accessToken: token } = await signIn(h.base, liveKey, 'sv-keys');
    const longest = 'k'.repeat(120);
    expect((await put(token, 'me', longest, { data: 1 })).status).toBe(201);
    expect((await put(token, 'me', 'Az09._:-', { data: 1 })).status).toBe(201);
    for (const bad of ['k'.repeat(121), 'a%20b', 'a$b', 'caf%C3%A9', 'a+b']) {
      expectError(await put(token, 'me', bad, { data: 1 }), 400, 'invalid-request', 'path.key');
      expectError(await read(token, 'me', bad), 400, 'invalid-request', 'path.key');
      expectError(await remove(token, 'me', bad), 400, 'invalid-request', 'path.key');
    }
    expect((await list(token, 'me')).body.items.map((i: { key: string }) => i.key)).toEqual(['Az09._:-', longest]);
  });

  test('`server:` slots: a player token writing or deleting one is 403 forbidden; a server key writes (201) and deletes (204) it', async () => {
    const { accessToken: token, player } = await signIn(h.base, liveKey, 'sv-server-slots');
    expectError(await put(token, 'me', 'server:rank', { data: 99 }), 403, 'forbidden');
    expect((await put(liveKey, player.id, 'server:rank', { data: 7 })).status).toBe(201);
    expect((await read(token, 'me', 'server:rank')).body).toMatchObject({ version: 1, data: 7 });
    expectError(await remove(token, 'me', 'server:rank'), 403, 'forbidden');
    expect((await remove(liveKey, player.id, 'server:rank')).status).toBe(204);
    expectError(await read(token, 'me', 'server:rank'), 404, 'not-found');
  });

  test('path rule: a player token must say `me`; a server key with `me`, an unknown player or one of another environment is not-found', async () => {
    const { accessToken: token, player } = await signIn(h.base, liveKey, 'sv-path');
    expect((await put(token, 'me', 'p', { data: 1 })).status).toBe(201);
    expectError(await put(token, player.id, 'p', { data: 2 }), 403, 'forbidden');
    expectError(await read(token, player.id, 'p'), 403, 'forbidden');
    expectError(await remove(token, player.id, 'p'), 403, 'forbidden');
    expectError(await list(token, player.id), 403, 'forbidden');

    const elsewhere = await signIn(h.base, h.serverKeys['alpha-test-key'], 'sv-path');
    await put(elsewhere.accessToken, 'me', 'p', { data: 'theirs' });
    for (const id of ['me', 'no-such-player', elsewhere.player.id]) {
      expectError(await list(liveKey, id), 404, 'not-found');
      expectError(await read(liveKey, id, 'p'), 404, 'not-found');
      expectError(await put(liveKey, id, 'p', { data: 2 }), 404, 'not-found');
      expectError(await remove(liveKey, id, 'p'), 404, 'not-found');
    }
    expect((await read(elsewhere.accessToken, 'me', 'p')).body).toMatchObject({ version: 1, data: 'theirs' });
    expect((await read(token, 'me', 'p')).body).toMatchObject({ version: 1, data: 1 });
  });
});

describe('GET /players/:playerId/data', () => {
  test('slots in byte order of key, paged by signed cursors, with totalBytes of all slots and limitBytes', async () => {
    const { accessToken: token, player } = await signIn(h.base, liveKey, 'sv-list');
    expect((await list(token, 'me')).body).toEqual({ items: [], next: null, totalBytes: 0, limitBytes: PLAYER_LIMIT });
    const keys = ['b', 'B', 'a', 'A', '_', '-', '.x', '0', ':', 'a.b', 'Z9'];
    let total = 0;
    for (const [i, key] of keys.entries()) {
      const made = await put(token, 'me', key, { data: 'v'.repeat(i + 1) });
      expect(made.status).toBe(201);
      total += made.body.sizeBytes;
    }
    const byteOrder = [...keys].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)));

    const seen: string[] = [];
    let next: string | null = null;
    do {
      const page: any = await list(token, 'me', `?limit=3${next ? `&cursor=${encodeURIComponent(next)}` : ''}`);
      expect(page.status).toBe(200);
      expect(page.body.items.length).toBeLessThanOrEqual(3);
      expect(page.body).toMatchObject({ totalBytes: total, limitBytes: PLAYER_LIMIT });
      for (const item of page.body.items) expect(Object.keys(item).sort()).toEqual(['key', 'sizeBytes', 'updatedAt', 'version']);
      seen.push(...page.body.items.map((i: { key: string }) => i.key));
      next = page.body.next;
    } while (next);
    expect(seen).toEqual(byteOrder);

    const all = await list(liveKey, player.id);
    expect(all.body.items.map((i: { key: string }) => i.key)).toEqual(byteOrder);
    expect(all.body.next).toBeNull();

    // A cursor is bound to its player's list.
    const firstPage = await list(token, 'me', '?limit=2');
    const other = await signIn(h.base, liveKey, 'sv-list-other');
    expectError(await list(other.accessToken, 'me', `?cursor=${encodeURIComponent(firstPage.body.next)}`), 400, 'invalid-request', 'query.cursor');
    expectError(await list(token, 'me', '?cursor=forged.cursor'), 400, 'invalid-request', 'query.cursor');
    expectError(await list(token, 'me', '?limit=0'), 400, 'invalid-request', 'query.limit');
    expectError(await list(token, 'me', '?limit=201'), 400, 'invalid-request', 'query.limit');
    expect((await list(token, 'me', '?limit=200')).body.items).toHaveLength(keys.length);
  });
});

describe('DELETE /players/:playerId/data/:key', () => {
  test('204 with no body whether or not the slot existed; the list’s totalBytes follows', async () => {
    const { accessToken: token } = await signIn(h.base, liveKey, 'sv-delete');
    await put(token, 'me', 'keep', { data: 'abc' });
    await put(token, 'me', 'gone', { data: [1, 2, 3] });
    const deleted = await remove(token, 'me', 'gone');
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    expectError(await read(token, 'me', 'gone'), 404, 'not-found');
    expect((await list(token, 'me')).body.totalBytes).toBe(5);
    expect((await remove(token, 'me', 'gone')).status).toBe(204);
    expect((await remove(token, 'me', 'never-written')).status).toBe(204);
  });
});

describe('quotas', () => {
  test('a write past a quota is 403 quota-exceeded naming the quota and its limit', async () => {
    const key = h.serverKeys['small-live-key'];
    const a = await signIn(h.base, key, 'sv-env-a');
    expect((await put(a.accessToken, 'me', 's', { data: valueOfBytes(600) })).status).toBe(201);
    const refused = expectError(await put(a.accessToken, 'me', 't', { data: valueOfBytes(401) }), 403, 'quota-exceeded');
    expect(refused.details).toEqual({ quota: 'playerDataBytes', limit: 1000 });
    expectError(await read(a.accessToken, 'me', 't'), 404, 'not-found');
  });
});
