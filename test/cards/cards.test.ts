/**
 * Cards players hold (spec §2 Card, Stack (cards); §4 "Cards and decks"; docs/cards.md), over real
 * HTTP: a card's grant (where it goes, grantKey, template, data), the lists, a card's consumption
 * (out of every deck), stacks granted and taken under an Idempotency-Key, and every refusal, each
 * changing nothing.
 */
import { type Harness, startHarness } from '../support/harness';
import { type Reply, call, expectError, signIn } from '../support/http';
import { cardTemplate, cardType, currency, projectWithout, realm, standardManifests } from '../support/manifests';

const env = 'alpha-live';
const content = [
  realm('permanent', { environment: env, number: 0, name: 'Forever', startAt: '2020-01-01T00:00:00Z' }),
  realm('season-1', { environment: env, key: 's1', number: 1, name: 'Season 1', startAt: '2024-01-01T00:00:00Z' }),
  currency('gold', { environment: env, name: 'Gold', scope: 'account', kind: 'balance' }),
  cardType('knight', { environment: env, name: 'Knight' }),
  cardType('rat', { environment: env, name: 'Rat' }),
  cardType('dragon', { environment: env, name: 'Dragon', enabled: false }),
  cardTemplate('foil', { environment: env, name: 'Foil' }),
  cardTemplate('faded', { environment: env, name: 'Faded', enabled: false }),
];

let h: Harness;
let key: string;
let seq = 0;
const newKey = () => `c-${Date.now()}-${++seq}`;

beforeAll(async () => {
  h = await startHarness({ manifests: [...standardManifests(), ...projectWithout('nocards', 'cards'), ...content] });
  key = h.serverKeys['alpha-live-key'];
});
afterAll(async () => {
  await h.close();
});

const player = async (subject: string) => (await signIn(h.base, key, subject)).player.id;
const ok = <T = any>(reply: Reply<T>): T => {
  expect({ status: reply.status, body: reply.body }).toEqual({ status: 200, body: expect.anything() });
  return reply.body;
};
const grant = (playerId: string, body: Record<string, unknown>, opts: { token?: string; idem?: string } = {}) =>
  call(h.base, 'POST', `/players/${playerId}/cards/grant`, { token: opts.token ?? key, body, headers: opts.idem ? { 'Idempotency-Key': opts.idem } : {} });
const stack = (playerId: string, action: 'grant' | 'consume', body: Record<string, unknown>, idem: string | null = newKey()) =>
  call(h.base, 'POST', `/players/${playerId}/card-stacks/${action}`, { token: key, body, headers: idem === null ? {} : { 'Idempotency-Key': idem } });
const cards = async (playerId: string, inventory = 'current') =>
  ok(await call(h.base, 'GET', `/players/${playerId}/inventories/${inventory}/cards`, { token: key }));
const stacks = async (playerId: string, inventory = 'current') =>
  ok(await call(h.base, 'GET', `/players/${playerId}/inventories/${inventory}/card-stacks`, { token: key }));

/** Everything a refusal must leave as it was: the player's cards (consumed or not), stacks and deck lines. */
async function holdings(playerId: string) {
  return {
    cards: await h.db('cards').where({ player_id: playerId }).orderBy('seq').select('id', 'inventory_id', 'card_type_key', 'consumed_at', 'data'),
    stacks: await h
      .db('card_stacks as s')
      .join('inventories as i', 'i.id', 's.inventory_id')
      .where('i.player_id', playerId)
      .orderBy('s.card_type_key')
      .select('s.*'),
    lines: await h.db('deck_entries as e').join('decks as d', 'd.id', 'e.deck_id').where('d.player_id', playerId).orderBy('e.seq').select('e.*'),
  };
}

describe('granting a card', () => {
  test('goes to the current realm with neither inventoryId nor realmId; to the account with realmId null; listed in the order granted', async () => {
    const p = await player('grant-where');
    const first = ok(await grant(p, { cardTypeKey: 'knight', cardTemplateKey: 'foil', data: { level: 2 } }));
    const current = await cards(p);
    expect(current.inventory.realmId).toBe('s1');
    expect(first).toEqual({
      card: {
        id: expect.any(String),
        inventoryId: current.inventory.id,
        cardTypeKey: 'knight',
        cardTemplateKey: 'foil',
        grantKey: null,
        consumedAt: null,
        data: { level: 2 },
      },
      alreadyGranted: false,
    });
    const second = ok(await grant(p, { cardTypeKey: 'rat' }));
    expect((await cards(p)).items).toEqual([first.card, second.card]);

    const onAccount = ok(await grant(p, { cardTypeKey: 'rat', realmId: null }));
    const account = await cards(p, 'account');
    expect(account.inventory.realmId).toBeNull();
    expect(account.items).toEqual([onAccount.card]);
    const inPermanent = ok(await grant(p, { cardTypeKey: 'rat', realmId: 'permanent' }));
    expect(ok(await grant(p, { cardTypeKey: 'rat', inventoryId: inPermanent.card.inventoryId })).card.inventoryId).toBe(inPermanent.card.inventoryId);
  });

  test('a grantKey grants once: again it answers the first card with alreadyGranted, even after the type is switched off', async () => {
    const p = await player('grant-key');
    const first = ok(await grant(p, { cardTypeKey: 'knight', grantKey: 'launch-gift', data: { a: 1 } }));
    const again = ok(await grant(p, { cardTypeKey: 'knight', grantKey: 'launch-gift', data: { a: 2 }, realmId: null }));
    expect(again).toEqual({ card: first.card, alreadyGranted: true });
    // Another type under the same key is another grant.
    expect(ok(await grant(p, { cardTypeKey: 'rat', grantKey: 'launch-gift' })).alreadyGranted).toBe(false);
    await h.apply([cardType('knight', { environment: env, name: 'Knight', enabled: false })]);
    try {
      expect(ok(await grant(p, { cardTypeKey: 'knight', grantKey: 'launch-gift' }))).toEqual({ card: first.card, alreadyGranted: true });
      expectError(await grant(p, { cardTypeKey: 'knight', grantKey: 'new-gift' }), 409, 'disabled');
    } finally {
      await h.apply([cardType('knight', { environment: env, name: 'Knight' })]);
    }
    expect((await cards(p)).items).toHaveLength(2);
  });

  test('concurrent grants under one grantKey make one card', async () => {
    const p = await player('grant-race');
    const replies = await Promise.all(Array.from({ length: 6 }, () => grant(p, { cardTypeKey: 'rat', grantKey: 'race' })));
    const ids = new Set(replies.map((r) => ok(r).card.id));
    expect(ids.size).toBe(1);
    expect(replies.filter((r) => !r.body.alreadyGranted)).toHaveLength(1);
    expect(await h.db('cards').where({ player_id: p })).toHaveLength(1);
  });

  test('under an Idempotency-Key a retry answers the first grant and makes no second card', async () => {
    const p = await player('grant-idem');
    const idem = newKey();
    const first = ok(await grant(p, { cardTypeKey: 'rat' }, { idem }));
    const retry = await grant(p, { cardTypeKey: 'rat' }, { idem });
    expect(retry.body).toEqual(first);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expectError(await grant(p, { cardTypeKey: 'knight' }, { idem }), 409, 'idempotency-conflict');
    expect(await h.db('cards').where({ player_id: p })).toHaveLength(1);
  });

  test('refusals change nothing', async () => {
    const p = await player('grant-refusals');
    const other = await player('grant-refusals-other');
    ok(await grant(p, { cardTypeKey: 'rat' }));
    const otherInventory = ok(await grant(other, { cardTypeKey: 'rat' })).card.inventoryId;
    const p2 = await signIn(h.base, key, 'grant-refusals-token');
    const before = await holdings(p);
    const cases: [Reply, number, string, string?][] = [
      [await grant(p, { cardTypeKey: 'ghost' }), 404, 'not-found'],
      [await grant(p, { cardTypeKey: 'dragon' }), 409, 'disabled'],
      [await grant(p, { cardTypeKey: 'rat', cardTemplateKey: 'ghost' }), 404, 'not-found'],
      [await grant(p, { cardTypeKey: 'rat', cardTemplateKey: 'faded' }), 409, 'disabled'],
      [await grant(p, { cardTypeKey: 'rat', data: { text: 'x'.repeat(1020) } }), 400, 'invalid-request', 'body.data'],
      [await grant(p, { cardTypeKey: 'rat', data: [1] }), 400, 'invalid-request', 'body.data'],
      [await grant(p, { cardTypeKey: 'rat', quantity: 2 }), 400, 'invalid-request', 'body.quantity'],
      [await grant(p, { cardTypeKey: '-rat' }), 400, 'invalid-request', 'body.cardTypeKey'],
      [await grant(p, { cardTypeKey: 'rat', grantKey: '' }), 400, 'invalid-request', 'body.grantKey'],
      [await grant(p, { cardTypeKey: 'rat', inventoryId: otherInventory }), 404, 'not-found'],
      [await grant(p, { cardTypeKey: 'rat', realmId: 'nowhere' }), 404, 'not-found'],
      [await grant(p, { cardTypeKey: 'rat', realmId: null, inventoryId: otherInventory }), 400, 'invalid-request', 'body.realmId'],
      [await grant('no-such-player', { cardTypeKey: 'rat' }), 404, 'not-found'],
      [await grant('me', { cardTypeKey: 'rat' }, { token: p2.accessToken }), 403, 'forbidden'],
      [await grant(p, { cardTypeKey: 'rat' }, { token: h.serverKeys['alpha-test-key'] }), 404, 'not-found'],
      [await grant(p, { cardTypeKey: 'rat' }, { token: h.serverKeys['nocards-live-key'] }), 403, 'service-disabled'],
    ];
    for (const [reply, status, code, field] of cases) expectError(reply, status, code, field);
    expect(await holdings(p)).toEqual(before);
  });
});

describe('consuming a card', () => {
  test('takes it away and out of every deck; a second time is already-consumed; the other lines stay', async () => {
    const p = await player('consume');
    const { card } = ok(await grant(p, { cardTypeKey: 'knight' }));
    const { card: kept } = ok(await grant(p, { cardTypeKey: 'rat' }));
    // Two decks hold the card (decks are written here directly: what matters is the consumption's hook).
    const envId = (await h.db('environments').where({ name: env }).first('id')).id;
    for (const id of ['deck-a', 'deck-b']) {
      await h.db('decks').insert({ id: `${p}-${id}`, environment_id: envId, player_id: p, inventory_id: card.inventoryId, name: id });
      await h.db('deck_entries').insert([
        { id: `${p}-${id}-1`, deck_id: `${p}-${id}`, card_id: card.id, count: 1 },
        { id: `${p}-${id}-2`, deck_id: `${p}-${id}`, card_id: kept.id, count: 1 },
        { id: `${p}-${id}-3`, deck_id: `${p}-${id}`, card_type_key: 'knight', count: 2 },
      ]);
    }
    const consumed = ok(await call(h.base, 'POST', `/players/${p}/cards/${card.id}/consume`, { token: key }));
    expect(consumed).toEqual({ ...card, consumedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/) });
    expect((await cards(p)).items).toEqual([kept]);
    expect(
      (
        await h
          .db('deck_entries')
          .whereIn('deck_id', [`${p}-deck-a`, `${p}-deck-b`])
          .orderBy('id')
          .select('id')
      ).map((e) => e.id),
    ).toEqual([`${p}-deck-a-2`, `${p}-deck-a-3`, `${p}-deck-b-2`, `${p}-deck-b-3`]);

    const before = await holdings(p);
    const again = expectError(await call(h.base, 'POST', `/players/${p}/cards/${card.id}/consume`, { token: key }), 409, 'already-consumed');
    expect(again.details).toEqual({ cardTypeKey: 'knight' });
    expectError(await call(h.base, 'POST', `/players/${p}/cards/no-such-card/consume`, { token: key }), 404, 'not-found');
    const other = await player('consume-other');
    expectError(await call(h.base, 'POST', `/players/${other}/cards/${kept.id}/consume`, { token: key }), 404, 'not-found');
    const token = (await signIn(h.base, key, 'consume')).accessToken;
    expectError(await call(h.base, 'POST', `/players/me/cards/${kept.id}/consume`, { token }), 403, 'forbidden');
    expect(await holdings(p)).toEqual(before);
  });

  test('parallel consumptions of one card: one takes it, the others are already-consumed', async () => {
    const p = await player('consume-race');
    const { card } = ok(await grant(p, { cardTypeKey: 'rat' }));
    const replies = await Promise.all(Array.from({ length: 5 }, () => call(h.base, 'POST', `/players/${p}/cards/${card.id}/consume`, { token: key })));
    expect(replies.map((r) => r.status).sort()).toEqual([200, 409, 409, 409, 409]);
  });
});

describe('card stacks', () => {
  test('granted and taken under an Idempotency-Key; a retry answers the first and counts nothing again; listed with the inventory', async () => {
    const p = await player('stacks');
    const idem = newKey();
    const granted = ok(await stack(p, 'grant', { cardTypeKey: 'rat', quantity: 5 }, idem));
    const inventory = (await stacks(p)).inventory;
    expect(granted).toEqual({ inventoryId: inventory.id, cardTypeKey: 'rat', quantity: 5 });
    const retry = await stack(p, 'grant', { cardTypeKey: 'rat', quantity: 5 }, idem);
    expect(retry.body).toEqual(granted);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    ok(await stack(p, 'grant', { cardTypeKey: 'knight', quantity: 1 }));
    ok(await stack(p, 'grant', { cardTypeKey: 'rat', quantity: 2, realmId: null }));
    expect(await stacks(p)).toEqual({
      items: [
        { inventoryId: inventory.id, cardTypeKey: 'knight', quantity: 1 },
        { inventoryId: inventory.id, cardTypeKey: 'rat', quantity: 5 },
      ],
      next: null,
      inventory,
    });

    const takeKey = newKey();
    expect(ok(await stack(p, 'consume', { cardTypeKey: 'rat', quantity: 3 }, takeKey))).toEqual({ inventoryId: inventory.id, cardTypeKey: 'rat', quantity: 2 });
    expect(ok(await stack(p, 'consume', { cardTypeKey: 'rat', quantity: 3 }, takeKey))).toEqual({ inventoryId: inventory.id, cardTypeKey: 'rat', quantity: 2 });
    // Emptied, a stack leaves the list.
    ok(await stack(p, 'consume', { cardTypeKey: 'knight', quantity: 1 }));
    expect((await stacks(p)).items).toEqual([{ inventoryId: inventory.id, cardTypeKey: 'rat', quantity: 2 }]);
    // A switched-off type's cards may still be taken away.
    ok(await stack(p, 'grant', { cardTypeKey: 'knight', quantity: 1 }));
    await h.apply([cardType('knight', { environment: env, name: 'Knight', enabled: false })]);
    try {
      ok(await stack(p, 'consume', { cardTypeKey: 'knight', quantity: 1 }));
      expectError(await stack(p, 'grant', { cardTypeKey: 'knight', quantity: 1 }), 409, 'disabled');
    } finally {
      await h.apply([cardType('knight', { environment: env, name: 'Knight' })]);
    }
  });

  test('refusals change nothing', async () => {
    const p = await player('stack-refusals');
    ok(await stack(p, 'grant', { cardTypeKey: 'rat', quantity: 2 }));
    const used = newKey();
    ok(await stack(p, 'grant', { cardTypeKey: 'rat', quantity: 1 }, used));
    const before = await holdings(p);
    const cases: [Reply, number, string, string?][] = [
      [await stack(p, 'consume', { cardTypeKey: 'rat', quantity: 4 }), 409, 'insufficient-balance'],
      [await stack(p, 'consume', { cardTypeKey: 'knight', quantity: 1 }), 409, 'insufficient-balance'],
      [await stack(p, 'consume', { cardTypeKey: 'rat', quantity: 1, realmId: null }), 409, 'insufficient-balance'],
      [await stack(p, 'grant', { cardTypeKey: 'rat', quantity: 0 }), 400, 'invalid-request', 'body.quantity'],
      [await stack(p, 'grant', { cardTypeKey: 'rat', quantity: 1001 }), 400, 'invalid-request', 'body.quantity'],
      [await stack(p, 'grant', { cardTypeKey: 'rat' }), 400, 'invalid-request', 'body.quantity'],
      [await stack(p, 'grant', { cardTypeKey: 'rat', quantity: 1 }, null), 400, 'invalid-request', 'header.Idempotency-Key'],
      [await stack(p, 'consume', { cardTypeKey: 'rat', quantity: 1 }, null), 400, 'invalid-request', 'header.Idempotency-Key'],
      [await stack(p, 'grant', { cardTypeKey: 'rat', quantity: 2 }, used), 409, 'idempotency-conflict'],
      [await stack(p, 'grant', { cardTypeKey: 'ghost', quantity: 1 }), 404, 'not-found'],
      [await stack(p, 'consume', { cardTypeKey: 'ghost', quantity: 1 }), 404, 'not-found'],
      [await stack(p, 'grant', { cardTypeKey: 'dragon', quantity: 1 }), 409, 'disabled'],
      [await stack(p, 'grant', { cardTypeKey: 'rat', quantity: 1, data: {} }), 400, 'invalid-request', 'body.data'],
    ];
    for (const [reply, status, code, field] of cases) expectError(reply, status, code, field);
    expect(cases[0][0].body.details).toEqual({ cardTypeKey: 'rat', held: 3, requested: 4 });
    expect(await holdings(p)).toEqual(before);
  });

  test('a card stack stops at 2^53-1, as an item stack does: owned-limit past it, nothing changed', async () => {
    const p = await player('stack-ceiling');
    const { inventoryId } = ok(await stack(p, 'grant', { cardTypeKey: 'rat', quantity: 1 }));
    // Near the ceiling of exact numbers (put there directly: a test cannot grant 2^53 times).
    await h
      .db('card_stacks')
      .where({ inventory_id: inventoryId, card_type_key: 'rat' })
      .update({ quantity: (2n ** 53n - 2n).toString() });
    const before = await holdings(p);
    expect(expectError(await stack(p, 'grant', { cardTypeKey: 'rat', quantity: 2 }), 409, 'owned-limit').details).toEqual({
      cardTypeKey: 'rat',
      held: 2 ** 53 - 2,
      requested: 2,
      limit: Number.MAX_SAFE_INTEGER,
    });
    expect(await holdings(p)).toEqual(before);
    expect(ok(await stack(p, 'grant', { cardTypeKey: 'rat', quantity: 1 }))).toEqual({ inventoryId, cardTypeKey: 'rat', quantity: Number.MAX_SAFE_INTEGER });
  });

  test('parallel takings never take more than the stack holds', async () => {
    const p = await player('stack-race');
    ok(await stack(p, 'grant', { cardTypeKey: 'rat', quantity: 10 }));
    const replies = await Promise.all(Array.from({ length: 8 }, () => stack(p, 'consume', { cardTypeKey: 'rat', quantity: 3 })));
    expect(replies.filter((r) => r.status === 200)).toHaveLength(3);
    expect(replies.filter((r) => r.status === 409 && r.body.error === 'insufficient-balance')).toHaveLength(5);
    expect((await stacks(p)).items).toEqual([expect.objectContaining({ cardTypeKey: 'rat', quantity: 1 })]);
  });
});

describe('the lists', () => {
  test('page in the order granted; a player reads its own as `me`; refusals', async () => {
    const p = await player('lists');
    const granted = [];
    for (let i = 0; i < 3; i++) granted.push(ok(await grant(p, { cardTypeKey: 'rat', data: { i } })).card);
    const first = ok(await call(h.base, 'GET', `/players/${p}/inventories/current/cards?limit=2`, { token: key }));
    expect(first.items).toEqual(granted.slice(0, 2));
    const rest = ok(await call(h.base, 'GET', `/players/${p}/inventories/current/cards?limit=2&cursor=${encodeURIComponent(first.next)}`, { token: key }));
    expect(rest).toEqual({ items: granted.slice(2), next: null, inventory: first.inventory });
    const token = (await signIn(h.base, key, 'lists')).accessToken;
    expect(ok(await call(h.base, 'GET', `/players/me/inventories/${first.inventory.id}/cards`, { token })).items).toEqual(granted);
    expectError(await call(h.base, 'GET', `/players/${p}/inventories/current/cards`, { token }), 403, 'forbidden');
    expectError(await call(h.base, 'GET', `/players/${p}/inventories/no-such/cards`, { token: key }), 404, 'not-found');
    expectError(
      await call(h.base, 'GET', `/players/${p}/inventories/current/card-stacks?cursor=${encodeURIComponent(first.next)}`, { token: key }),
      400,
      'invalid-request',
      'query.cursor',
    );
    expectError(await call(h.base, 'GET', `/players/${p}/inventories/current/cards?kind=x`, { token: key }), 400, 'invalid-request', 'query.kind');
  });
});
