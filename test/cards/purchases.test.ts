/**
 * Buying cards (spec §4 "Buying", §2 Purchase<T>; docs/cards.md "Buying cards"), over real HTTP: as an
 * instance or into the stack, price rules, where a card goes and where it is paid from, a server's
 * template, data and allowances, every refusal (each changing nothing), replays under an
 * Idempotency-Key, and concurrent purchases and retries that must charge once and never pass a balance.
 */
import { type Harness, startHarness } from '../support/harness';
import { type Reply, call, expectError, signIn } from '../support/http';
import { cardTemplate, cardType, currency, realm, standardManifests } from '../support/manifests';

const env = 'alpha-live';
const coin = (name: string, spec: Record<string, unknown>) => currency(name, { environment: env, name, scope: 'account', kind: 'balance', ...spec });
const card = (name: string, spec: Record<string, unknown>) => cardType(name, { environment: env, name, purchasable: true, ...spec });

const content = [
  realm('permanent', { environment: env, number: 0, name: 'Forever', startAt: '2020-01-01T00:00:00Z' }),
  realm('season-1', { environment: env, key: 's1', number: 1, name: 'Season 1', startAt: '2024-01-01T00:00:00Z' }),
  coin('gold', {}),
  coin('gems', {}),
  coin('energy', { kind: 'consumed', max: 500 }),
  coin('tokens', { scope: 'realm' }),
  card('knight', {
    prices: [
      { currencyKey: 'gold', amount: 100 },
      { currencyKey: 'gems', amount: 2 },
    ],
  }),
  card('mage', {
    priceRule: 'any',
    prices: [
      { currencyKey: 'gold', amount: 50 },
      { currencyKey: 'gems', amount: 5 },
    ],
  }),
  card('spark', { prices: [{ currencyKey: 'energy', amount: 30 }] }),
  card('scout', { prices: [{ currencyKey: 'tokens', amount: 4 }] }),
  card('relic', { purchasable: false }),
  card('dragon', { enabled: false, prices: [{ currencyKey: 'gold', amount: 1 }] }),
  card('ghostpriced', {
    prices: [
      { currencyKey: 'gold', amount: 1 },
      { currencyKey: 'ghost', amount: 1 },
    ],
  }),
  cardTemplate('foil', { environment: env, name: 'Foil' }),
  cardTemplate('faded', { environment: env, name: 'Faded', enabled: false }),
];

let h: Harness;
let key: string;
let seq = 0;
const newKey = () => `cp-${Date.now()}-${++seq}`;

beforeAll(async () => {
  h = await startHarness({ manifests: [...standardManifests(), ...content] });
  key = h.serverKeys['alpha-live-key'];
});
afterAll(async () => {
  await h.close();
});

const player = async (subject: string) => (await signIn(h.base, key, subject)).player.id;
const buy = (playerId: string, body: Record<string, unknown>, opts: { token?: string; idem?: string } = {}) =>
  call(h.base, 'POST', `/players/${playerId}/purchases/cards`, { token: opts.token ?? key, body, headers: opts.idem ? { 'Idempotency-Key': opts.idem } : {} });
const ok = <T = any>(reply: Reply<T>): T => {
  expect({ status: reply.status, body: reply.body }).toEqual({ status: 200, body: expect.anything() });
  return reply.body;
};
const credit = async (playerId: string, currencyKey: string, amount: number, extra: Record<string, unknown> = {}) =>
  ok(
    await call(h.base, 'POST', `/players/${playerId}/currencies/${currencyKey}/credit`, {
      token: key,
      body: { amount, reason: 'setup', ...extra },
      headers: { 'Idempotency-Key': newKey() },
    }),
  );
const balances = async (playerId: string, inventory = 'account') =>
  Object.fromEntries(
    (
      ok(await call(h.base, 'GET', `/players/${playerId}/inventories/${inventory}/balances`, { token: key })).items as { currencyKey: string; amount: number }[]
    ).map((b) => [b.currencyKey, b.amount]),
  );

/** Everything a refusal must leave as it was: balances of every inventory, cards, stacks and the ledger. */
async function snapshot(playerId: string) {
  return {
    balances: await h
      .db('balances as b')
      .join('inventories as i', 'i.id', 'b.inventory_id')
      .where('i.player_id', playerId)
      .orderBy(['b.inventory_id', 'b.currency_key'])
      .select('b.*'),
    cards: await h.db('cards').where({ player_id: playerId }).orderBy('seq').select('id'),
    stacks: await h.db('card_stacks as s').join('inventories as i', 'i.id', 's.inventory_id').where('i.player_id', playerId).select('s.*'),
    ledger: await h.db('ledger_entries').where({ player_id: playerId }).orderBy('id').select('id'),
  };
}

describe('buying a card', () => {
  test('as an instance: every price charged from the account in currency-key order, the card in the current realm, the ledger naming it', async () => {
    const p = await player('buy-instance');
    await credit(p, 'gold', 250);
    await credit(p, 'gems', 10);
    const purchase = ok(await buy(p, { cardTypeKey: 'knight' }));
    const current = ok(await call(h.base, 'GET', `/players/${p}/inventories/current/cards`, { token: key }));
    const account = ok(await call(h.base, 'GET', `/players/${p}/inventories/account`, { token: key }));
    expect(purchase).toEqual({
      replayed: false,
      charges: [
        { transactionId: expect.any(String), inventoryId: account.id, currencyKey: 'gems', amount: -2, balanceAfter: 8, replayed: false },
        { transactionId: expect.any(String), inventoryId: account.id, currencyKey: 'gold', amount: -100, balanceAfter: 150, replayed: false },
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
    expect(current.items).toEqual([purchase.granted.card]);
    expect(await balances(p)).toEqual({ gems: 8, gold: 150 });
    const ledger = ok(await call(h.base, 'GET', `/players/${p}/ledger`, { token: key })).items;
    expect(ledger.slice(0, 2).map((e: any) => [e.currencyKey, e.amount, e.reason, e.reference])).toEqual(
      expect.arrayContaining([
        ['gold', -100, 'purchase', 'card:knight'],
        ['gems', -2, 'purchase', 'card:knight'],
      ]),
    );
  });

  test('as a stack: one more in the stack of the chosen inventory; priceRule any pays the payWith price', async () => {
    const p = await player('buy-stack');
    await credit(p, 'gold', 200);
    await credit(p, 'gems', 20);
    const first = ok(await buy(p, { cardTypeKey: 'mage', as: 'stack', payWith: 'gems', realmId: null }));
    const account = ok(await call(h.base, 'GET', `/players/${p}/inventories/account`, { token: key }));
    expect(first.granted).toEqual({ inventoryId: account.id, cardTypeKey: 'mage', quantity: 1 });
    expect(first.charges.map((c: any) => [c.currencyKey, c.amount])).toEqual([['gems', -5]]);
    const second = ok(await buy(p, { cardTypeKey: 'mage', as: 'stack', payWith: 'gold', inventoryId: account.id }));
    expect(second.granted).toEqual({ inventoryId: account.id, cardTypeKey: 'mage', quantity: 2 });
    expect(await balances(p)).toEqual({ gems: 15, gold: 150 });
    expect(ok(await call(h.base, 'GET', `/players/${p}/inventories/account/card-stacks`, { token: key })).items).toEqual([
      { inventoryId: account.id, cardTypeKey: 'mage', quantity: 2 },
    ]);
  });

  test('a server sends a template, data and a consumed currency’s allowance; a realm currency is paid in the realm the card goes to', async () => {
    const p = await player('buy-server');
    const bought = ok(await buy(p, { cardTypeKey: 'spark', cardTemplateKey: 'foil', data: { shiny: true }, allowances: { energy: 100 } }));
    expect(bought.granted.card).toMatchObject({ cardTypeKey: 'spark', cardTemplateKey: 'foil', data: { shiny: true } });
    expect(bought.charges.map((c: any) => [c.currencyKey, c.amount, c.balanceAfter])).toEqual([['energy', 30, 30]]);
    await credit(p, 'tokens', 10, { realmId: 's1' });
    const scout = ok(await buy(p, { cardTypeKey: 'scout' }));
    expect(scout.charges[0]).toMatchObject({ currencyKey: 'tokens', amount: -4, balanceAfter: 6, inventoryId: scout.granted.card.inventoryId });
  });

  test('a player buys for itself as `me`', async () => {
    const signed = await signIn(h.base, key, 'buy-player');
    await credit(signed.player.id, 'gold', 60);
    const bought = ok(await buy('me', { cardTypeKey: 'mage', payWith: 'gold' }, { token: signed.accessToken }));
    expect(bought.granted.card.cardTypeKey).toBe('mage');
    expect(await balances(signed.player.id)).toEqual({ gold: 10 });
  });

  test('refusals change nothing', async () => {
    const p = await player('buy-refusals');
    await credit(p, 'gold', 120);
    await credit(p, 'gems', 1);
    const token = (await signIn(h.base, key, 'buy-refusals')).accessToken;
    const before = await snapshot(p);
    const cases: [Reply, number, string, string?][] = [
      [await buy(p, { cardTypeKey: 'relic' }), 409, 'not-purchasable'],
      [await buy(p, { cardTypeKey: 'ghostpriced' }), 409, 'not-purchasable'],
      [await buy(p, { cardTypeKey: 'dragon' }), 409, 'disabled'],
      [await buy(p, { cardTypeKey: 'knight' }), 409, 'insufficient-balance'],
      [await buy(p, { cardTypeKey: 'spark' }), 400, 'invalid-request', 'body.allowances'],
      [await buy(p, { cardTypeKey: 'spark', allowances: { energy: 10 } }), 409, 'allowance-exceeded'],
      [await buy(p, { cardTypeKey: 'mage' }), 400, 'invalid-request', 'body.payWith'],
      [await buy(p, { cardTypeKey: 'mage', payWith: 'tokens' }), 400, 'invalid-request', 'body.payWith'],
      [await buy(p, { cardTypeKey: 'ghost' }), 404, 'not-found'],
      [await buy(p, { cardTypeKey: 'mage', payWith: 'gold', cardTemplateKey: 'ghost' }), 404, 'not-found'],
      [await buy(p, { cardTypeKey: 'mage', payWith: 'gold', cardTemplateKey: 'faded' }), 409, 'disabled'],
      [await buy(p, { cardTypeKey: 'mage', payWith: 'gold', as: 'stack', data: { a: 1 } }), 400, 'invalid-request', 'body.data'],
      [await buy(p, { cardTypeKey: 'mage', payWith: 'gold', as: 'stack', cardTemplateKey: 'foil' }), 400, 'invalid-request', 'body.cardTemplateKey'],
      [await buy(p, { cardTypeKey: 'mage', payWith: 'gold', as: 'pile' }), 400, 'invalid-request', 'body.as'],
      [await buy(p, { cardTypeKey: 'mage', payWith: 'gold', data: { text: 'x'.repeat(1020) } }), 400, 'invalid-request', 'body.data'],
      [await buy(p, { cardTypeKey: 'mage', payWith: 'gold', quantity: 2 }), 400, 'invalid-request', 'body.quantity'],
      [await buy(p, { cardTypeKey: 'mage', payWith: 'gold', realmId: 'nowhere' }), 404, 'not-found'],
      [await buy('me', { cardTypeKey: 'mage', payWith: 'gold', allowances: { energy: 1 } }, { token }), 403, 'forbidden'],
      [await buy('me', { cardTypeKey: 'mage', payWith: 'gold', data: {} }, { token }), 403, 'forbidden'],
      [await buy('me', { cardTypeKey: 'mage', payWith: 'gold', cardTemplateKey: 'foil' }, { token }), 403, 'forbidden'],
      [await buy(p, { cardTypeKey: 'mage', payWith: 'gold' }, { token }), 403, 'forbidden'],
    ];
    for (const [reply, status, code, field] of cases) expectError(reply, status, code, field);
    expect(cases[0][0].body.details).toEqual({ cardTypeKey: 'relic' });
    expect(cases[3][0].body.details).toEqual({ currencyKey: 'gems', held: 1, requested: 2 });
    expect(cases[5][0].body.details).toEqual({ currencyKey: 'energy', held: 0, requested: 30, allowance: 10 });
    expect(await snapshot(p)).toEqual(before);
  });
});

describe('retries and concurrency', () => {
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
