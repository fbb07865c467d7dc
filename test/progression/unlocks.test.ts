/**
 * Unlocks (spec §2 Unlock, §4 Progression): PUT records (201 the first time, 200 with the first record
 * after; of parallel PUTs of one key exactly one is 201), GET lists by key with `prefix` (matched
 * literally) and pages, DELETE answers 204 whether or not held; the refusals; deletion of the player.
 */
import { type Harness, startHarness } from '../support/harness';
import { call, expectError, signIn } from '../support/http';
import { projectWithout, standardManifests } from '../support/manifests';

let h: Harness;
let key: string;

beforeAll(async () => {
  h = await startHarness({ manifests: [...standardManifests(), ...projectWithout('noprog', 'progression')] });
  key = h.serverKeys['alpha-live-key'];
});
afterAll(async () => {
  await h.close();
});

const put = (playerId: string, unlock: string, body?: unknown, token = key) => call(h.base, 'PUT', `/players/${playerId}/unlocks/${unlock}`, { token, body });
async function list(playerId: string, query = '', token = key) {
  const reply = await call(h.base, 'GET', `/players/${playerId}/unlocks${query}`, { token });
  expect(reply.status).toBe(200);
  return reply.body as { items: { key: string; source: string; unlockedAt: string }[]; next: string | null };
}

describe('PUT /players/:playerId/unlocks/:key', () => {
  test('201 with the unlock the first time; 200 with the first record (source and time) after', async () => {
    const p = await signIn(h.base, key, 'unlocker');
    const first = await put(p.player.id, 'chapter.1', { source: 'quest:intro' });
    expect(first.status).toBe(201);
    expect(first.body).toEqual({ key: 'chapter.1', source: 'quest:intro', unlockedAt: expect.any(String) });
    expect(Math.abs(Date.parse(first.body.unlockedAt) - Date.now())).toBeLessThan(60_000);
    const again = await put(p.player.id, 'chapter.1', { source: 'something-else' });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    // No body, or an empty one: the source is `server`.
    expect((await put(p.player.id, 'mode_hard')).body).toMatchObject({ key: 'mode_hard', source: 'server' });
    expect((await put(p.player.id, 'mode:ranked', {})).body).toMatchObject({ key: 'mode:ranked', source: 'server' });
    expect((await list(p.player.id)).items.map((u) => [u.key, u.source])).toEqual([
      ['chapter.1', 'quest:intro'],
      ['mode:ranked', 'server'],
      ['mode_hard', 'server'],
    ]);
  });

  test('parallel PUTs of one key: exactly one 201, every answer the same first record', async () => {
    const p = await signIn(h.base, key, 'racer');
    for (let round = 0; round < 5; round++) {
      const replies = await Promise.all(Array.from({ length: 12 }, (_, i) => put(p.player.id, `race.${round}`, { source: `client-${i}` })));
      expect(replies.filter((r) => r.status === 201)).toHaveLength(1);
      expect(replies.filter((r) => r.status === 200)).toHaveLength(11);
      const winner = replies.find((r) => r.status === 201)!.body;
      for (const r of replies) expect(r.body).toEqual(winner);
    }
    expect(await h.db('player_unlocks').where({ player_id: p.player.id }).count({ n: '*' })).toEqual([{ n: '5' }]);
  });

  test('refusals: bad key or source, unknown body field, a player token, an unknown player, another environment, the service off', async () => {
    const p = await signIn(h.base, key, 'refused-unlocker');
    expectError(await put(p.player.id, '-starts-badly'), 400, 'invalid-request', 'path.key');
    expectError(await put(p.player.id, 'a'.repeat(129)), 400, 'invalid-request', 'path.key');
    expectError(await put(p.player.id, 'has%20space'), 400, 'invalid-request', 'path.key');
    expectError(await put(p.player.id, 'ok', { source: 'two words' }), 400, 'invalid-request', 'body.source');
    expectError(await put(p.player.id, 'ok', { source: '' }), 400, 'invalid-request', 'body.source');
    expectError(await put(p.player.id, 'ok', { source: 'x', when: 'now' }), 400, 'invalid-request', 'body.when');
    expectError(await put('me', 'ok', undefined, p.accessToken), 403, 'forbidden');
    expectError(await put('no-such-player', 'ok'), 404, 'not-found');
    expectError(await put('me', 'ok'), 404, 'not-found');
    expectError(await put(p.player.id, 'ok', undefined, h.serverKeys['alpha-test-key']), 404, 'not-found');
    const q = await signIn(h.base, h.serverKeys['noprog-live-key'], 'no-progression');
    expectError(await put(q.player.id, 'ok', undefined, h.serverKeys['noprog-live-key']), 403, 'service-disabled');
    expectError(await call(h.base, 'GET', '/players/me/unlocks', { token: q.accessToken }), 403, 'service-disabled');
    // Nothing was recorded by any of them.
    expect(await h.db('player_unlocks').whereIn('player_id', [p.player.id, q.player.id]).count({ n: '*' })).toEqual([{ n: '0' }]);
  });
});

describe('GET /players/:playerId/unlocks', () => {
  let playerId: string;
  let token: string;
  beforeAll(async () => {
    const p = await signIn(h.base, key, 'lister');
    playerId = p.player.id;
    token = p.accessToken;
    for (const k of ['zone.b', 'zone.a', 'zoneXa', 'zone_a', 'zone.a.1', 'alpha', '9lives']) expect((await put(playerId, k)).status).toBe(201);
  });

  test('by key in byte order, with a server key or as `me` with the player token', async () => {
    const all = ['9lives', 'alpha', 'zone.a', 'zone.a.1', 'zone.b', 'zoneXa', 'zone_a'];
    expect((await list(playerId)).items.map((u) => u.key)).toEqual(all);
    expect((await list('me', '', token)).items.map((u) => u.key)).toEqual(all);
  });

  test('prefix matches literally (`_` is no wildcard)', async () => {
    expect((await list(playerId, '?prefix=zone.')).items.map((u) => u.key)).toEqual(['zone.a', 'zone.a.1', 'zone.b']);
    expect((await list(playerId, '?prefix=zone_')).items.map((u) => u.key)).toEqual(['zone_a']);
    expect((await list(playerId, '?prefix=zone.a')).items.map((u) => u.key)).toEqual(['zone.a', 'zone.a.1']);
    expect((await list(playerId, '?prefix=nothing')).items).toEqual([]);
  });

  test('pages; a cursor is bound to its player and prefix', async () => {
    const first = await list(playerId, '?prefix=zone&limit=2');
    expect(first.items.map((u) => u.key)).toEqual(['zone.a', 'zone.a.1']);
    const second = await list(playerId, `?prefix=zone&limit=2&cursor=${encodeURIComponent(first.next!)}`);
    expect(second.items.map((u) => u.key)).toEqual(['zone.b', 'zoneXa']);
    const third = await list(playerId, `?prefix=zone&limit=2&cursor=${encodeURIComponent(second.next!)}`);
    expect(third).toMatchObject({ items: [{ key: 'zone_a' }], next: null });
    expectError(
      await call(h.base, 'GET', `/players/${playerId}/unlocks?prefix=zone.&cursor=${encodeURIComponent(first.next!)}`, { token: key }),
      400,
      'invalid-request',
      'query.cursor',
    );
    const other = await signIn(h.base, key, 'lister-2');
    expectError(
      await call(h.base, 'GET', `/players/${other.player.id}/unlocks?prefix=zone&cursor=${encodeURIComponent(first.next!)}`, { token: key }),
      400,
      'invalid-request',
      'query.cursor',
    );
  });

  test('refusals: naming an id with a player token, an unknown player, another environment, a bad prefix', async () => {
    expectError(await call(h.base, 'GET', `/players/${playerId}/unlocks`, { token }), 403, 'forbidden');
    expectError(await call(h.base, 'GET', '/players/nobody/unlocks', { token: key }), 404, 'not-found');
    expectError(await call(h.base, 'GET', `/players/${playerId}/unlocks`, { token: h.serverKeys['alpha-test-key'] }), 404, 'not-found');
    expectError(await call(h.base, 'GET', `/players/${playerId}/unlocks?prefix=a%25`, { token: key }), 400, 'invalid-request', 'query.prefix');
    expectError(await call(h.base, 'GET', `/players/${playerId}/unlocks?prefix=`, { token: key }), 400, 'invalid-request', 'query.prefix');
  });
});

describe('DELETE /players/:playerId/unlocks/:key', () => {
  test('204 whether or not held; afterwards a PUT records it anew (201)', async () => {
    const p = await signIn(h.base, key, 'deleter');
    const first = (await put(p.player.id, 'gone.soon', { source: 'first' })).body;
    const del = await call(h.base, 'DELETE', `/players/${p.player.id}/unlocks/gone.soon`, { token: key });
    expect(del.status).toBe(204);
    expect(del.text).toBe('');
    expect((await list(p.player.id)).items).toEqual([]);
    expect((await call(h.base, 'DELETE', `/players/${p.player.id}/unlocks/gone.soon`, { token: key })).status).toBe(204);
    expect((await call(h.base, 'DELETE', `/players/${p.player.id}/unlocks/never.held`, { token: key })).status).toBe(204);
    const again = await put(p.player.id, 'gone.soon', { source: 'second' });
    expect(again.status).toBe(201);
    expect(again.body.source).toBe('second');
    expect(again.body.unlockedAt >= first.unlockedAt).toBe(true);
  });

  test('refusals: a player token, an unknown player, another environment, a bad key', async () => {
    const p = await signIn(h.base, key, 'delete-refused');
    await put(p.player.id, 'kept');
    expectError(await call(h.base, 'DELETE', '/players/me/unlocks/kept', { token: p.accessToken }), 403, 'forbidden');
    expectError(await call(h.base, 'DELETE', '/players/nobody/unlocks/kept', { token: key }), 404, 'not-found');
    expectError(await call(h.base, 'DELETE', `/players/${p.player.id}/unlocks/kept`, { token: h.serverKeys['alpha-test-key'] }), 404, 'not-found');
    expectError(await call(h.base, 'DELETE', `/players/${p.player.id}/unlocks/.dot`, { token: key }), 400, 'invalid-request', 'path.key');
    expect((await list(p.player.id)).items.map((u) => u.key)).toEqual(['kept']);
  });
});

test('deleting the player takes their unlocks; the same subject signing in again holds none', async () => {
  const p = await signIn(h.base, key, 'leaver');
  await put(p.player.id, 'chapter.9');
  expect((await call(h.base, 'DELETE', `/players/${p.player.id}`, { token: key })).status).toBe(204);
  expect(await h.db('player_unlocks').where({ player_id: p.player.id }).count({ n: '*' })).toEqual([{ n: '0' }]);
  const again = await signIn(h.base, key, 'leaver');
  expect((await list(again.player.id)).items).toEqual([]);
});
