/**
 * The saves' rules (spec §2 Save / SaveEntry / SaveList, §4 "Player saves", §8 limits), called straight
 * on core's save service with no route in between, each test in a transaction rolled back after it
 * (test/support/domain.ts): versioned writes, the value and key rules, `server:` slots, listing by key
 * with the bytes held, both quotas and what deleting a slot or a player gives back. Every refusal is
 * checked to have changed nothing.
 *
 * The HTTP side (201 and 200, 204, the status and body of each refusal, the route's schema and body
 * limit, the path rule of player tokens and `me`, pages and cursors) is in test/saves/saves.test.ts;
 * parallel writes in test/saves/concurrency.test.ts.
 */
import type { EnvironmentContext } from '@hearth/core/tenancy';
import { domainSuite } from '../support/domain';
import { standardManifests } from '../support/manifests';
import { PLAYER_LIMIT, VALUE_LIMIT, gameWithSavesOf, valueOfBytes } from '../support/fixtures/saves';

const suite = domainSuite({ manifests: [...standardManifests(), ...gameWithSavesOf('small', 1000)] });
type Player = { id: string; env: EnvironmentContext };
type Writer = 'server' | 'player';
const live = () => suite.player('alpha-live');

const put = async (p: Player, key: string, write: { data: unknown; expectedVersion?: number }, writer: Writer = 'player') =>
  suite.core.saves.write(suite.db, p.env, p.id, key, write, writer);
const read = (p: Player, key: string) => suite.core.saves.get(suite.db, p.env, p.id, key);
const remove = (p: Player, key: string, writer: Writer = 'player') => suite.core.saves.delete(suite.db, p.env, p.id, key, writer);
const list = (p: Player, q = {}) => suite.core.saves.list(suite.db, p.env, p.id, q);

/** The bytes counted for the player and the environment, and the sum of the player's slots. */
async function usage(p: Player) {
  const player = await suite.db('players').where({ id: p.id }).first('save_bytes');
  const environmentRow = await suite.db('environments').where({ id: p.env.id }).first('player_save_bytes');
  const [{ sum }] = await suite.db('player_saves').where({ player_id: p.id }).sum({ sum: 'size_bytes' });
  return { player: Number(player?.save_bytes ?? 0), environment: Number(environmentRow.player_save_bytes), slots: Number(sum ?? 0) };
}

describe('writes and reads', () => {
  test('the first write makes the slot (created, version 1), each later one replaces it (+1); the value reads back exactly', async () => {
    const p = await live();
    // Object keys in an order jsonb would change: a save reads back exactly as written.
    const first = { zeta: 1, alpha: [true, 'é', { b: null, a: 2.5 }], 'a key': 'x' };
    const made = await put(p, 'slot.1', { data: first });
    expect(made).toEqual({
      created: true,
      entry: { key: 'slot.1', version: 1, sizeBytes: Buffer.byteLength(JSON.stringify(first)), updatedAt: expect.any(String) },
    });
    const got = await read(p, 'slot.1');
    expect(got).toEqual({ ...made.entry, data: first, createdAt: expect.any(String) });
    expect(JSON.stringify(got.data)).toBe(JSON.stringify(first));

    const replaced = await put(p, 'slot.1', { data: 'second' });
    expect(replaced).toMatchObject({ created: false, entry: { key: 'slot.1', version: 2, sizeBytes: 8 } });
    expect(await read(p, 'slot.1')).toMatchObject({ version: 2, data: 'second', createdAt: got.createdAt });
    expect((await put(p, 'slot.1', { data: 0 })).entry.version).toBe(3);
    expect((await put(p, 'slot.1', { data: false })).entry.version).toBe(4);
    expect(await read(p, 'slot.1')).toMatchObject({ version: 4, data: false, sizeBytes: 5 });
  });

  test('expectedVersion: 0 means must not exist, n means must be at n; a mismatch is conflict and writes nothing', async () => {
    const p = await live();
    await suite.expectRefusal(() => put(p, 'v', { data: 1, expectedVersion: 1 }), 'conflict');
    await suite.expectRefusal(() => read(p, 'v'), 'not-found', 'key');
    expect((await put(p, 'v', { data: 1, expectedVersion: 0 })).created).toBe(true);
    await suite.expectRefusal(() => put(p, 'v', { data: 2, expectedVersion: 0 }), 'conflict');
    await suite.expectRefusal(() => put(p, 'v', { data: 2, expectedVersion: 2 }), 'conflict');
    expect((await put(p, 'v', { data: 2, expectedVersion: 1 })).entry.version).toBe(2);
    // A retry of the same versioned write (its answer lost) cannot write twice.
    await suite.expectRefusal(() => put(p, 'v', { data: 2, expectedVersion: 1 }), 'conflict');
    await suite.expectRefusal(() => put(p, 'v', { data: 3, expectedVersion: Number.MAX_SAFE_INTEGER }), 'conflict');
    expect(await read(p, 'v')).toMatchObject({ version: 2, data: 2 });
  });

  test('the value: null, absent or over 256 KB compact (UTF-8 bytes) is invalid-request on data and writes nothing; exactly 256 KB is taken', async () => {
    const p = await live();
    await suite.expectRefusal(() => put(p, 'val', { data: null }), 'invalid-request', 'data');
    await suite.expectRefusal(() => put(p, 'val', { data: undefined }), 'invalid-request', 'data');
    await suite.expectRefusal(() => put(p, 'val', { data: valueOfBytes(VALUE_LIMIT + 1) }), 'invalid-request', 'data');
    // Multi-byte characters count in UTF-8 bytes: 131,072 'é' are 262,146 bytes with the quotes.
    await suite.expectRefusal(() => put(p, 'val', { data: 'é'.repeat(VALUE_LIMIT / 2) }), 'invalid-request', 'data');
    await suite.expectRefusal(() => read(p, 'val'), 'not-found');
    expect((await usage(p)).player).toBe(0);
    expect((await put(p, 'val', { data: valueOfBytes(VALUE_LIMIT) })).entry).toMatchObject({ version: 1, sizeBytes: VALUE_LIMIT });
  });

  test('keys: 1-120 characters of letters, digits and . _ : -; anything else is invalid-request on key, for writes and deletions alike', async () => {
    const p = await live();
    const longest = 'k'.repeat(120);
    expect((await put(p, longest, { data: 1 })).created).toBe(true);
    expect((await put(p, 'Az09._:-', { data: 1 })).created).toBe(true);
    for (const bad of ['k'.repeat(121), '', 'a b', 'a$b', 'café', 'a+b', 'a/b']) {
      await suite.expectRefusal(() => put(p, bad, { data: 1 }), 'invalid-request', 'key');
      await suite.expectRefusal(() => remove(p, bad), 'invalid-request', 'key');
    }
    expect((await list(p)).items.map((i) => i.key)).toEqual(['Az09._:-', longest]);
  });

  test('`server:` slots: a server writes and deletes them; a player reads them but is forbidden to write or delete; only the exact prefix is reserved', async () => {
    const p = await live();
    await suite.expectRefusal(() => put(p, 'server:rank', { data: 99 }), 'forbidden');
    await suite.expectRefusal(() => read(p, 'server:rank'), 'not-found');
    expect((await put(p, 'server:rank', { data: 7 }, 'server')).created).toBe(true);
    expect(await read(p, 'server:rank')).toMatchObject({ version: 1, data: 7 });
    await suite.expectRefusal(() => put(p, 'server:rank', { data: 99, expectedVersion: 1 }), 'forbidden');
    await suite.expectRefusal(() => remove(p, 'server:rank'), 'forbidden');
    expect(await read(p, 'server:rank')).toMatchObject({ version: 1, data: 7 });
    expect((await put(p, 'server-side', { data: 1 })).created).toBe(true);
    expect((await put(p, 'Server:x', { data: 1 })).created).toBe(true);
    await remove(p, 'server:rank', 'server');
    await suite.expectRefusal(() => read(p, 'server:rank'), 'not-found');
  });

  test('an unknown player, or one of another environment, is not-found for every call, and nothing of theirs is touched', async () => {
    const p = await live();
    const elsewhere = await suite.player('alpha-test');
    await put(elsewhere, 'p', { data: 'theirs' });
    for (const id of ['no-such-player', elsewhere.id]) {
      const stranger = { ...p, id };
      await suite.expectRefusal(() => list(stranger), 'not-found', 'playerId');
      await suite.expectRefusal(() => read(stranger, 'p'), 'not-found');
      await suite.expectRefusal(() => put(stranger, 'p', { data: 2 }, 'server'), 'not-found', 'playerId');
      await suite.expectRefusal(() => remove(stranger, 'p', 'server'), 'not-found', 'playerId');
    }
    expect(await read(elsewhere, 'p')).toMatchObject({ version: 1, data: 'theirs' });
  });
});

describe('the list', () => {
  test('slots in byte order of key, with totalBytes of all slots and limitBytes; each entry without its value', async () => {
    const p = await live();
    expect(await list(p)).toEqual({ items: [], next: null, totalBytes: 0, limitBytes: PLAYER_LIMIT });
    const keys = ['b', 'B', 'a', 'A', '_', '-', '.x', '0', ':', 'a.b', 'Z9'];
    let total = 0;
    for (const [i, key] of keys.entries()) total += (await put(p, key, { data: 'v'.repeat(i + 1) })).entry.sizeBytes;
    const all = await list(p, { limit: 200 });
    expect(all).toMatchObject({ next: null, totalBytes: total, limitBytes: PLAYER_LIMIT });
    expect(all.items.map((i) => i.key)).toEqual([...keys].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y))));
    for (const item of all.items) expect(Object.keys(item).sort()).toEqual(['key', 'sizeBytes', 'updatedAt', 'version']);
  });
});

describe('deletion', () => {
  test('done whether or not the slot existed; it frees the bytes, and the next write starts again at version 1', async () => {
    const p = await live();
    await put(p, 'keep', { data: 'abc' });
    await put(p, 'gone', { data: [1, 2, 3] });
    await put(p, 'gone', { data: [1, 2, 3, 4] });
    const before = await usage(p);
    expect(before.player).toBe(5 + 9);
    await remove(p, 'gone');
    await suite.expectRefusal(() => read(p, 'gone'), 'not-found');
    const after = await usage(p);
    expect(after).toMatchObject({ player: 5, slots: 5, environment: before.environment - 9 });
    expect((await list(p)).totalBytes).toBe(5);
    await remove(p, 'gone');
    await remove(p, 'never-written');
    expect(await usage(p)).toEqual(after);
    expect(await put(p, 'gone', { data: 1, expectedVersion: 0 })).toMatchObject({ created: true, entry: { version: 1 } });
  });
});

describe('quotas', () => {
  test("a player's saves never pass 5 MB: the write that would is quota-exceeded (playerDataBytesPerPlayer) and writes nothing", async () => {
    const p = await live();
    const full = valueOfBytes(VALUE_LIMIT);
    // 20 slots of 256 KB are exactly 5 MB: reaching the limit is allowed, passing it is not.
    for (let i = 0; i < PLAYER_LIMIT / VALUE_LIMIT; i += 1) expect((await put(p, `big${i}`, { data: full })).created).toBe(true);
    expect((await usage(p)).player).toBe(PLAYER_LIMIT);
    expect((await suite.expectRefusal(() => put(p, 'one-more', { data: 1 }), 'quota-exceeded')).details).toEqual({
      quota: 'playerDataBytesPerPlayer',
      limit: PLAYER_LIMIT,
    });
    await suite.expectRefusal(() => read(p, 'one-more'), 'not-found');

    // Rewriting a slot at the same size or smaller goes through; growing it back past the limit does not.
    expect((await put(p, 'big0', { data: full })).entry.version).toBe(2);
    expect((await put(p, 'big0', { data: valueOfBytes(100) })).entry.version).toBe(3);
    expect((await usage(p)).player).toBe(PLAYER_LIMIT - VALUE_LIMIT + 100);
    expect((await put(p, 'one-more', { data: valueOfBytes(VALUE_LIMIT - 100) })).created).toBe(true);
    await suite.expectRefusal(() => put(p, 'big0', { data: valueOfBytes(101) }), 'quota-exceeded');
    expect(await read(p, 'big0')).toMatchObject({ version: 3, sizeBytes: 100 });
    expect((await list(p)).totalBytes).toBe(PLAYER_LIMIT);
    const final = await usage(p);
    expect(final.player).toBe(final.slots);
  });

  test("an environment's saves never pass its plan (quota-exceeded, playerDataBytes); deleting a player gives their bytes back", async () => {
    const a = await suite.player('small-live');
    const b = await suite.player('small-live');
    await put(a, 's', { data: valueOfBytes(600) });
    expect((await suite.expectRefusal(() => put(b, 's', { data: valueOfBytes(401) }), 'quota-exceeded')).details).toEqual({
      quota: 'playerDataBytes',
      limit: 1000,
    });
    await suite.expectRefusal(() => read(b, 's'), 'not-found');
    await put(b, 's', { data: valueOfBytes(400) });
    expect((await usage(b)).environment).toBe(1000);

    // Deleting player a removes their saves and gives their 600 bytes back in the same transaction.
    await suite.core.deletePlayer(suite.db, a.env, a.id);
    expect(await suite.db('player_saves').where({ player_id: a.id })).toHaveLength(0);
    expect((await usage(b)).environment).toBe(400);
    await put(b, 't', { data: valueOfBytes(600) });
    await suite.expectRefusal(() => put(b, 'u', { data: 1 }), 'quota-exceeded');
  });
});
