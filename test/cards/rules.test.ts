/**
 * The cards' rules (spec §2 Card, Stack (cards), Deck, card type definition, card template,
 * Purchase<T>; §4 "Cards and decks", "Buying"; docs/cards.md), called straight on core's services with
 * no route in between, each test in a transaction rolled back after it (test/support/domain.ts):
 * - a card's grant (where it goes, grantKey, template, data), its consumption (out of every deck),
 *   stacks granted and taken, and every refusal, each changing nothing;
 * - decks: made, listed, read, renamed and deleted; cards put in and taken out; type lines set and
 *   removed; the limits (50 decks, 200 lines); validation's five problem codes and starter types;
 * - buying: as an instance or into the stack, price rules, where a card goes and where it is paid
 *   from, what only a server may send, every refusal changing nothing;
 * - what the CardType and CardTemplate kinds refuse, naming the field and changing nothing.
 *
 * The HTTP side (status codes and error bodies, the routes' schemas, credentials and `me`, pages and
 * cursors, Idempotency-Key replays, races across connections) is in test/cards/cards.test.ts; the
 * definitions' pages and ETags in test/cards/definitions.test.ts.
 */
import type { AnyManifest } from '@hearth/core/manifests';
import type { EnvironmentContext } from '@hearth/core/tenancy';
import { domainSuite } from '../support/domain';
import { cardTemplate, cardType, standardManifests } from '../support/manifests';
import { GAME_ENV, permanentAndSeason1Realms, shopCurrencies } from '../support/fixtures/economy';
import { card, cardsContent, knight, template } from '../support/fixtures/cards';
import { contentVersion, expectEachRefused } from '../support/reconcile';

const suite = domainSuite({ manifests: [...standardManifests(), ...permanentAndSeason1Realms(), ...shopCurrencies(), ...cardsContent()] });
type Player = { id: string; env: EnvironmentContext };
type GrantAsk = Parameters<typeof suite.core.cards.grant>[3];
type StackAsk = Parameters<typeof suite.core.cards.grantStack>[3];
type BuyAsk = Parameters<typeof suite.core.cards.buy>[3];
const live = () => suite.player(GAME_ENV);

const grant = async (p: Player, request: GrantAsk) => (await suite.core.cards.grant(suite.db, p.env, p.id, request)).answer;
const consume = async (p: Player, cardId: string) => (await suite.core.cards.consume(suite.db, p.env, p.id, cardId)).answer;
const grantStack = async (p: Player, request: StackAsk) => (await suite.core.cards.grantStack(suite.db, p.env, p.id, request)).answer;
const consumeStack = async (p: Player, request: StackAsk) => (await suite.core.cards.consumeStack(suite.db, p.env, p.id, request)).answer;
const cards = (p: Player, inventory = 'current') => suite.core.cards.listCards(suite.db, p.env, p.id, inventory, {});
const stacks = (p: Player, inventory = 'current') => suite.core.cards.listStacks(suite.db, p.env, p.id, inventory, {});
const inventory = async (p: Player, selector: 'current' | 'account') => (await suite.core.economy.resolve(suite.db, p.env, p.id, selector)).id;
const setCardType = (key: string, change: Record<string, unknown>) => suite.db('card_types').where({ key }).update(change);
const buy = (p: Player, request: BuyAsk, by: 'server' | 'player' = 'server') => suite.core.cards.buy(suite.db, p.env, p.id, request, by);
const credit = (p: Player, currencyKey: string, amount: number, extra: { realmId?: string } = {}) =>
  suite.core.economy.move(suite.db, p.env, p.id, currencyKey, 'credit', { amount, reason: 'setup', ...extra });
const balances = async (p: Player, selector = 'account') =>
  Object.fromEntries((await suite.core.economy.balances(suite.db, p.env, p.id, selector, {})).items.map((b) => [b.currencyKey, b.amount]));

/** Everything a refusal must leave as it was: the player's cards (consumed or not), stacks, deck lines, balances and ledger. */
async function holdings(p: Player) {
  const mine = suite.db('inventories').where({ player_id: p.id }).select('id');
  return {
    cards: await suite.db('cards').where({ player_id: p.id }).orderBy('seq').select('id', 'inventory_id', 'card_type_key', 'consumed_at', 'data'),
    stacks: await suite.db('card_stacks').whereIn('inventory_id', mine).orderBy(['inventory_id', 'card_type_key']).select('*'),
    lines: await suite.db('deck_entries as e').join('decks as d', 'd.id', 'e.deck_id').where('d.player_id', p.id).orderBy('e.seq').select('e.*'),
    balances: await suite.db('balances').whereIn('inventory_id', mine).orderBy(['inventory_id', 'currency_key']).select('*'),
    ledger: await suite.db('ledger_entries').where({ player_id: p.id }).orderBy('id').select('id'),
  };
}

describe('granting a card', () => {
  test('goes to the current realm with neither inventoryId nor realmId; to the account with realmId null; listed in the order granted', async () => {
    const p = await live();
    const first = await grant(p, { cardTypeKey: 'knight', cardTemplateKey: 'foil', data: { level: 2 } });
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
    const second = await grant(p, { cardTypeKey: 'rat' });
    expect((await cards(p)).items).toEqual([first.card, second.card]);

    const onAccount = await grant(p, { cardTypeKey: 'rat', realmId: null });
    const account = await cards(p, 'account');
    expect(account.inventory.realmId).toBeNull();
    expect(account.items).toEqual([onAccount.card]);
    const inPermanent = await grant(p, { cardTypeKey: 'rat', realmId: 'permanent' });
    expect((await grant(p, { cardTypeKey: 'rat', inventoryId: inPermanent.card.inventoryId })).card.inventoryId).toBe(inPermanent.card.inventoryId);
  });

  test('a grantKey grants once: again it answers the first card with alreadyGranted, even after the type is switched off', async () => {
    const p = await live();
    const first = await grant(p, { cardTypeKey: 'knight', grantKey: 'launch-gift', data: { a: 1 } });
    const again = await grant(p, { cardTypeKey: 'knight', grantKey: 'launch-gift', data: { a: 2 }, realmId: null });
    expect(again).toEqual({ card: first.card, alreadyGranted: true });
    // Another type under the same key is another grant.
    expect((await grant(p, { cardTypeKey: 'rat', grantKey: 'launch-gift' })).alreadyGranted).toBe(false);
    await setCardType('knight', { enabled: false });
    expect(await grant(p, { cardTypeKey: 'knight', grantKey: 'launch-gift' })).toEqual({ card: first.card, alreadyGranted: true });
    await suite.expectRefusal(() => grant(p, { cardTypeKey: 'knight', grantKey: 'new-gift' }), 'disabled');
    expect((await cards(p)).items).toHaveLength(2);
  });

  test('refusals change nothing: unknown or switched-off type and template, data over 1 KB, an inventory or realm not the player’s, realmId with inventoryId, an unknown player', async () => {
    const p = await live();
    const other = await live();
    await grant(p, { cardTypeKey: 'rat' });
    const otherInventory = (await grant(other, { cardTypeKey: 'rat' })).card.inventoryId;
    const before = await holdings(p);
    await suite.expectRefusal(() => grant(p, { cardTypeKey: 'ghost' }), 'not-found', 'cardTypeKey');
    await suite.expectRefusal(() => grant(p, { cardTypeKey: 'dragon' }), 'disabled');
    await suite.expectRefusal(() => grant(p, { cardTypeKey: 'rat', cardTemplateKey: 'ghost' }), 'not-found', 'cardTemplateKey');
    await suite.expectRefusal(() => grant(p, { cardTypeKey: 'rat', cardTemplateKey: 'faded' }), 'disabled');
    await suite.expectRefusal(() => grant(p, { cardTypeKey: 'rat', data: { text: 'x'.repeat(1020) } }), 'invalid-request', 'data');
    await suite.expectRefusal(() => grant(p, { cardTypeKey: 'rat', inventoryId: otherInventory }), 'not-found', 'inventoryId');
    await suite.expectRefusal(() => grant(p, { cardTypeKey: 'rat', realmId: 'nowhere' }), 'not-found', 'realmId');
    await suite.expectRefusal(() => grant(p, { cardTypeKey: 'rat', realmId: null, inventoryId: otherInventory }), 'invalid-request', 'realmId');
    await suite.expectRefusal(() => grant({ ...p, id: 'no-such-player' }, { cardTypeKey: 'rat' }), 'not-found', 'playerId');
    expect(await holdings(p)).toEqual(before);
  });
});

describe('consuming a card', () => {
  test('takes it away and out of every deck; a second time is already-consumed; the other lines stay; another player’s card is not found', async () => {
    const p = await live();
    const { card } = await grant(p, { cardTypeKey: 'knight' });
    const { card: kept } = await grant(p, { cardTypeKey: 'rat' });
    // Two decks hold the card (written directly: what matters is the consumption's hook).
    for (const id of ['deck-a', 'deck-b']) {
      await suite.db('decks').insert({ id: `${p.id}-${id}`, environment_id: p.env.id, player_id: p.id, inventory_id: card.inventoryId, name: id });
      await suite.db('deck_entries').insert([
        { id: `${p.id}-${id}-1`, deck_id: `${p.id}-${id}`, card_id: card.id, count: 1 },
        { id: `${p.id}-${id}-2`, deck_id: `${p.id}-${id}`, card_id: kept.id, count: 1 },
        { id: `${p.id}-${id}-3`, deck_id: `${p.id}-${id}`, card_type_key: 'knight', count: 2 },
      ]);
    }
    const consumed = await consume(p, card.id);
    expect(consumed).toEqual({ ...card, consumedAt: expect.any(String) });
    expect(Date.parse(consumed.consumedAt!)).toBeGreaterThan(Date.now() - 60_000);
    expect((await cards(p)).items).toEqual([kept]);
    const lines = await suite
      .db('deck_entries')
      .whereIn('deck_id', [`${p.id}-deck-a`, `${p.id}-deck-b`])
      .orderBy('id')
      .select('id');
    expect(lines.map((e) => e.id)).toEqual([`${p.id}-deck-a-2`, `${p.id}-deck-a-3`, `${p.id}-deck-b-2`, `${p.id}-deck-b-3`]);

    const before = await holdings(p);
    expect((await suite.expectRefusal(() => consume(p, card.id), 'already-consumed')).details).toEqual({ cardTypeKey: 'knight' });
    await suite.expectRefusal(() => consume(p, 'no-such-card'), 'not-found');
    const other = await live();
    await suite.expectRefusal(() => consume(other, kept.id), 'not-found');
    expect(await holdings(p)).toEqual(before);
  });
});

describe('card stacks', () => {
  test('granted and taken; listed by key with the inventory; emptied, a stack leaves the list; a switched-off type’s cards may be taken, not granted', async () => {
    const p = await live();
    const granted = await grantStack(p, { cardTypeKey: 'rat', quantity: 5 });
    const current = await inventory(p, 'current');
    expect(granted).toEqual({ inventoryId: current, cardTypeKey: 'rat', quantity: 5 });
    await grantStack(p, { cardTypeKey: 'knight', quantity: 1 });
    await grantStack(p, { cardTypeKey: 'rat', quantity: 2, realmId: null });
    expect(await stacks(p)).toEqual({
      items: [
        { inventoryId: current, cardTypeKey: 'knight', quantity: 1 },
        { inventoryId: current, cardTypeKey: 'rat', quantity: 5 },
      ],
      next: null,
      inventory: { id: current, realmId: 's1' },
    });
    expect((await stacks(p, 'account')).items).toEqual([{ inventoryId: await inventory(p, 'account'), cardTypeKey: 'rat', quantity: 2 }]);

    expect(await consumeStack(p, { cardTypeKey: 'rat', quantity: 3 })).toEqual({ inventoryId: current, cardTypeKey: 'rat', quantity: 2 });
    await consumeStack(p, { cardTypeKey: 'knight', quantity: 1 });
    expect((await stacks(p)).items).toEqual([{ inventoryId: current, cardTypeKey: 'rat', quantity: 2 }]);
    await grantStack(p, { cardTypeKey: 'knight', quantity: 1 });
    await setCardType('knight', { enabled: false });
    expect(await consumeStack(p, { cardTypeKey: 'knight', quantity: 1 })).toEqual({ inventoryId: current, cardTypeKey: 'knight', quantity: 0 });
    await suite.expectRefusal(() => grantStack(p, { cardTypeKey: 'knight', quantity: 1 }), 'disabled');
  });

  test('refusals change nothing: more than held (insufficient-balance with held and requested), quantity out of range, unknown or switched-off type', async () => {
    const p = await live();
    await grantStack(p, { cardTypeKey: 'rat', quantity: 3 });
    const before = await holdings(p);
    expect((await suite.expectRefusal(() => consumeStack(p, { cardTypeKey: 'rat', quantity: 4 }), 'insufficient-balance')).details).toEqual({
      cardTypeKey: 'rat',
      held: 3,
      requested: 4,
    });
    await suite.expectRefusal(() => consumeStack(p, { cardTypeKey: 'knight', quantity: 1 }), 'insufficient-balance');
    await suite.expectRefusal(() => consumeStack(p, { cardTypeKey: 'rat', quantity: 1, realmId: null }), 'insufficient-balance');
    for (const quantity of [0, 1001, 1.5]) {
      await suite.expectRefusal(() => grantStack(p, { cardTypeKey: 'rat', quantity }), 'invalid-request', 'quantity');
      await suite.expectRefusal(() => consumeStack(p, { cardTypeKey: 'rat', quantity }), 'invalid-request', 'quantity');
    }
    await suite.expectRefusal(() => grantStack(p, { cardTypeKey: 'ghost', quantity: 1 }), 'not-found');
    await suite.expectRefusal(() => consumeStack(p, { cardTypeKey: 'ghost', quantity: 1 }), 'not-found');
    await suite.expectRefusal(() => grantStack(p, { cardTypeKey: 'dragon', quantity: 1 }), 'disabled');
    expect(await holdings(p)).toEqual(before);
  });

  test('a card stack stops at 2^53-1, as an item stack does: owned-limit past it, nothing changed', async () => {
    const p = await live();
    const { inventoryId } = await grantStack(p, { cardTypeKey: 'rat', quantity: 1 });
    // Near the ceiling of exact numbers (put there directly: a test cannot grant 2^53 times).
    await suite
      .db('card_stacks')
      .where({ inventory_id: inventoryId, card_type_key: 'rat' })
      .update({ quantity: (2n ** 53n - 2n).toString() });
    const before = await holdings(p);
    expect((await suite.expectRefusal(() => grantStack(p, { cardTypeKey: 'rat', quantity: 2 }), 'owned-limit')).details).toEqual({
      cardTypeKey: 'rat',
      held: 2 ** 53 - 2,
      requested: 2,
      limit: Number.MAX_SAFE_INTEGER,
    });
    expect(await holdings(p)).toEqual(before);
    expect(await grantStack(p, { cardTypeKey: 'rat', quantity: 1 })).toEqual({ inventoryId, cardTypeKey: 'rat', quantity: Number.MAX_SAFE_INTEGER });
  });
});

describe('decks', () => {
  const decks = () => suite.core.decks;
  const makeDeck = async (p: Player, name = 'Main', where?: string) =>
    decks().create(suite.db, p.env, p.id, { inventoryId: where ?? (await inventory(p, 'current')), name });
  const put = (p: Player, deckId: string, cardId: string) => decks().putCard(suite.db, p.env, p.id, deckId, cardId);
  const setType = (p: Player, deckId: string, cardTypeKey: string, count: number) => decks().setTypeCount(suite.db, p.env, p.id, deckId, cardTypeKey, count);

  test('made, listed (by inventory too), read, renamed and deleted', async () => {
    const p = await live();
    const current = await inventory(p, 'current');
    const made = await makeDeck(p, 'Aggro');
    expect(made).toEqual({ id: expect.any(String), inventoryId: current, name: 'Aggro', entries: [] });
    const account = await inventory(p, 'account');
    const other = await makeDeck(p, 'Control', account);
    expect(await decks().list(suite.db, p.env, p.id, {})).toEqual({ items: [made, other], next: null });
    expect(await decks().list(suite.db, p.env, p.id, { inventoryId: account })).toEqual({ items: [other], next: null });
    expect(await decks().get(suite.db, p.env, p.id, made.id)).toEqual(made);
    expect(await decks().rename(suite.db, p.env, p.id, made.id, 'Burn')).toEqual({ ...made, name: 'Burn' });
    await decks().delete(suite.db, p.env, p.id, other.id);
    await suite.expectRefusal(() => decks().get(suite.db, p.env, p.id, other.id), 'not-found');
    expect((await decks().list(suite.db, p.env, p.id, {})).items.map((d) => d.name)).toEqual(['Burn']);
  });

  test('cards and type lines: put, taken out, set and removed; a consumed card leaves the deck', async () => {
    const p = await live();
    const deck = await makeDeck(p);
    const [one, two] = [(await grant(p, { cardTypeKey: 'knight' })).card, (await grant(p, { cardTypeKey: 'rat' })).card];
    const withOne = await put(p, deck.id, one.id);
    expect(withOne.entries).toEqual([{ id: expect.any(String), cardId: one.id, cardTypeKey: null, count: 1 }]);
    expect(await put(p, deck.id, one.id)).toEqual(withOne); // already there: unchanged
    await put(p, deck.id, two.id);
    const typed = await setType(p, deck.id, 'squire', 2);
    expect(typed.entries.map((e) => [e.cardId, e.cardTypeKey, e.count])).toEqual([
      [one.id, null, 1],
      [two.id, null, 1],
      [null, 'squire', 2],
    ]);
    expect((await setType(p, deck.id, 'squire', 4)).entries[2]).toMatchObject({ cardTypeKey: 'squire', count: 4 });
    const taken = await decks().takeCard(suite.db, p.env, p.id, deck.id, two.id);
    expect(taken.entries.map((e) => e.cardId ?? e.cardTypeKey)).toEqual([one.id, 'squire']);
    expect((await decks().takeCard(suite.db, p.env, p.id, deck.id, two.id)).entries).toHaveLength(2); // not there: done
    expect((await setType(p, deck.id, 'squire', 0)).entries.map((e) => e.cardId)).toEqual([one.id]);
    await consume(p, one.id);
    expect((await decks().get(suite.db, p.env, p.id, deck.id)).entries).toEqual([]);
  });

  test('validation: size, per-type-limit, not-owned (never for a starter type), unknown and switched-off types', async () => {
    const p = await live();
    const deck = await makeDeck(p);
    const validation = (maxSize?: number) => decks().validate(suite.db, p.env, p.id, deck.id, maxSize);
    expect(await validation()).toEqual({ valid: true, size: 0, problems: [] });

    for (let i = 0; i < 2; i++) await put(p, deck.id, (await grant(p, { cardTypeKey: 'knight' })).card.id);
    await grantStack(p, { cardTypeKey: 'rat', quantity: 2 });
    await setType(p, deck.id, 'rat', 2);
    await setType(p, deck.id, 'squire', 4);
    expect(await validation()).toEqual({ valid: true, size: 8, problems: [] });
    expect(await validation(7)).toEqual({ valid: false, size: 8, problems: [{ code: 'size', message: expect.any(String) }] });

    // Two knight cards in the deck plus a line of two more: past perDeckLimit 3, and only the two held.
    await setType(p, deck.id, 'knight', 2);
    await setType(p, deck.id, 'rat', 3);
    await setType(p, deck.id, 'dragon', 1);
    await setType(p, deck.id, 'fleeting', 1);
    await grantStack(p, { cardTypeKey: 'fleeting', quantity: 1 });
    await suite.db('card_types').where({ key: 'fleeting' }).delete(); // deleted since it was put in the deck
    const found = await validation();
    expect(found.valid).toBe(false);
    expect(found.size).toBe(13);
    expect(found.problems.map((x) => [x.code, x.cardTypeKey])).toEqual([
      ['disabled-card-type', 'dragon'],
      ['not-owned', 'dragon'],
      ['unknown-card-type', 'fleeting'],
      ['per-type-limit', 'knight'],
      ['not-owned', 'knight'],
      ['not-owned', 'rat'],
    ]);
    for (const problem of found.problems) expect(typeof problem.message).toBe('string');
  });

  test('limits: 50 decks a player (owned-limit with held and limit) and 200 lines a deck; changing a line needs no new one', async () => {
    const p = await live();
    for (let i = 0; i < 50; i++) await makeDeck(p, `d${i}`);
    expect((await suite.expectRefusal(() => makeDeck(p, 'd50'), 'owned-limit')).details).toEqual({ held: 50, requested: 1, limit: 50 });
    expect(await suite.db('decks').where({ player_id: p.id })).toHaveLength(50);

    const deck = (await decks().list(suite.db, p.env, p.id, { limit: 1 })).items[0];
    // 199 lines written directly (card types need not exist for the count): one more fits, a second does not.
    await suite
      .db('deck_entries')
      .insert(Array.from({ length: 199 }, (_, i) => ({ id: `${deck.id}-${i}`, deck_id: deck.id, card_type_key: `filler-${i}`, count: 1 })));
    const [a, b] = [(await grant(p, { cardTypeKey: 'rat' })).card, (await grant(p, { cardTypeKey: 'rat' })).card];
    expect((await put(p, deck.id, a.id)).entries).toHaveLength(200);
    await suite.expectRefusal(() => put(p, deck.id, b.id), 'owned-limit');
    await suite.expectRefusal(() => setType(p, deck.id, 'knight', 1), 'owned-limit');
    await suite
      .db('deck_entries')
      .where({ id: `${deck.id}-0` })
      .update({ card_type_key: 'rat' });
    expect((await setType(p, deck.id, 'rat', 5)).entries).toHaveLength(200);
  });

  test('refusals change nothing: another player’s inventory, deck or card, a consumed card or one held elsewhere, an unknown type, a count out of range', async () => {
    const p = await live();
    const other = await live();
    const deck = await makeDeck(p);
    const theirs = await makeDeck(other);
    const theirCard = (await grant(other, { cardTypeKey: 'rat' })).card;
    const consumed = (await grant(p, { cardTypeKey: 'rat' })).card;
    await consume(p, consumed.id);
    const elsewhere = (await grant(p, { cardTypeKey: 'rat', realmId: null })).card;
    const state = async () => ({
      decks: await suite.db('decks').whereIn('player_id', [p.id, other.id]).orderBy('seq').select('id', 'name'),
      lines: await suite.db('deck_entries').whereIn('deck_id', [deck.id, theirs.id]).orderBy('seq').select('*'),
    });
    const before = await state();
    await suite.expectRefusal(() => makeDeck(p, 'x', theirs.inventoryId), 'not-found', 'inventoryId');
    await suite.expectRefusal(() => decks().rename(suite.db, p.env, p.id, theirs.id, 'mine'), 'not-found');
    await suite.expectRefusal(() => decks().delete(suite.db, p.env, p.id, theirs.id), 'not-found');
    await suite.expectRefusal(() => decks().get(suite.db, p.env, p.id, theirs.id), 'not-found');
    await suite.expectRefusal(() => decks().validate(suite.db, p.env, p.id, theirs.id), 'not-found');
    await suite.expectRefusal(() => put(p, deck.id, theirCard.id), 'not-found', 'cardId');
    expect((await suite.expectRefusal(() => put(p, deck.id, consumed.id), 'already-consumed')).details).toEqual({ cardTypeKey: 'rat' });
    await suite.expectRefusal(() => put(p, deck.id, elsewhere.id), 'invalid-request', 'cardId');
    const ghost = await suite.expectRefusal(() => setType(p, deck.id, 'archr', 1), 'not-found', 'cardTypeKey');
    expect(ghost.message).toBe('The card type "archr" was not found in this environment.');
    for (const count of [-1, 1001, 1.5]) await suite.expectRefusal(() => setType(p, deck.id, 'rat', count), 'invalid-request', 'count');
    await suite.expectRefusal(() => decks().list(suite.db, p.env, 'no-such-player', {}), 'not-found');
    expect(await state()).toEqual(before);
  });
});

describe('buying cards', () => {
  test('as an instance: every price charged from the account in currency-key order, the card in the current realm, the ledger naming it', async () => {
    const p = await live();
    await credit(p, 'gold', 250);
    await credit(p, 'gems', 10);
    const purchase = await buy(p, { cardTypeKey: 'knight' });
    const current = await cards(p);
    const account = await inventory(p, 'account');
    expect(purchase).toEqual({
      replayed: false,
      charges: [
        { transactionId: expect.any(String), inventoryId: account, currencyKey: 'gems', amount: -2, balanceAfter: 8, replayed: false },
        { transactionId: expect.any(String), inventoryId: account, currencyKey: 'gold', amount: -100, balanceAfter: 150, replayed: false },
      ],
      granted: {
        card: {
          id: expect.any(String),
          inventoryId: current.inventory.id,
          cardTypeKey: 'knight',
          cardTemplateKey: null,
          grantKey: null,
          consumedAt: null,
          data: {},
        },
        alreadyGranted: false,
      },
    });
    expect(current.items).toEqual([(purchase.granted as { card: unknown }).card]);
    expect(await balances(p)).toEqual({ gems: 8, gold: 150 });
    const ledger = (await suite.core.economy.ledger(suite.db, p.env, p.id, {})).items;
    expect(ledger.slice(0, 2).map((e) => [e.currencyKey, e.amount, e.reason, e.reference])).toEqual(
      expect.arrayContaining([
        ['gold', -100, 'purchase', 'card:knight'],
        ['gems', -2, 'purchase', 'card:knight'],
      ]),
    );
  });

  test('as a stack: one more in the stack of the chosen inventory; priceRule any pays the payWith price', async () => {
    const p = await live();
    await credit(p, 'gold', 200);
    await credit(p, 'gems', 20);
    const account = await inventory(p, 'account');
    const first = await buy(p, { cardTypeKey: 'mage', as: 'stack', payWith: 'gems', realmId: null });
    expect(first.granted).toEqual({ inventoryId: account, cardTypeKey: 'mage', quantity: 1 });
    expect(first.charges.map((c) => [c.currencyKey, c.amount])).toEqual([['gems', -5]]);
    const second = await buy(p, { cardTypeKey: 'mage', as: 'stack', payWith: 'gold', inventoryId: account });
    expect(second.granted).toEqual({ inventoryId: account, cardTypeKey: 'mage', quantity: 2 });
    expect(await balances(p)).toEqual({ gems: 15, gold: 150 });
    expect((await stacks(p, 'account')).items).toEqual([{ inventoryId: account, cardTypeKey: 'mage', quantity: 2 }]);
  });

  test('a server sends a template, data and a consumed currency’s allowance; a realm currency is paid in the realm the card goes to', async () => {
    const p = await live();
    const bought = await buy(p, { cardTypeKey: 'spark', cardTemplateKey: 'foil', data: { shiny: true }, allowances: { energy: 100 } });
    expect(bought.granted).toMatchObject({ card: { cardTypeKey: 'spark', cardTemplateKey: 'foil', data: { shiny: true } } });
    expect(bought.charges.map((c) => [c.currencyKey, c.amount, c.balanceAfter])).toEqual([['energy', 30, 30]]);
    await credit(p, 'tokens', 10, { realmId: 's1' });
    const scout = await buy(p, { cardTypeKey: 'scout' });
    expect(scout.charges[0]).toMatchObject({
      currencyKey: 'tokens',
      amount: -4,
      balanceAfter: 6,
      inventoryId: (scout.granted as { card: { inventoryId: string } }).card.inventoryId,
    });
  });

  test('a player buys for itself with balance currencies; a template, data or allowances are the server’s word (forbidden), charging nothing', async () => {
    const p = await live();
    await credit(p, 'gold', 60);
    expect((await buy(p, { cardTypeKey: 'mage', payWith: 'gold' }, 'player')).granted).toMatchObject({ card: { cardTypeKey: 'mage' } });
    expect(await balances(p)).toEqual({ gold: 10 });
    await credit(p, 'gold', 100);
    const before = await holdings(p);
    await suite.expectRefusal(() => buy(p, { cardTypeKey: 'mage', payWith: 'gold', allowances: { energy: 1 } }, 'player'), 'forbidden');
    await suite.expectRefusal(() => buy(p, { cardTypeKey: 'mage', payWith: 'gold', data: {} }, 'player'), 'forbidden');
    await suite.expectRefusal(() => buy(p, { cardTypeKey: 'mage', payWith: 'gold', cardTemplateKey: 'foil' }, 'player'), 'forbidden');
    expect(await holdings(p)).toEqual(before);
  });

  test('refusals change nothing', async () => {
    const p = await live();
    await credit(p, 'gold', 120);
    await credit(p, 'gems', 1);
    const before = await holdings(p);
    expect((await suite.expectRefusal(() => buy(p, { cardTypeKey: 'relic' }), 'not-purchasable')).details).toEqual({ cardTypeKey: 'relic' });
    await suite.expectRefusal(() => buy(p, { cardTypeKey: 'ghostpriced' }), 'not-purchasable');
    await suite.expectRefusal(() => buy(p, { cardTypeKey: 'dragon' }), 'disabled');
    expect((await suite.expectRefusal(() => buy(p, { cardTypeKey: 'knight' }), 'insufficient-balance')).details).toEqual({
      currencyKey: 'gems',
      held: 1,
      requested: 2,
    });
    await suite.expectRefusal(() => buy(p, { cardTypeKey: 'spark' }), 'invalid-request', 'allowances');
    expect((await suite.expectRefusal(() => buy(p, { cardTypeKey: 'spark', allowances: { energy: 10 } }), 'allowance-exceeded')).details).toEqual({
      currencyKey: 'energy',
      held: 0,
      requested: 30,
      allowance: 10,
    });
    await suite.expectRefusal(() => buy(p, { cardTypeKey: 'mage' }), 'invalid-request', 'payWith');
    await suite.expectRefusal(() => buy(p, { cardTypeKey: 'mage', payWith: 'tokens' }), 'invalid-request', 'payWith');
    await suite.expectRefusal(() => buy(p, { cardTypeKey: 'ghost' }), 'not-found');
    await suite.expectRefusal(() => buy(p, { cardTypeKey: 'mage', payWith: 'gold', cardTemplateKey: 'ghost' }), 'not-found');
    await suite.expectRefusal(() => buy(p, { cardTypeKey: 'mage', payWith: 'gold', cardTemplateKey: 'faded' }), 'disabled');
    await suite.expectRefusal(() => buy(p, { cardTypeKey: 'mage', payWith: 'gold', as: 'stack', data: { a: 1 } }), 'invalid-request', 'data');
    await suite.expectRefusal(
      () => buy(p, { cardTypeKey: 'mage', payWith: 'gold', as: 'stack', cardTemplateKey: 'foil' }),
      'invalid-request',
      'cardTemplateKey',
    );
    await suite.expectRefusal(() => buy(p, { cardTypeKey: 'mage', payWith: 'gold', data: { text: 'x'.repeat(1020) } }), 'invalid-request', 'data');
    await suite.expectRefusal(() => buy(p, { cardTypeKey: 'mage', payWith: 'gold', realmId: 'nowhere' }), 'not-found', 'realmId');
    expect(await holdings(p)).toEqual(before);
  });
});

describe('the CardType and CardTemplate kinds', () => {
  const foilDoc = (spec: Record<string, unknown> = {}) => template('foil', { name: 'Foil', ...spec });
  const version = (kind: 'card-types' | 'card-templates') => contentVersion(suite.db, kind);

  test('refusals name the field and change nothing', async () => {
    const cases: [AnyManifest, string, RegExp][] = [
      [
        knight({
          prices: [
            { currencyKey: 'gold', amount: 1 },
            { currencyKey: 'gold', amount: 2 },
          ],
        }),
        'spec.prices',
        /each currency once/,
      ],
      [knight({ prices: [], priceRule: 'all' }), 'spec.prices', /at least one price for a purchasable card type/],
      [card('squire', { starter: true, priceRule: 'any' }), 'spec.priceRule', /any needs at least one price/],
      [knight({ perDeckLimit: 0 }), 'spec.perDeckLimit', /must be >= 1/],
      [knight({ perDeckLimit: 1001 }), 'spec.perDeckLimit', /must be <= 1000/],
      [knight({ slug: '-knight' }), 'spec.slug', /must match pattern/],
      [knight({ key: 'knight' }), 'spec.key', /is not taken here/],
      [knight({ prices: [{ currencyKey: 'gold', amount: 0 }] }), 'spec.prices.0.amount', /must be >= 1/],
      [knight({ data: { text: 'x'.repeat(1020) } }), 'spec.data', /1031 bytes written compactly; at most 1024/],
      [foilDoc({ data: { text: 'x'.repeat(1020) } }), 'spec.data', /1031 bytes written compactly; at most 1024/],
      [cardType('knight-2', { environment: GAME_ENV, slug: 'knight', name: 'Another' }), 'spec.slug', /already belongs to CardType tests\/knight/],
      [cardTemplate('foil-2', { environment: GAME_ENV, key: 'foil', name: 'Another' }), 'spec.key', /already belongs to CardTemplate tests\/foil/],
      [cardType('a'.repeat(129), { environment: GAME_ENV, name: 'Long' }), 'spec.slug', /is not a card type key/],
      [cardType('nowhere', { environment: 'no-such-env', name: 'N' }), 'spec.environment', /does not exist/],
      [foilDoc({ slug: 'x' }), 'spec.slug', /is not taken here/],
    ];
    const typesBefore = await suite.db('card_types').orderBy('key').select('*');
    const templatesBefore = await suite.db('card_templates').orderBy('key').select('*');
    const versions = [await version('card-types'), await version('card-templates')];
    await expectEachRefused(suite.db, suite.core.bus, cases);
    expect(await suite.db('card_types').orderBy('key').select('*')).toEqual(typesBefore);
    expect(await suite.db('card_templates').orderBy('key').select('*')).toEqual(templatesBefore);
    expect([await version('card-types'), await version('card-templates')]).toEqual(versions);
  });
});
