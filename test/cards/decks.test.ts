/**
 * Decks (spec §2 Deck; §4 "Cards and decks"; docs/cards.md "Decks"), over real HTTP: made, listed,
 * read, renamed and deleted; cards put in and taken out; type lines set and removed; the limits (50
 * decks, 200 lines) exact under concurrency; validation's five problem codes and starter types; every
 * refusal changing nothing.
 */
import { type Harness, startHarness } from '../support/harness';
import { type Reply, call, expectError, signIn } from '../support/http';
import { cardType, projectWithout, realm, standardManifests } from '../support/manifests';

const env = 'alpha-live';
const content = [
  realm('season-1', { environment: env, key: 's1', number: 1, name: 'Season 1', startAt: '2024-01-01T00:00:00Z' }),
  cardType('knight', { environment: env, name: 'Knight', perDeckLimit: 3 }),
  cardType('rat', { environment: env, name: 'Rat' }),
  cardType('squire', { environment: env, name: 'Squire', starter: true, perDeckLimit: 4 }),
  cardType('dragon', { environment: env, name: 'Dragon', enabled: false }),
  cardType('fleeting', { environment: env, name: 'Fleeting' }),
];

let h: Harness;
let key: string;
let seq = 0;

beforeAll(async () => {
  h = await startHarness({ manifests: [...standardManifests(), ...projectWithout('nocards', 'cards'), ...content] });
  key = h.serverKeys['alpha-live-key'];
});
afterAll(async () => {
  await h.close();
});

const ok = <T = any>(reply: Reply<T>, status = 200): T => {
  expect({ status: reply.status, body: reply.body }).toEqual({ status, body: expect.anything() });
  return reply.body;
};
const player = async (subject: string) => {
  const signed = await signIn(h.base, key, subject);
  const inventory = ok(await call(h.base, 'GET', `/players/${signed.player.id}/inventories/current`, { token: key }));
  return { id: signed.player.id, token: signed.accessToken, inventory: inventory.id as string };
};
const grantCard = async (playerId: string, cardTypeKey: string) =>
  ok(await call(h.base, 'POST', `/players/${playerId}/cards/grant`, { token: key, body: { cardTypeKey } })).card;
const grantStack = async (playerId: string, cardTypeKey: string, quantity: number) =>
  ok(
    await call(h.base, 'POST', `/players/${playerId}/card-stacks/grant`, {
      token: key,
      body: { cardTypeKey, quantity },
      headers: { 'Idempotency-Key': `deck-stack-${++seq}` },
    }),
  );
const decks = (playerId: string, method: string, rest = '', body?: unknown, token = key) =>
  call(h.base, method, `/players/${playerId}/decks${rest}`, { token, body });
const makeDeck = async (playerId: string, inventoryId: string, name = 'Main') => ok(await decks(playerId, 'POST', '', { inventoryId, name }), 201);

describe('decks', () => {
  test('made (name trimmed), listed (by inventory too), read, renamed and deleted; a player acts as `me`', async () => {
    const p = await player('decks-crud');
    const made = await makeDeck(p.id, p.inventory, '  Aggro  ');
    expect(made).toEqual({ id: expect.any(String), inventoryId: p.inventory, name: 'Aggro', entries: [] });
    const account = ok(await call(h.base, 'GET', `/players/${p.id}/inventories/account`, { token: key }));
    const other = ok(await decks('me', 'POST', '', { inventoryId: account.id, name: 'Control' }, p.token), 201);
    expect(ok(await decks(p.id, 'GET'))).toEqual({ items: [made, other], next: null });
    expect(ok(await decks('me', 'GET', `?inventoryId=${account.id}`, undefined, p.token))).toEqual({ items: [other], next: null });
    const page = ok(await decks(p.id, 'GET', '?limit=1'));
    expect(page.items).toEqual([made]);
    expect(ok(await decks(p.id, 'GET', `?limit=1&cursor=${encodeURIComponent(page.next)}`))).toEqual({ items: [other], next: null });
    expect(ok(await decks(p.id, 'GET', `/${made.id}`))).toEqual(made);
    expect(ok(await decks(p.id, 'PATCH', `/${made.id}`, { name: ' Burn ' }))).toEqual({ ...made, name: 'Burn' });
    const deleted = await decks('me', 'DELETE', `/${other.id}`, undefined, p.token);
    expect({ status: deleted.status, text: deleted.text }).toEqual({ status: 204, text: '' });
    expectError(await decks(p.id, 'GET', `/${other.id}`), 404, 'not-found');
    expect(ok(await decks(p.id, 'GET')).items.map((d: any) => d.name)).toEqual(['Burn']);
  });

  test('cards and type lines: put, taken out, set and removed; a consumed card leaves the deck', async () => {
    const p = await player('decks-lines');
    const deck = await makeDeck(p.id, p.inventory);
    const [one, two] = [await grantCard(p.id, 'knight'), await grantCard(p.id, 'rat')];
    const withOne = ok(await decks(p.id, 'PUT', `/${deck.id}/cards/${one.id}`));
    expect(withOne.entries).toEqual([{ id: expect.any(String), cardId: one.id, cardTypeKey: null, count: 1 }]);
    expect(ok(await decks(p.id, 'PUT', `/${deck.id}/cards/${one.id}`))).toEqual(withOne); // already there: unchanged
    ok(await decks(p.id, 'PUT', `/${deck.id}/cards/${two.id}`));
    const typed = ok(await decks(p.id, 'PUT', `/${deck.id}/types/squire`, { count: 2 }));
    expect(typed.entries.map((e: any) => [e.cardId, e.cardTypeKey, e.count])).toEqual([
      [one.id, null, 1],
      [two.id, null, 1],
      [null, 'squire', 2],
    ]);
    expect(ok(await decks(p.id, 'PUT', `/${deck.id}/types/squire`, { count: 4 })).entries[2]).toMatchObject({ cardTypeKey: 'squire', count: 4 });
    expect(ok(await decks(p.id, 'DELETE', `/${deck.id}/cards/${two.id}`)).entries.map((e: any) => e.cardId ?? e.cardTypeKey)).toEqual([one.id, 'squire']);
    expect(ok(await decks(p.id, 'DELETE', `/${deck.id}/cards/${two.id}`)).entries).toHaveLength(2); // not there: done
    expect(ok(await decks(p.id, 'PUT', `/${deck.id}/types/squire`, { count: 0 })).entries.map((e: any) => e.cardId)).toEqual([one.id]);
    ok(await call(h.base, 'POST', `/players/${p.id}/cards/${one.id}/consume`, { token: key }));
    expect(ok(await decks(p.id, 'GET', `/${deck.id}`)).entries).toEqual([]);
  });

  test('validation: size, per-type-limit, not-owned (never for a starter type), unknown and switched-off types', async () => {
    const p = await player('decks-validation');
    const deck = await makeDeck(p.id, p.inventory);
    const validation = async (query = '') => ok(await decks(p.id, 'GET', `/${deck.id}/validation${query}`));
    expect(await validation()).toEqual({ valid: true, size: 0, problems: [] });

    const knights = [await grantCard(p.id, 'knight'), await grantCard(p.id, 'knight')];
    for (const k of knights) ok(await decks(p.id, 'PUT', `/${deck.id}/cards/${k.id}`));
    await grantStack(p.id, 'rat', 2);
    ok(await decks(p.id, 'PUT', `/${deck.id}/types/rat`, { count: 2 }));
    ok(await decks(p.id, 'PUT', `/${deck.id}/types/squire`, { count: 4 }));
    expect(await validation()).toEqual({ valid: true, size: 8, problems: [] });
    expect(await validation('?maxSize=7')).toEqual({ valid: false, size: 8, problems: [{ code: 'size', message: expect.any(String) }] });

    // Two knight cards in the deck plus a line of two more: past perDeckLimit 3, and only the two held.
    ok(await decks(p.id, 'PUT', `/${deck.id}/types/knight`, { count: 2 }));
    ok(await decks(p.id, 'PUT', `/${deck.id}/types/rat`, { count: 3 }));
    ok(await decks(p.id, 'PUT', `/${deck.id}/types/dragon`, { count: 1 }));
    ok(await decks(p.id, 'PUT', `/${deck.id}/types/fleeting`, { count: 1 }));
    await grantStack(p.id, 'fleeting', 1);
    await h.db('card_types').where({ key: 'fleeting' }).delete(); // deleted since it was put in the deck
    const found = await validation();
    expect(found.valid).toBe(false);
    expect(found.size).toBe(13);
    expect(found.problems.map((x: any) => [x.code, x.cardTypeKey])).toEqual([
      ['disabled-card-type', 'dragon'],
      ['not-owned', 'dragon'],
      ['unknown-card-type', 'fleeting'],
      ['per-type-limit', 'knight'],
      ['not-owned', 'knight'],
      ['not-owned', 'rat'],
    ]);
    for (const problem of found.problems) expect(typeof problem.message).toBe('string');
  });

  test('limits: 50 decks a player and 200 lines a deck, exact under concurrency', async () => {
    const p = await player('decks-limits');
    const made = await Promise.all(Array.from({ length: 55 }, (_, i) => decks(p.id, 'POST', '', { inventoryId: p.inventory, name: `d${i}` })));
    expect(made.filter((r) => r.status === 201)).toHaveLength(50);
    for (const r of made.filter((x) => x.status !== 201)) expect(expectError(r, 409, 'owned-limit').details).toEqual({ held: 50, requested: 1, limit: 50 });
    expect(await h.db('decks').where({ player_id: p.id })).toHaveLength(50);

    const deck = made.find((r) => r.status === 201)!.body;
    // 199 lines written directly (card types need not exist for the count), then two at once: one fits.
    await h
      .db('deck_entries')
      .insert(Array.from({ length: 199 }, (_, i) => ({ id: `${deck.id}-${i}`, deck_id: deck.id, card_type_key: `filler-${i}`, count: 1 })));
    const [a, b] = [await grantCard(p.id, 'rat'), await grantCard(p.id, 'rat')];
    const puts = await Promise.all([decks(p.id, 'PUT', `/${deck.id}/cards/${a.id}`), decks(p.id, 'PUT', `/${deck.id}/cards/${b.id}`)]);
    expect(puts.map((r) => r.status).sort()).toEqual([200, 409]);
    expectError(await decks(p.id, 'PUT', `/${deck.id}/types/knight`, { count: 1 }), 409, 'owned-limit');
    // Changing an existing line needs no new one.
    await h
      .db('deck_entries')
      .where({ id: `${deck.id}-0` })
      .update({ card_type_key: 'rat' });
    expect(ok(await decks(p.id, 'PUT', `/${deck.id}/types/rat`, { count: 5 })).entries).toHaveLength(200);
  });

  test('refusals change nothing', async () => {
    const p = await player('decks-refusals');
    const other = await player('decks-refusals-other');
    const deck = await makeDeck(p.id, p.inventory);
    const theirs = await makeDeck(other.id, other.inventory);
    const theirCard = await grantCard(other.id, 'rat');
    const consumed = await grantCard(p.id, 'rat');
    ok(await call(h.base, 'POST', `/players/${p.id}/cards/${consumed.id}/consume`, { token: key }));
    const elsewhere = ok(await call(h.base, 'POST', `/players/${p.id}/cards/grant`, { token: key, body: { cardTypeKey: 'rat', realmId: null } })).card;
    const state = async () => ({
      decks: await h.db('decks').whereIn('player_id', [p.id, other.id]).orderBy('seq').select('id', 'name'),
      lines: await h.db('deck_entries').whereIn('deck_id', [deck.id, theirs.id]).orderBy('seq').select('*'),
    });
    const before = await state();
    const cases: [Reply, number, string, string?][] = [
      [await decks(p.id, 'POST', '', { inventoryId: other.inventory, name: 'x' }), 404, 'not-found'],
      [await decks(p.id, 'POST', '', { inventoryId: p.inventory, name: '   ' }), 400, 'invalid-request', 'body.name'],
      [await decks(p.id, 'POST', '', { inventoryId: p.inventory, name: 'x'.repeat(61) }), 400, 'invalid-request', 'body.name'],
      [await decks(p.id, 'POST', '', { name: 'x' }), 400, 'invalid-request', 'body.inventoryId'],
      [await decks(p.id, 'PATCH', `/${deck.id}`, { name: '' }), 400, 'invalid-request', 'body.name'],
      [await decks(p.id, 'PATCH', `/${theirs.id}`, { name: 'mine' }), 404, 'not-found'],
      [await decks(p.id, 'DELETE', `/${theirs.id}`), 404, 'not-found'],
      [await decks(p.id, 'PUT', `/${deck.id}/cards/${theirCard.id}`), 404, 'not-found'],
      [await decks(p.id, 'PUT', `/${deck.id}/cards/${consumed.id}`), 409, 'already-consumed'],
      [await decks(p.id, 'PUT', `/${deck.id}/cards/${elsewhere.id}`), 400, 'invalid-request', 'path.cardId'],
      // A card type that is not defined: the refusal names the key asked for and the path segment that named it.
      [await decks(p.id, 'PUT', `/${deck.id}/types/ghost`, { count: 1 }), 404, 'not-found', 'path.cardTypeKey'],
      [await decks(p.id, 'PUT', `/${deck.id}/types/rat`, { count: 1001 }), 400, 'invalid-request', 'body.count'],
      [await decks(p.id, 'PUT', `/${deck.id}/types/rat`, { count: -1 }), 400, 'invalid-request', 'body.count'],
      [await decks(p.id, 'PUT', `/${deck.id}/types/rat`, {}), 400, 'invalid-request', 'body.count'],
      [await decks(p.id, 'GET', `/${deck.id}/validation?maxSize=0`), 400, 'invalid-request', 'query.maxSize'],
      [await decks(p.id, 'GET', `/${theirs.id}/validation`), 404, 'not-found'],
      [await decks(p.id, 'GET', '', undefined, p.token), 403, 'forbidden'],
      [await decks('me', 'GET', `/${theirs.id}`, undefined, p.token), 404, 'not-found'],
      [await decks(p.id, 'GET', '', undefined, h.serverKeys['alpha-test-key']), 404, 'not-found'],
      [await decks(p.id, 'GET', '', undefined, h.serverKeys['nocards-live-key']), 403, 'service-disabled'],
      [await decks('no-such-player', 'GET'), 404, 'not-found'],
    ];
    for (const [reply, status, code, field] of cases) expectError(reply, status, code, field);
    expect((await decks(p.id, 'PUT', `/${deck.id}/types/archr`, { count: 1 })).body.message).toBe('The card type "archr" was not found in this environment.');
    expect(await state()).toEqual(before);
  });
});
