/**
 * Who may send what (docs/economy.md "Who may send what"): the services decide, from the sender the
 * caller names, for items, cards and skill nodes alike (apps/core/src/economy/senders.ts). Called here
 * straight on core's services, with no route in between: a player sending a field only a server key
 * sends is `forbidden` before anything else is looked at, and changes nothing; a server key sending the
 * same acts; a game that unlocks its players' skill nodes itself refuses every unlock a player sends.
 * (The API's answers to the same requests are held by test/items/purchases.test.ts,
 * test/cards/cards.test.ts and test/progression/progression.test.ts.) Each test runs in a
 * transaction rolled back after it (test/support/domain.ts).
 */
import { Refusal } from '@hearth/core';
import { checkSender, type SenderRule } from '@hearth/core/economy';
import type { EnvironmentContext } from '@hearth/core/tenancy';
import { domainSuite } from '../support/domain';
import { skillTree, standardManifests } from '../support/manifests';
import { GAME_ENV, forSale, goldAndEnergy } from '../support/fixtures/economy';
import { card, template } from '../support/fixtures/cards';
import { gameUnlockingSkillNodes } from '../support/fixtures/progression';

const content = [
  ...goldAndEnergy(),
  forSale('boost', { prices: [{ currencyKey: 'energy', amount: 5 }] }),
  card('rune', { purchasable: true, prices: [{ currencyKey: 'gold', amount: 3 }] }),
  template('foil', { name: 'Foil' }),
  skillTree('combat', { environment: GAME_ENV, name: 'Combat', nodes: [{ key: 'focus', name: 'Focus', prices: [{ currencyKey: 'energy', amount: 2 }] }] }),
  ...gameUnlockingSkillNodes(),
];

const suite = domainSuite({ manifests: [...standardManifests(), ...content] });
const appKeyOf = { 'alpha-live-key': 'alpha-live', 'house-live-key': 'house-live' } as const;

/** A new player of the server key's environment, and that environment as core sees it. */
function playerOf(keyName: keyof typeof appKeyOf): Promise<{ id: string; env: EnvironmentContext }> {
  return suite.player(appKeyOf[keyName]);
}

async function creditGold(player: { id: string; env: EnvironmentContext }, amount: number): Promise<void> {
  await suite.core.economy.move(suite.db, player.env, player.id, 'gold', 'credit', { amount, reason: 'setup' });
}

/** Everything of the player's a sender's refusal must leave as it was. */
async function holdings(playerId: string) {
  const db = suite.db;
  const inventories = db('inventories').where({ player_id: playerId }).select('id');
  return {
    balances: await db('balances').whereIn('inventory_id', inventories).orderBy('currency_key').select('currency_key', 'amount'),
    ledger: await db('ledger_entries').where({ player_id: playerId }).count({ n: '*' }),
    itemStacks: await db('item_stacks').whereIn('inventory_id', inventories).select('item_type_key', 'quantity'),
    cards: await db('cards').where({ player_id: playerId }).count({ n: '*' }),
    skillNodes: await db('player_skill_nodes').where({ player_id: playerId }).select('node_key'),
  };
}

/** What `work` refused with, as code and message. */
async function refusalOf(work: Promise<unknown>): Promise<{ code: string; message: string }> {
  const error = await work.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(error).toBeInstanceOf(Refusal);
  const { code, message } = error as Refusal;
  return { code, message };
}

const forbidden = (message: string) => ({ code: 'forbidden', message });

describe('the one rule', () => {
  type Asked = { cardTypeKey?: string; payWith?: string; cardTemplateKey?: string; data?: object; allowances?: object };
  const rule: SenderRule<Asked> = {
    serverOnly: ['cardTemplateKey', 'data', 'allowances'],
    playerRefused: (env) => (env.name === 'closed' ? 'closed to players' : undefined),
  };
  const env = (name: string) => ({ name }) as EnvironmentContext;

  test('a server key sends anything; a player what the rule leaves to players', () => {
    expect(() => checkSender(rule, 'server', env('closed'), { cardTemplateKey: 'foil', data: {}, allowances: {} })).not.toThrow();
    expect(() => checkSender(rule, 'player', env('open'), { cardTypeKey: 'rune', payWith: 'gold' })).not.toThrow();
  });

  test("a player sending a server's field is forbidden, naming the first in the rule's order; a request closed to players is forbidden with the rule's reason first", () => {
    expect(() => checkSender(rule, 'player', env('open'), { allowances: {}, data: {} })).toThrow(new Refusal('forbidden', 'Only a server key sends data.'));
    expect(() => checkSender(rule, 'player', env('open'), { allowances: {} })).toThrow('Only a server key sends allowances.');
    expect(() => checkSender(rule, 'player', env('closed'), { data: {} })).toThrow('closed to players');
  });
});

describe('items: a purchase', () => {
  test('allowances from a player are forbidden, before the item type is looked at, and change nothing; from a server key the purchase is made', async () => {
    const p = await playerOf('alpha-live-key');
    const before = await holdings(p.id);
    expect(await refusalOf(suite.core.purchases.buyItem(suite.db, p.env, p.id, { itemTypeKey: 'boost', allowances: { energy: 100 } }, 'player'))).toEqual(
      forbidden('Only a server key sends allowances.'),
    );
    expect(await refusalOf(suite.core.purchases.buyItem(suite.db, p.env, p.id, { itemTypeKey: 'no-such-type', allowances: {} }, 'player'))).toEqual(
      forbidden('Only a server key sends allowances.'),
    );
    expect(await holdings(p.id)).toEqual(before);

    const purchase = await suite.core.purchases.buyItem(suite.db, p.env, p.id, { itemTypeKey: 'boost', allowances: { energy: 100 } }, 'server');
    expect(purchase.granted?.stack).toEqual({ itemTypeKey: 'boost', quantity: 1 });
    expect(purchase.charges.map((c) => [c.currencyKey, c.amount])).toEqual([['energy', 5]]);
  });
});

describe('cards: a purchase', () => {
  test('a template, data or allowances from a player are forbidden, naming the first sent, and change nothing; from a server key the card is made with them', async () => {
    const p = await playerOf('alpha-live-key');
    await creditGold(p, 10);
    const before = await holdings(p.id);
    const buy = (extra: Record<string, unknown>) => suite.core.cards.buy(suite.db, p.env, p.id, { cardTypeKey: 'rune', realmId: null, ...extra }, 'player');
    expect(await refusalOf(buy({ cardTemplateKey: 'foil' }))).toEqual(forbidden('Only a server key sends cardTemplateKey.'));
    expect(await refusalOf(buy({ data: { shine: 1 } }))).toEqual(forbidden('Only a server key sends data.'));
    expect(await refusalOf(buy({ allowances: { energy: 1 } }))).toEqual(forbidden('Only a server key sends allowances.'));
    expect(await refusalOf(buy({ allowances: {}, data: {}, cardTemplateKey: 'foil' }))).toEqual(forbidden('Only a server key sends cardTemplateKey.'));
    // Checked first: an oversized data from a player is forbidden, not invalid.
    expect(await refusalOf(buy({ data: { text: 'x'.repeat(2000) } }))).toEqual(forbidden('Only a server key sends data.'));
    expect(await holdings(p.id)).toEqual(before);

    // Without them the player buys.
    expect((await buy({})).granted).toMatchObject({ card: { cardTypeKey: 'rune', cardTemplateKey: null, data: {} } });
    const served = await suite.core.cards.buy(
      suite.db,
      p.env,
      p.id,
      { cardTypeKey: 'rune', realmId: null, cardTemplateKey: 'foil', data: { shine: 1 } },
      'server',
    );
    expect(served.granted).toMatchObject({ card: { cardTypeKey: 'rune', cardTemplateKey: 'foil', data: { shine: 1 } } });
  });
});

describe('skill nodes: an unlock', () => {
  test('allowances from a player are forbidden and change nothing; from a server key the node is unlocked', async () => {
    const p = await playerOf('alpha-live-key');
    const before = await holdings(p.id);
    expect(await refusalOf(suite.core.skillTrees.unlock(suite.db, p.env, p.id, 'focus', { allowances: { energy: 10 } }, 'player'))).toEqual(
      forbidden('Only a server key sends allowances.'),
    );
    expect(await holdings(p.id)).toEqual(before);
    const { answer } = await suite.core.skillTrees.unlock(suite.db, p.env, p.id, 'focus', { allowances: { energy: 10 } }, 'server');
    expect(answer).toMatchObject({ nodeKey: 'focus', alreadyUnlocked: false });
    expect((await holdings(p.id)).skillNodes).toEqual([{ node_key: 'focus' }]);
  });

  test('in a game that unlocks its players’ skill nodes itself, every unlock a player sends is forbidden; its servers unlock', async () => {
    const p = await playerOf('house-live-key');
    expect(p.env.skillNodesUnlockedBy).toBe('game');
    expect(await refusalOf(suite.core.skillTrees.unlock(suite.db, p.env, p.id, 'house.root', {}, 'player'))).toEqual(
      forbidden("This game's skill nodes are unlocked by the game itself, not by a player's token."),
    );
    expect((await holdings(p.id)).skillNodes).toEqual([]);
    const { answer } = await suite.core.skillTrees.unlock(suite.db, p.env, p.id, 'house.root', {}, 'server');
    expect(answer).toMatchObject({ nodeKey: 'house.root', alreadyUnlocked: false, charges: [] });
  });
});
