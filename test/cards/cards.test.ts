/**
 * Cards, decks and buying cards over real HTTP (spec §2 Card, Stack (cards), Deck, Purchase<T>; §4
 * "Cards and decks", "Buying"; docs/cards.md): each route answered, the status and body of each
 * refusal (the routes' schemas, credentials and `me`, the cards service switched off), pages and
 * cursors, stacks granted and taken under an Idempotency-Key, purchases replayed under one, and the
 * races that need parallel connections: one card per grantKey, one consumption of a card, takings
 * that never pass a stack, the deck limits exact, purchases that charge once and never pass a balance.
 * The rules themselves (where a card goes, grantKey, decks' lines and validation, price rules, what
 * only a server may send, each refusal changing nothing) are held on core's services in
 * test/cards/rules.test.ts.
 */
import { type Harness, startHarness } from '../support/harness';
import { type Reply, call, expectError, signIn } from '../support/http';
import { projectWithout, standardManifests } from '../support/manifests';
import { permanentAndSeason1Realms, shopCurrencies } from '../support/fixtures/economy';
import { cardsContent } from '../support/fixtures/cards';

let h: Harness;
let key: string;
let seq = 0;
const newKey = () => `c-${Date.now()}-${++seq}`;

beforeAll(async () => {
  h = await startHarness({
    manifests: [...standardManifests(), ...projectWithout('nocards', 'cards'), ...permanentAndSeason1Realms(), ...shopCurrencies(), ...cardsContent()],
  });
  key = h.serverKeys['alpha-live-key'];
});
afterAll(async () => {
  await h.close();
});

const player = async (subject: string) => (await signIn(h.base, key, subject)).player.id;
const ok = <T = any>(reply: Reply<T>, status = 200): T => {
  expect({ status: reply.status, body: reply.body }).toEqual({ status, body: expect.anything() });
  return reply.body;
};
const grant = (playerId: string, body: Record<string, unknown>, opts: { token?: string; idem?: string } = {}) =>
  call(h.base, 'POST', `/players/${playerId}/cards/grant`, { token: opts.token ?? key, body, headers: opts.idem ? { 'Idempotency-Key': opts.idem } : {} });
const stack = (playerId: string, action: 'grant' | 'consume', body: Record<string, unknown>, idem: string | null = newKey()) =>
  call(h.base, 'POST', `/players/${playerId}/card-stacks/${action}`, { token: key, body, headers: idem === null ? {} : { 'Idempotency-Key': idem } });
const stacks = async (playerId: string, inventory = 'current') =>
  ok(await call(h.base, 'GET', `/players/${playerId}/inventories/${inventory}/card-stacks`, { token: key }));
const consume = (playerId: string, cardId: string, token = key) => call(h.base, 'POST', `/players/${playerId}/cards/${cardId}/consume`, { token });

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
    expect(first).toEqual({ card: expect.objectContaining({ cardTypeKey: 'rat', consumedAt: null }), alreadyGranted: false });
    const retry = await grant(p, { cardTypeKey: 'rat' }, { idem });
    expect(retry.body).toEqual(first);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expectError(await grant(p, { cardTypeKey: 'knight' }, { idem }), 409, 'idempotency-conflict');
    expect(await h.db('cards').where({ player_id: p })).toHaveLength(1);
  });

  test('refusals: each status and error body, the field named as the request names it; none changes anything', async () => {
    const p = await player('grant-refusals');
    const other = await player('grant-refusals-other');
    ok(await grant(p, { cardTypeKey: 'rat' }));
    const otherInventory = ok(await grant(other, { cardTypeKey: 'rat' })).card.inventoryId;
    const p2 = await signIn(h.base, key, 'grant-refusals-token');
    const before = await holdings(p);
    const cases: [Reply, number, string, string?][] = [
      [await grant(p, { cardTypeKey: 'ghost' }), 404, 'not-found', 'body.cardTypeKey'],
      [await grant(p, { cardTypeKey: 'dragon' }), 409, 'disabled'],
      [await grant(p, { cardTypeKey: 'rat', data: { text: 'x'.repeat(1020) } }), 400, 'invalid-request', 'body.data'],
      [await grant(p, { cardTypeKey: 'rat', data: [1] }), 400, 'invalid-request', 'body.data'],
      [await grant(p, { cardTypeKey: 'rat', quantity: 2 }), 400, 'invalid-request', 'body.quantity'],
      [await grant(p, { cardTypeKey: '-rat' }), 400, 'invalid-request', 'body.cardTypeKey'],
      [await grant(p, { cardTypeKey: 'rat', grantKey: '' }), 400, 'invalid-request', 'body.grantKey'],
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
  test('answers the card consumed; again 409 already-consumed with its details; another player’s card 404; a player token 403', async () => {
    const p = await player('consume');
    const { card } = ok(await grant(p, { cardTypeKey: 'knight' }));
    const { card: kept } = ok(await grant(p, { cardTypeKey: 'rat' }));
    expect(ok(await consume(p, card.id))).toEqual({ ...card, consumedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/) });
    const before = await holdings(p);
    expect(expectError(await consume(p, card.id), 409, 'already-consumed').details).toEqual({ cardTypeKey: 'knight' });
    expectError(await consume(p, 'no-such-card'), 404, 'not-found');
    expectError(await consume(await player('consume-other'), kept.id), 404, 'not-found');
    expectError(await consume('me', kept.id, (await signIn(h.base, key, 'consume')).accessToken), 403, 'forbidden');
    expect(await holdings(p)).toEqual(before);
  });

  test('parallel consumptions of one card: one takes it, the others are already-consumed', async () => {
    const p = await player('consume-race');
    const { card } = ok(await grant(p, { cardTypeKey: 'rat' }));
    const replies = await Promise.all(Array.from({ length: 5 }, () => consume(p, card.id)));
    expect(replies.map((r) => r.status).sort()).toEqual([200, 409, 409, 409, 409]);
  });
});

describe('card stacks', () => {
  test('granted and taken under an Idempotency-Key: a retry answers the first and counts nothing again; listed with the inventory', async () => {
    const p = await player('stacks');
    const idem = newKey();
    const granted = ok(await stack(p, 'grant', { cardTypeKey: 'rat', quantity: 5 }, idem));
    const inventory = (await stacks(p)).inventory;
    expect(granted).toEqual({ inventoryId: inventory.id, cardTypeKey: 'rat', quantity: 5 });
    const retry = await stack(p, 'grant', { cardTypeKey: 'rat', quantity: 5 }, idem);
    expect(retry.body).toEqual(granted);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    const takeKey = newKey();
    expect(ok(await stack(p, 'consume', { cardTypeKey: 'rat', quantity: 3 }, takeKey))).toEqual({ inventoryId: inventory.id, cardTypeKey: 'rat', quantity: 2 });
    expect(ok(await stack(p, 'consume', { cardTypeKey: 'rat', quantity: 3 }, takeKey))).toEqual({ inventoryId: inventory.id, cardTypeKey: 'rat', quantity: 2 });
    expect(await stacks(p)).toEqual({ items: [{ inventoryId: inventory.id, cardTypeKey: 'rat', quantity: 2 }], next: null, inventory });
  });

  test('refusals: each status and error body; none changes anything', async () => {
    const p = await player('stack-refusals');
    ok(await stack(p, 'grant', { cardTypeKey: 'rat', quantity: 2 }));
    const used = newKey();
    ok(await stack(p, 'grant', { cardTypeKey: 'rat', quantity: 1 }, used));
    const before = await holdings(p);
    const cases: [Reply, number, string, string?][] = [
      [await stack(p, 'consume', { cardTypeKey: 'rat', quantity: 4 }), 409, 'insufficient-balance'],
      [await stack(p, 'grant', { cardTypeKey: 'rat', quantity: 0 }), 400, 'invalid-request', 'body.quantity'],
      [await stack(p, 'grant', { cardTypeKey: 'rat', quantity: 1001 }), 400, 'invalid-request', 'body.quantity'],
      [await stack(p, 'grant', { cardTypeKey: 'rat' }), 400, 'invalid-request', 'body.quantity'],
      [await stack(p, 'grant', { cardTypeKey: 'rat', quantity: 1 }, null), 400, 'invalid-request', 'header.Idempotency-Key'],
      [await stack(p, 'consume', { cardTypeKey: 'rat', quantity: 1 }, null), 400, 'invalid-request', 'header.Idempotency-Key'],
      [await stack(p, 'grant', { cardTypeKey: 'rat', quantity: 2 }, used), 409, 'idempotency-conflict'],
      [await stack(p, 'grant', { cardTypeKey: 'ghost', quantity: 1 }), 404, 'not-found'],
      [await stack(p, 'grant', { cardTypeKey: 'dragon', quantity: 1 }), 409, 'disabled'],
      [await stack(p, 'grant', { cardTypeKey: 'rat', quantity: 1, data: {} }), 400, 'invalid-request', 'body.data'],
    ];
    for (const [reply, status, code, field] of cases) expectError(reply, status, code, field);
    expect(cases[0][0].body.details).toEqual({ cardTypeKey: 'rat', held: 3, requested: 4 });
    expect(await holdings(p)).toEqual(before);
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

describe('decks', () => {
  const deckPlayer = async (subject: string) => {
    const signed = await signIn(h.base, key, subject);
    const inventory = ok(await call(h.base, 'GET', `/players/${signed.player.id}/inventories/current`, { token: key }));
    return { id: signed.player.id, token: signed.accessToken, inventory: inventory.id as string };
  };
  const grantCard = async (playerId: string, cardTypeKey: string) => ok(await grant(playerId, { cardTypeKey })).card;
  const decks = (playerId: string, method: string, rest = '', body?: unknown, token = key) =>
    call(h.base, method, `/players/${playerId}/decks${rest}`, { token, body });
  const makeDeck = async (playerId: string, inventoryId: string, name = 'Main') => ok(await decks(playerId, 'POST', '', { inventoryId, name }), 201);

  test('every route: made (name trimmed, 201), listed and paged, read, renamed, lines put, set and taken, validated, deleted (204); a player acts as `me`', async () => {
    const p = await deckPlayer('decks-routes');
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
    const knight = await grantCard(p.id, 'knight');
    expect(ok(await decks('me', 'PUT', `/${made.id}/cards/${knight.id}`, undefined, p.token)).entries).toEqual([
      { id: expect.any(String), cardId: knight.id, cardTypeKey: null, count: 1 },
    ]);
    expect(ok(await decks(p.id, 'PUT', `/${made.id}/types/squire`, { count: 2 })).entries.map((e: any) => e.cardTypeKey ?? e.cardId)).toEqual([
      knight.id,
      'squire',
    ]);
    expect(ok(await decks(p.id, 'DELETE', `/${made.id}/cards/${knight.id}`)).entries.map((e: any) => e.cardTypeKey)).toEqual(['squire']);
    expect(ok(await decks(p.id, 'GET', `/${made.id}/validation?maxSize=1`))).toEqual({
      valid: false,
      size: 2,
      problems: [{ code: 'size', message: expect.any(String) }],
    });
    const deleted = await decks('me', 'DELETE', `/${other.id}`, undefined, p.token);
    expect({ status: deleted.status, text: deleted.text }).toEqual({ status: 204, text: '' });
    expectError(await decks(p.id, 'GET', `/${other.id}`), 404, 'not-found');
  });

  test('limits: 50 decks a player and 200 lines a deck, exact under concurrency', async () => {
    const p = await deckPlayer('decks-limits');
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
  });

  test('refusals: each status and error body, the field named as the request names it; none changes anything', async () => {
    const p = await deckPlayer('decks-refusals');
    const other = await deckPlayer('decks-refusals-other');
    const deck = await makeDeck(p.id, p.inventory);
    const theirs = await makeDeck(other.id, other.inventory);
    const consumed = await grantCard(p.id, 'rat');
    ok(await consume(p.id, consumed.id));
    const elsewhere = ok(await grant(p.id, { cardTypeKey: 'rat', realmId: null })).card;
    const state = async () => ({
      decks: await h.db('decks').whereIn('player_id', [p.id, other.id]).orderBy('seq').select('id', 'name'),
      lines: await h.db('deck_entries').whereIn('deck_id', [deck.id, theirs.id]).orderBy('seq').select('*'),
    });
    const before = await state();
    const cases: [Reply, number, string, string?][] = [
      [await decks(p.id, 'POST', '', { inventoryId: other.inventory, name: 'x' }), 404, 'not-found', 'body.inventoryId'],
      [await decks(p.id, 'POST', '', { inventoryId: p.inventory, name: '   ' }), 400, 'invalid-request', 'body.name'],
      [await decks(p.id, 'POST', '', { inventoryId: p.inventory, name: 'x'.repeat(61) }), 400, 'invalid-request', 'body.name'],
      [await decks(p.id, 'POST', '', { name: 'x' }), 400, 'invalid-request', 'body.inventoryId'],
      [await decks(p.id, 'PATCH', `/${deck.id}`, { name: '' }), 400, 'invalid-request', 'body.name'],
      [await decks(p.id, 'DELETE', `/${theirs.id}`), 404, 'not-found'],
      [await decks(p.id, 'PUT', `/${deck.id}/cards/${consumed.id}`), 409, 'already-consumed'],
      [await decks(p.id, 'PUT', `/${deck.id}/cards/${elsewhere.id}`), 400, 'invalid-request', 'path.cardId'],
      // A card type that is not defined: the refusal names the path segment that named it.
      [await decks(p.id, 'PUT', `/${deck.id}/types/ghost`, { count: 1 }), 404, 'not-found', 'path.cardTypeKey'],
      [await decks(p.id, 'PUT', `/${deck.id}/types/rat`, { count: 1001 }), 400, 'invalid-request', 'body.count'],
      [await decks(p.id, 'PUT', `/${deck.id}/types/rat`, { count: -1 }), 400, 'invalid-request', 'body.count'],
      [await decks(p.id, 'PUT', `/${deck.id}/types/rat`, {}), 400, 'invalid-request', 'body.count'],
      [await decks(p.id, 'GET', `/${deck.id}/validation?maxSize=0`), 400, 'invalid-request', 'query.maxSize'],
      [await decks(p.id, 'GET', '', undefined, p.token), 403, 'forbidden'],
      [await decks('me', 'GET', `/${theirs.id}`, undefined, p.token), 404, 'not-found'],
      [await decks(p.id, 'GET', '', undefined, h.serverKeys['alpha-test-key']), 404, 'not-found'],
      [await decks(p.id, 'GET', '', undefined, h.serverKeys['nocards-live-key']), 403, 'service-disabled'],
      [await decks('no-such-player', 'GET'), 404, 'not-found'],
    ];
    for (const [reply, status, code, field] of cases) expectError(reply, status, code, field);
    expect(await state()).toEqual(before);
  });
});

describe('buying a card', () => {
  const buy = (playerId: string, body: Record<string, unknown>, opts: { token?: string; idem?: string } = {}) =>
    call(h.base, 'POST', `/players/${playerId}/purchases/cards`, {
      token: opts.token ?? key,
      body,
      headers: opts.idem ? { 'Idempotency-Key': opts.idem } : {},
    });
  const credit = async (playerId: string, currencyKey: string, amount: number) =>
    ok(
      await call(h.base, 'POST', `/players/${playerId}/currencies/${currencyKey}/credit`, {
        token: key,
        body: { amount, reason: 'setup' },
        headers: { 'Idempotency-Key': newKey() },
      }),
    );
  const balances = async (playerId: string, inventory = 'account') =>
    Object.fromEntries(
      (
        ok(await call(h.base, 'GET', `/players/${playerId}/inventories/${inventory}/balances`, { token: key })).items as {
          currencyKey: string;
          amount: number;
        }[]
      ).map((b) => [b.currencyKey, b.amount]),
    );
  /** Everything a refusal must leave as it was: balances of every inventory, cards, stacks and the ledger. */
  const snapshot = async (playerId: string) => ({
    balances: await h
      .db('balances as b')
      .join('inventories as i', 'i.id', 'b.inventory_id')
      .where('i.player_id', playerId)
      .orderBy(['b.inventory_id', 'b.currency_key'])
      .select('b.*'),
    cards: await h.db('cards').where({ player_id: playerId }).orderBy('seq').select('id'),
    stacks: await h.db('card_stacks as s').join('inventories as i', 'i.id', 's.inventory_id').where('i.player_id', playerId).select('s.*'),
    ledger: await h.db('ledger_entries').where({ player_id: playerId }).orderBy('id').select('id'),
  });

  test('a player buys for itself as `me`: the Purchase answered', async () => {
    const signed = await signIn(h.base, key, 'buy-player');
    await credit(signed.player.id, 'gold', 60);
    const bought = ok(await buy('me', { cardTypeKey: 'mage', payWith: 'gold' }, { token: signed.accessToken }));
    expect(bought).toEqual({
      replayed: false,
      charges: [{ transactionId: expect.any(String), inventoryId: expect.any(String), currencyKey: 'gold', amount: -50, balanceAfter: 10, replayed: false }],
      granted: { card: expect.objectContaining({ cardTypeKey: 'mage', cardTemplateKey: null, data: {} }), alreadyGranted: false },
    });
    expect(await balances(signed.player.id)).toEqual({ gold: 10 });
  });

  test('refusals: each status and error body, the field named as the request names it; none changes anything', async () => {
    const p = await player('buy-refusals');
    await credit(p, 'gold', 120);
    await credit(p, 'gems', 1);
    const token = (await signIn(h.base, key, 'buy-refusals')).accessToken;
    const before = await snapshot(p);
    const cases: [Reply, number, string, string?][] = [
      [await buy(p, { cardTypeKey: 'relic' }), 409, 'not-purchasable'],
      [await buy(p, { cardTypeKey: 'dragon' }), 409, 'disabled'],
      [await buy(p, { cardTypeKey: 'knight' }), 409, 'insufficient-balance'],
      [await buy(p, { cardTypeKey: 'spark' }), 400, 'invalid-request', 'body.allowances'],
      [await buy(p, { cardTypeKey: 'spark', allowances: { energy: 10 } }), 409, 'allowance-exceeded'],
      [await buy(p, { cardTypeKey: 'mage' }), 400, 'invalid-request', 'body.payWith'],
      [await buy(p, { cardTypeKey: 'ghost' }), 404, 'not-found'],
      [await buy(p, { cardTypeKey: 'mage', payWith: 'gold', as: 'stack', data: { a: 1 } }), 400, 'invalid-request', 'body.data'],
      [await buy(p, { cardTypeKey: 'mage', payWith: 'gold', as: 'pile' }), 400, 'invalid-request', 'body.as'],
      [await buy(p, { cardTypeKey: 'mage', payWith: 'gold', quantity: 2 }), 400, 'invalid-request', 'body.quantity'],
      [await buy('me', { cardTypeKey: 'mage', payWith: 'gold', allowances: { energy: 1 } }, { token }), 403, 'forbidden'],
      [await buy(p, { cardTypeKey: 'mage', payWith: 'gold' }, { token }), 403, 'forbidden'],
    ];
    for (const [reply, status, code, field] of cases) expectError(reply, status, code, field);
    expect(cases[0][0].body.details).toEqual({ cardTypeKey: 'relic' });
    expect(cases[2][0].body.details).toEqual({ currencyKey: 'gems', held: 1, requested: 2 });
    expect(cases[4][0].body.details).toEqual({ currencyKey: 'energy', held: 0, requested: 30, allowance: 10 });
    expect(await snapshot(p)).toEqual(before);
  });

  test('under an Idempotency-Key a retry answers the first purchase (replayed, granted null) and charges nothing again; another body is idempotency-conflict', async () => {
    const p = await player('buy-replay');
    await credit(p, 'gold', 500);
    const idem = newKey();
    const first = ok(await buy(p, { cardTypeKey: 'mage', payWith: 'gold' }, { idem }));
    const retry = await buy(p, { cardTypeKey: 'mage', payWith: 'gold' }, { idem });
    expect(retry.body).toEqual({ replayed: true, charges: first.charges.map((c: any) => ({ ...c, replayed: true })), granted: null });
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expectError(await buy(p, { cardTypeKey: 'mage', payWith: 'gold', as: 'stack' }, { idem }), 409, 'idempotency-conflict');
    expect(await balances(p)).toEqual({ gold: 450 });
    expect(await h.db('cards').where({ player_id: p })).toHaveLength(1);
  });

  test('concurrent retries of one purchase under one key charge once and grant one card; every answer is the first one or its replay', async () => {
    const p = await player('buy-race-key');
    await credit(p, 'gold', 1000);
    const idem = newKey();
    const replies = await Promise.all(Array.from({ length: 8 }, () => buy(p, { cardTypeKey: 'mage', payWith: 'gold' }, { idem })));
    for (const r of replies) ok(r);
    const acting = replies.filter((r) => !r.body.replayed);
    expect(acting).toHaveLength(1);
    for (const r of replies.filter((x) => x.body.replayed))
      expect(r.body).toEqual({ replayed: true, charges: acting[0].body.charges.map((c: any) => ({ ...c, replayed: true })), granted: null });
    expect(await balances(p)).toEqual({ gold: 950 });
    expect(await h.db('cards').where({ player_id: p })).toHaveLength(1);
    expect(await h.db('ledger_entries').where({ player_id: p, reason: 'purchase' })).toHaveLength(1);
  });

  test('concurrent purchases under their own keys never pass the balance: as many act as it pays for', async () => {
    const p = await player('buy-race-balance');
    await credit(p, 'gold', 250);
    const replies = await Promise.all(
      Array.from({ length: 8 }, (_, i) => buy(p, { cardTypeKey: 'mage', payWith: 'gold', as: i % 2 ? 'stack' : 'instance' }, { idem: newKey() })),
    );
    const acted = replies.filter((r) => r.status === 200);
    expect(acted).toHaveLength(5);
    for (const r of replies.filter((x) => x.status !== 200)) expectError(r, 409, 'insufficient-balance');
    expect(await balances(p)).toEqual({ gold: 0 });
    const cards = (await h.db('cards').where({ player_id: p })).length;
    const stack = await h.db('card_stacks as s').join('inventories as i', 'i.id', 's.inventory_id').where('i.player_id', p).first('s.quantity');
    expect(cards + Number(stack?.quantity ?? 0)).toBe(5);
  });
});
