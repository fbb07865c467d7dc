/**
 * Player saves (spec §2 Save / SaveEntry / SaveList, §4 "Player saves", §8 limits): versioned writes,
 * the value and key rules, `server:` slots, the path rule, listing by key, both quotas and what
 * deleting a slot or a player gives back. Every refusal is checked to have changed nothing.
 */
import { type Harness, startHarness } from '../support/harness';
import { call, expectError, signIn } from '../support/http';
import { environment, plan, project, serverKey, standardManifests } from '../support/manifests';

let h: Harness;
let liveKey: string;

const PLAYER_LIMIT = 5_242_880;
const VALUE_LIMIT = 256 * 1024;

beforeAll(async () => {
  h = await startHarness({
    manifests: [
      ...standardManifests(),
      plan('small-saves', { playerDataBytesPerEnvironment: 1000 }),
      project('small', { plan: 'small-saves' }),
      environment('small-live', 'small'),
      serverKey('small-live-key', 'small-live'),
    ],
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

/** A string value whose compact JSON (with its quotes) is exactly `bytes` bytes. */
const valueOfBytes = (bytes: number) => 'x'.repeat(bytes - 2);

async function usage(playerId: string, appKey = 'alpha-live') {
  const env = await h.core.environments.byAppKey(appKey);
  const player = await h.db('players').where({ id: playerId }).first('save_bytes');
  const environmentRow = await h.db('environments').where({ id: env!.id }).first('player_save_bytes');
  const [{ sum }] = await h.db('player_saves').where({ player_id: playerId }).sum({ sum: 'size_bytes' });
  return { player: Number(player?.save_bytes ?? 0), environment: Number(environmentRow.player_save_bytes), slots: Number(sum ?? 0) };
}

describe('PUT and GET /players/:playerId/data/:key', () => {
  test('the first write makes the slot (201, version 1), each later one replaces it (200, +1); the value reads back exactly', async () => {
    const { accessToken: token, player } = await signIn(h.base, liveKey, 'sv-basic');
    // Object keys in an order jsonb would change: a save reads back exactly as written.
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
    const again = await read(h.serverKeys['alpha-live-key'], player.id, 'slot.1');
    expect(again.body).toMatchObject({ version: 2, data: 'second', createdAt: got.body.createdAt });
    expect(Date.parse(again.body.updatedAt)).toBeGreaterThanOrEqual(Date.parse(got.body.updatedAt));
    expect((await put(token, 'me', 'slot.1', { data: 0 })).body.version).toBe(3);
    expect((await put(token, 'me', 'slot.1', { data: false })).body.version).toBe(4);
    expect((await read(token, 'me', 'slot.1')).body).toMatchObject({ version: 4, data: false, sizeBytes: 5 });
  });

  test('expectedVersion: 0 means must not exist, n means must be at n; a mismatch is conflict and writes nothing', async () => {
    const { accessToken: token } = await signIn(h.base, liveKey, 'sv-versions');
    expectError(await put(token, 'me', 'v', { data: 1, expectedVersion: 1 }), 409, 'conflict');
    expectError(await read(token, 'me', 'v'), 404, 'not-found');
    expect((await put(token, 'me', 'v', { data: 1, expectedVersion: 0 })).status).toBe(201);
    expectError(await put(token, 'me', 'v', { data: 2, expectedVersion: 0 }), 409, 'conflict');
    expectError(await put(token, 'me', 'v', { data: 2, expectedVersion: 2 }), 409, 'conflict');
    const second = await put(token, 'me', 'v', { data: 2, expectedVersion: 1 });
    expect(second.status).toBe(200);
    expect(second.body.version).toBe(2);
    // A retry of the same versioned write (its answer lost) cannot write twice.
    expectError(await put(token, 'me', 'v', { data: 2, expectedVersion: 1 }), 409, 'conflict');
    expect((await read(token, 'me', 'v')).body).toMatchObject({ version: 2, data: 2 });
    // Versions are exact integers up to 2^53-1; a larger one is refused, never sent to the database (a 500 the fuzzer found).
    expectError(await put(token, 'me', 'v', { data: 3, expectedVersion: 2 ** 53 }), 400, 'invalid-request', 'body.expectedVersion');
    expectError(await put(token, 'me', 'v', { data: 3, expectedVersion: 2.029485497014107e24 }), 400, 'invalid-request', 'body.expectedVersion');
    expectError(await put(token, 'me', 'v', { data: 3, expectedVersion: Number.MAX_SAFE_INTEGER }), 409, 'conflict');
    expect((await read(token, 'me', 'v')).body).toMatchObject({ version: 2, data: 2 });
  });

  test('the value: null, absent or over 256 KB compact is invalid-request naming body.data; whitespace and the body limit', async () => {
    const { accessToken: token, player } = await signIn(h.base, liveKey, 'sv-values');
    expectError(await put(token, 'me', 'val', { data: null }), 400, 'invalid-request', 'body.data');
    expectError(await put(token, 'me', 'val', {}), 400, 'invalid-request', 'body.data');
    expectError(await put(token, 'me', 'val', { data: valueOfBytes(VALUE_LIMIT + 1) }), 400, 'invalid-request', 'body.data');
    // Multi-byte characters count in UTF-8 bytes: 131,072 'é' are 262,146 bytes with the quotes.
    expectError(await put(token, 'me', 'val', { data: 'é'.repeat(VALUE_LIMIT / 2) }), 400, 'invalid-request', 'body.data');
    expectError(await read(token, 'me', 'val'), 404, 'not-found');
    expect((await usage(player.id)).player).toBe(0);

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

  test('`server:` slots: a server key writes and deletes them; a player token reads them but is forbidden to write or delete', async () => {
    const { accessToken: token, player } = await signIn(h.base, liveKey, 'sv-server-slots');
    expectError(await put(token, 'me', 'server:rank', { data: 99 }), 403, 'forbidden');
    expectError(await read(token, 'me', 'server:rank'), 404, 'not-found');
    expect((await put(liveKey, player.id, 'server:rank', { data: 7 })).status).toBe(201);
    expect((await read(token, 'me', 'server:rank')).body).toMatchObject({ version: 1, data: 7 });
    expectError(await put(token, 'me', 'server:rank', { data: 99, expectedVersion: 1 }), 403, 'forbidden');
    expectError(await remove(token, 'me', 'server:rank'), 403, 'forbidden');
    expect((await read(token, 'me', 'server:rank')).body).toMatchObject({ version: 1, data: 7 });
    // Only the exact prefix is reserved.
    expect((await put(token, 'me', 'server-side', { data: 1 })).status).toBe(201);
    expect((await put(token, 'me', 'Server:x', { data: 1 })).status).toBe(201);
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
  test('204 whether or not the slot existed; it frees the bytes, and the next write starts again at version 1', async () => {
    const { accessToken: token, player } = await signIn(h.base, liveKey, 'sv-delete');
    await put(token, 'me', 'keep', { data: 'abc' });
    await put(token, 'me', 'gone', { data: [1, 2, 3] });
    await put(token, 'me', 'gone', { data: [1, 2, 3, 4] });
    const before = await usage(player.id);
    expect(before.player).toBe(5 + 9);

    const deleted = await remove(token, 'me', 'gone');
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    expectError(await read(token, 'me', 'gone'), 404, 'not-found');
    const after = await usage(player.id);
    expect(after).toMatchObject({ player: 5, slots: 5, environment: before.environment - 9 });
    expect((await list(token, 'me')).body.totalBytes).toBe(5);

    expect((await remove(token, 'me', 'gone')).status).toBe(204);
    expect((await remove(token, 'me', 'never-written')).status).toBe(204);
    expect(await usage(player.id)).toEqual(after);

    const remade = await put(token, 'me', 'gone', { data: 1, expectedVersion: 0 });
    expect(remade.status).toBe(201);
    expect(remade.body.version).toBe(1);
  });
});

describe('quotas', () => {
  test("a player's saves never pass 5 MB: the write that would is quota-exceeded (playerDataBytesPerPlayer) and writes nothing", async () => {
    const { accessToken: token, player } = await signIn(h.base, liveKey, 'sv-player-quota');
    const full = valueOfBytes(VALUE_LIMIT);
    // 20 slots of 256 KB are exactly 5 MB: reaching the limit is allowed, passing it is not.
    for (let i = 0; i < PLAYER_LIMIT / VALUE_LIMIT; i += 1) expect((await put(token, 'me', `big${i}`, { data: full })).status).toBe(201);
    expect((await usage(player.id)).player).toBe(PLAYER_LIMIT);

    const refused = expectError(await put(token, 'me', 'one-more', { data: 1 }), 403, 'quota-exceeded');
    expect(refused.details).toEqual({ quota: 'playerDataBytesPerPlayer', limit: PLAYER_LIMIT });
    expectError(await read(token, 'me', 'one-more'), 404, 'not-found');

    // Rewriting a slot at the same size or smaller goes through; growing it back past the limit does not.
    expect((await put(token, 'me', 'big0', { data: full })).body.version).toBe(2);
    expect((await put(token, 'me', 'big0', { data: valueOfBytes(100) })).body.version).toBe(3);
    expect((await usage(player.id)).player).toBe(PLAYER_LIMIT - VALUE_LIMIT + 100);
    expect((await put(token, 'me', 'one-more', { data: valueOfBytes(VALUE_LIMIT - 100) })).status).toBe(201);
    expectError(await put(token, 'me', 'big0', { data: valueOfBytes(101) }), 403, 'quota-exceeded');
    expect((await read(token, 'me', 'big0')).body).toMatchObject({ version: 3, sizeBytes: 100 });
    expect((await list(token, 'me')).body.totalBytes).toBe(PLAYER_LIMIT);
    const final = await usage(player.id);
    expect(final.player).toBe(final.slots);
  });

  test("an environment's saves never pass its plan (quota-exceeded, playerDataBytes); deleting a player gives their bytes back", async () => {
    const key = h.serverKeys['small-live-key'];
    const a = await signIn(h.base, key, 'sv-env-a');
    const b = await signIn(h.base, key, 'sv-env-b');
    expect((await put(a.accessToken, 'me', 's', { data: valueOfBytes(600) })).status).toBe(201);
    const refused = expectError(await put(b.accessToken, 'me', 's', { data: valueOfBytes(401) }), 403, 'quota-exceeded');
    expect(refused.details).toEqual({ quota: 'playerDataBytes', limit: 1000 });
    expectError(await read(b.accessToken, 'me', 's'), 404, 'not-found');
    expect((await put(b.accessToken, 'me', 's', { data: valueOfBytes(400) })).status).toBe(201);
    expect((await usage(b.player.id, 'small-live')).environment).toBe(1000);

    // Deleting player a removes their saves and gives their 600 bytes back in the same transaction.
    expect((await call(h.base, 'DELETE', `/players/${a.player.id}`, { token: key })).status).toBe(204);
    expect(await h.db('player_saves').where({ player_id: a.player.id })).toHaveLength(0);
    expect((await usage(b.player.id, 'small-live')).environment).toBe(400);
    expect((await put(b.accessToken, 'me', 't', { data: valueOfBytes(600) })).status).toBe(201);
    expectError(await put(b.accessToken, 'me', 'u', { data: 1 }), 403, 'quota-exceeded');
  });
});
