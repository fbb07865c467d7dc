/**
 * Tours (spec §3, §4 Tours): the switched-on tours by name with the player's completion, completing
 * (204, again 204, first completedAt kept), refusals, manifests, and deletion taking completions.
 */
import { removeManifest } from '@hearth/core/manifests';
import { type Harness, startHarness } from '../support/harness';
import { call, expectError, signIn } from '../support/http';
import { environment, project, standardManifests, tour, projectWithout } from '../support/manifests';

const tours = [
  tour('shop-intro', { environment: 'alpha-live', name: 'Buying things' }),
  tour('basics', { environment: 'alpha-live', name: 'Welcome' }),
  tour('crafting', { environment: 'alpha-live', id: 'craft-1', name: 'Crafting', enabled: true }),
  tour('retired', { environment: 'alpha-live', name: 'Old tour', enabled: false }),
  tour('test-only', { environment: 'alpha-test', name: 'Test tour' }),
];

describe('tours', () => {
  let h: Harness;
  let key: string;

  beforeAll(async () => {
    h = await startHarness({
      manifests: [...standardManifests(), ...projectWithout('notours', 'tours'), ...tours],
    });
    key = h.serverKeys['alpha-live-key'];
  });
  afterAll(async () => {
    await h.close();
  });

  const list = async (token: string, query = '') => {
    const reply = await call(h.base, 'GET', `/players/me/tours${query}`, { token });
    expect(reply.status).toBe(200);
    return reply.body as { items: { id: string; name: string; completed: boolean; completedAt: string | null }[]; next: string | null };
  };

  test('lists the switched-on tours of the environment by name, none completed yet', async () => {
    const p = await signIn(h.base, key, 'lister');
    expect(await list(p.accessToken)).toEqual({
      items: [
        { id: 'shop-intro', name: 'Buying things', completed: false, completedAt: null },
        { id: 'craft-1', name: 'Crafting', completed: false, completedAt: null },
        { id: 'basics', name: 'Welcome', completed: false, completedAt: null },
      ],
      next: null,
    });
    const first = await list(p.accessToken, '?limit=2');
    expect(first.items.map((t) => t.id)).toEqual(['shop-intro', 'craft-1']);
    const rest = await list(p.accessToken, `?limit=2&cursor=${encodeURIComponent(first.next!)}`);
    expect(rest).toEqual({ items: [{ id: 'basics', name: 'Welcome', completed: false, completedAt: null }], next: null });
    // The cursor is this player's list's: another player's is refused.
    const q = await signIn(h.base, key, 'lister-2');
    expectError(
      await call(h.base, 'GET', `/players/me/tours?cursor=${encodeURIComponent(first.next!)}`, { token: q.accessToken }),
      400,
      'invalid-request',
      'query.cursor',
    );
  });

  test('completing answers 204, again 204 when repeated, keeps the first completedAt, and ignores any body', async () => {
    const p = await signIn(h.base, key, 'completer');
    const done = await call(h.base, 'POST', '/players/me/tours/craft-1/complete', { token: p.accessToken, body: { anything: ['goes'] } });
    expect(done.status).toBe(204);
    expect(done.text).toBe('');
    const firstAt = (await list(p.accessToken)).items.find((t) => t.id === 'craft-1')!.completedAt!;
    expect(Math.abs(Date.parse(firstAt) - Date.now())).toBeLessThan(60_000);

    await new Promise((r) => setTimeout(r, 10)); // wall time: the database stamps completedAt itself; a second stamp would differ
    expect((await call(h.base, 'POST', '/players/me/tours/craft-1/complete', { token: p.accessToken, rawBody: 'not even json' })).status).toBe(204);
    expect((await call(h.base, 'POST', '/players/me/tours/craft-1/complete', { token: p.accessToken })).status).toBe(204);
    const after = await list(p.accessToken);
    expect(after.items.find((t) => t.id === 'craft-1')).toEqual({ id: 'craft-1', name: 'Crafting', completed: true, completedAt: firstAt });
    expect(after.items.filter((t) => t.completed)).toHaveLength(1);
    // Another player's tours are untouched.
    const q = await signIn(h.base, key, 'other-player');
    expect((await list(q.accessToken)).items.every((t) => !t.completed)).toBe(true);
  });

  test('not-found for a tour not of the environment, an unknown one, and a switched-off one', async () => {
    const p = await signIn(h.base, key, 'wanderer');
    expectError(await call(h.base, 'POST', '/players/me/tours/test-only/complete', { token: p.accessToken }), 404, 'not-found');
    expectError(await call(h.base, 'POST', '/players/me/tours/no-such-tour/complete', { token: p.accessToken }), 404, 'not-found');
    expectError(await call(h.base, 'POST', '/players/me/tours/retired/complete', { token: p.accessToken }), 404, 'not-found');
    // The metadata.name of a tour with its own id is not its id.
    expectError(await call(h.base, 'POST', '/players/me/tours/crafting/complete', { token: p.accessToken }), 404, 'not-found');
    expect(await h.db('tour_completions').where({ player_id: p.player.id })).toEqual([]);
  });

  test('a player token naming an id is forbidden; a server key is forbidden (player routes)', async () => {
    const p = await signIn(h.base, key, 'namer');
    expectError(await call(h.base, 'GET', `/players/${p.player.id}/tours`, { token: p.accessToken }), 403, 'forbidden');
    expectError(await call(h.base, 'POST', `/players/${p.player.id}/tours/basics/complete`, { token: p.accessToken }), 403, 'forbidden');
    expectError(await call(h.base, 'GET', `/players/${p.player.id}/tours`, { token: key }), 403, 'forbidden');
    expectError(await call(h.base, 'POST', `/players/${p.player.id}/tours/basics/complete`, { token: key }), 403, 'forbidden');
    expect(await h.db('tour_completions').where({ player_id: p.player.id })).toEqual([]);
  });

  test('service-disabled where the project has not switched tours on', async () => {
    const p = await signIn(h.base, h.serverKeys['notours-live-key'], 'no-tours');
    expectError(await call(h.base, 'GET', '/players/me/tours', { token: p.accessToken }), 403, 'service-disabled');
    expectError(await call(h.base, 'POST', '/players/me/tours/basics/complete', { token: p.accessToken }), 403, 'service-disabled');
  });

  test('switching a tour off through its manifest hides it and refuses completing it; on again, the completion is back', async () => {
    const p = await signIn(h.base, key, 'switcher');
    expect((await call(h.base, 'POST', '/players/me/tours/basics/complete', { token: p.accessToken })).status).toBe(204);
    await h.apply([tour('basics', { environment: 'alpha-live', name: 'Welcome', enabled: false })]);
    expect((await list(p.accessToken)).items.map((t) => t.id)).toEqual(['shop-intro', 'craft-1']);
    expectError(await call(h.base, 'POST', '/players/me/tours/basics/complete', { token: p.accessToken }), 404, 'not-found');
    await h.apply([tour('basics', { environment: 'alpha-live', name: 'A welcome' })]);
    const back = await list(p.accessToken);
    expect(back.items[0]).toMatchObject({ id: 'basics', name: 'A welcome', completed: true });
  });

  test('a tour id belongs to one Tour of an environment; a removed tour is no longer listed', async () => {
    await expect(h.apply([tour('basics-copy', { environment: 'alpha-live', id: 'basics', name: 'Copy' })])).rejects.toThrow(/spec\.id/);
    const p = await signIn(h.base, key, 'remover');
    expect((await removeManifest(h.db, { kind: 'Tour', namespace: 'tests', name: 'shop-intro' }, h.core.bus)).action).toBe('removed');
    expect((await list(p.accessToken)).items.map((t) => t.id)).not.toContain('shop-intro');
    expect((await removeManifest(h.db, { kind: 'Tour', namespace: 'tests', name: 'shop-intro' }, h.core.bus)).action).toBe('absent');
    expectError(await call(h.base, 'POST', '/players/me/tours/shop-intro/complete', { token: p.accessToken }), 404, 'not-found');
  });

  test('deleting a player deletes their completions', async () => {
    const p = await signIn(h.base, key, 'leaver');
    expect((await call(h.base, 'POST', '/players/me/tours/craft-1/complete', { token: p.accessToken })).status).toBe(204);
    expect(await h.db('tour_completions').where({ player_id: p.player.id })).toHaveLength(1);
    expect((await call(h.base, 'DELETE', `/players/${p.player.id}`, { token: key })).status).toBe(204);
    expect(await h.db('tour_completions').where({ player_id: p.player.id })).toEqual([]);
  });
});
