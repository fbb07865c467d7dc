/**
 * Realms, inventories, balances, the ledger and currency moves (spec §4 Game services), over real
 * HTTP: every route, the status each of their refusals is answered with, validation by the routes'
 * schemas, credentials, pages and Idempotency-Key replays. The rules themselves (what a move refuses
 * and that it changes nothing, caps, allowances, choosing an inventory, the manifests) are held on
 * core's services in test/economy/rules.test.ts.
 */
import { fingerprintOf } from '@hearth/core';
import { type Harness, startHarness } from '../support/harness';
import { call, expectError, signIn } from '../support/http';
import { projectWithout, standardManifests } from '../support/manifests';
import { economyRealmsAndCurrencies } from '../support/fixtures/economy';

describe('economy: realms, inventories, currencies, the ledger', () => {
  let h: Harness;
  let key: string;
  let testKey: string;
  let seq = 0;

  beforeAll(async () => {
    h = await startHarness({
      manifests: [...standardManifests(), ...projectWithout('noinv', 'inventory'), ...projectWithout('norealm', 'realms'), ...economyRealmsAndCurrencies()],
    });
    key = h.serverKeys['alpha-live-key'];
    testKey = h.serverKeys['alpha-test-key'];
  });
  afterAll(async () => {
    await h.close();
  });

  const newKey = () => `k-${Date.now()}-${++seq}`;
  const move = (playerId: string, currencyKey: string, kind: string, body: Record<string, unknown>, idem: string | null = newKey(), token = key) =>
    call(h.base, 'POST', `/players/${playerId}/currencies/${currencyKey}/${kind}`, { token, body, headers: idem === null ? {} : { 'Idempotency-Key': idem } });
  const ledger = async (playerId: string, query = '') => {
    const reply = await call(h.base, 'GET', `/players/${playerId}/ledger${query}`, { token: key });
    expect(reply.status).toBe(200);
    return reply.body as {
      items: {
        id: string;
        inventoryId: string;
        currencyKey: string;
        amount: number;
        balanceAfter: number;
        reason: string;
        reference: string | null;
        createdAt: string;
      }[];
      next: string | null;
    };
  };
  const player = async (subject: string) => (await signIn(h.base, key, subject)).player.id;

  describe('realms', () => {
    test('GET /realms lists the open ones newest first (switched-off, ended and future ones are not open), in pages', async () => {
      const reply = await call(h.base, 'GET', '/realms', { token: key });
      expect(reply.status).toBe(200);
      expect(reply.body).toEqual({
        items: [
          { id: 's2', number: 2, key: 's2', name: 'Season 2', enabled: true, visible: false, startAt: '2025-06-01T00:00:00.123Z', endAt: null },
          { id: 'permanent', number: 0, key: 'permanent', name: 'Forever', enabled: true, visible: true, startAt: '2020-01-01T00:00:00.000Z', endAt: null },
        ],
        next: null,
      });
      const first = await call(h.base, 'GET', '/realms?limit=1', { token: key });
      expect(first.body.items.map((r: { id: string }) => r.id)).toEqual(['s2']);
      const rest = await call(h.base, 'GET', `/realms?limit=1&cursor=${encodeURIComponent(first.body.next)}`, { token: key });
      expect(rest.body).toEqual({ items: [expect.objectContaining({ id: 'permanent' })], next: null });
      // A player's token reads them too.
      const p = await signIn(h.base, key, 'realm-reader');
      expect((await call(h.base, 'GET', '/realms', { token: p.accessToken })).body.items).toHaveLength(2);
    });

    test('GET /realms/current is the newest open realm, not-found while none is open', async () => {
      const p = await signIn(h.base, key, 'current-reader');
      const reply = await call(h.base, 'GET', '/realms/current', { token: p.accessToken });
      expect(reply.status).toBe(200);
      expect(reply.body).toMatchObject({ id: 's2', number: 2 });
      expectError(await call(h.base, 'GET', '/realms/current', { token: testKey }), 404, 'not-found');
      expect((await call(h.base, 'GET', '/realms', { token: testKey })).body).toEqual({ items: [], next: null });
    });

    test('GET /definitions/realms lists every realm by number with the server key only; switched off shows enabled: false', async () => {
      const reply = await call(h.base, 'GET', '/definitions/realms', { token: key });
      expect(reply.status).toBe(200);
      expect(reply.body.items.map((r: { number: number; enabled: boolean; endAt: string | null }) => [r.number, r.enabled, r.endAt])).toEqual([
        [0, true, null],
        [1, true, '2024-06-01T00:00:00.000Z'],
        [2, true, null],
        [3, true, null],
        [4, false, null],
      ]);
      const page = await call(h.base, 'GET', '/definitions/realms?limit=3', { token: key });
      const more = await call(h.base, 'GET', `/definitions/realms?limit=3&cursor=${encodeURIComponent(page.body.next)}`, { token: key });
      expect(more.body.items.map((r: { number: number }) => r.number)).toEqual([3, 4]);
      const p = await signIn(h.base, key, 'definitions-reader');
      expectError(await call(h.base, 'GET', '/definitions/realms', { token: p.accessToken }), 403, 'forbidden');
      expectError(await call(h.base, 'GET', '/realms', { token: h.serverKeys['norealm-live-key'] }), 403, 'service-disabled');
    });
  });

  describe('currency definitions', () => {
    test('GET /definitions/currencies lists every currency by key with its fields, switched-off ones with enabled: false, with the server key only', async () => {
      const reply = await call(h.base, 'GET', '/definitions/currencies', { token: key });
      expect(reply.status).toBe(200);
      expect(reply.body.items).toEqual([
        { key: 'energy', name: 'Energy', description: null, icon: null, scope: 'account', kind: 'consumed', max: null, enabled: true },
        { key: 'gems', name: 'Gems', description: 'Premium', icon: null, scope: 'account', kind: 'balance', max: null, enabled: true },
        { key: 'gold', name: 'Gold', description: null, icon: 'https://cdn.example/gold.png', scope: 'account', kind: 'balance', max: 1000, enabled: true },
        { key: 'retired', name: 'Old coins', description: null, icon: null, scope: 'account', kind: 'balance', max: null, enabled: false },
        { key: 'season.tokens', name: 'Season tokens', description: null, icon: null, scope: 'realm', kind: 'balance', max: null, enabled: true },
      ]);
      expect(reply.body.next).toBeNull();
      const p = await signIn(h.base, key, 'currency-reader');
      expectError(await call(h.base, 'GET', '/definitions/currencies', { token: p.accessToken }), 403, 'forbidden');
      expectError(await call(h.base, 'GET', '/definitions/currencies', { token: h.serverKeys['noinv-live-key'] }), 403, 'service-disabled');
    });
  });

  describe('inventories', () => {
    test('account and current are made when missing and found after; the list holds them in the order made; an id reads one', async () => {
      const p = await signIn(h.base, key, 'inventory-owner');
      const token = p.accessToken;
      expect((await call(h.base, 'GET', '/players/me/inventories', { token })).body).toEqual({ items: [], next: null });
      const account = await call(h.base, 'GET', '/players/me/inventories/account', { token });
      expect(account.status).toBe(200);
      expect(account.body).toEqual({ id: expect.any(String), realmId: null });
      expect((await call(h.base, 'GET', '/players/me/inventories/account', { token })).body).toEqual(account.body);
      const current = await call(h.base, 'GET', `/players/${p.player.id}/inventories/current`, { token: key });
      expect(current.body).toEqual({ id: expect.any(String), realmId: 's2' });
      expect(current.body.id).not.toBe(account.body.id);
      expect((await call(h.base, 'GET', '/players/me/inventories', { token })).body).toEqual({ items: [account.body, current.body], next: null });
      const paged = await call(h.base, 'GET', '/players/me/inventories?limit=1', { token });
      expect(paged.body.items).toEqual([account.body]);
      expect((await call(h.base, 'GET', `/players/me/inventories?limit=1&cursor=${encodeURIComponent(paged.body.next)}`, { token })).body).toEqual({
        items: [current.body],
        next: null,
      });
      expect((await call(h.base, 'GET', `/players/me/inventories/${current.body.id}`, { token })).body).toEqual(current.body);
    });

    test('refusals: unknown or another player’s inventory, unknown player, `me` with a server key, an id with a player token, no current realm, service off', async () => {
      const a = await signIn(h.base, key, 'inventory-a');
      const b = await signIn(h.base, key, 'inventory-b');
      const aAccount = (await call(h.base, 'GET', '/players/me/inventories/account', { token: a.accessToken })).body;
      expectError(await call(h.base, 'GET', `/players/me/inventories/${aAccount.id}`, { token: b.accessToken }), 404, 'not-found');
      expectError(await call(h.base, 'GET', '/players/me/inventories/nope', { token: b.accessToken }), 404, 'not-found');
      expectError(await call(h.base, 'GET', '/players/unknown-player/inventories/account', { token: key }), 404, 'not-found');
      expectError(await call(h.base, 'GET', '/players/unknown-player/inventories', { token: key }), 404, 'not-found');
      expectError(await call(h.base, 'GET', '/players/me/inventories', { token: key }), 404, 'not-found');
      expectError(await call(h.base, 'GET', `/players/${a.player.id}/inventories`, { token: a.accessToken }), 403, 'forbidden');
      // A player of another environment is not-found.
      expectError(await call(h.base, 'GET', `/players/${a.player.id}/inventories/account`, { token: testKey }), 404, 'not-found');
      const t = await signIn(h.base, testKey, 'test-env-player');
      expectError(await call(h.base, 'GET', '/players/me/inventories/current', { token: t.accessToken }), 409, 'no-current-realm');
      expectError(await call(h.base, 'GET', '/players/me/inventories/current/balances', { token: t.accessToken }), 409, 'no-current-realm');
      expect((await call(h.base, 'GET', '/players/me/inventories', { token: t.accessToken })).body.items).toEqual([]);
      expectError(await call(h.base, 'GET', '/players/x/inventories', { token: h.serverKeys['noinv-live-key'] }), 403, 'service-disabled');
    });
  });

  describe('moves', () => {
    test('credit answers a Movement; the retry answers it again with replayed: true and acts once', async () => {
      const id = await player('mover');
      const idem = newKey();
      const first = await move(id, 'gems', 'credit', { amount: 250, reason: 'quest_reward', reference: 'quest 7' }, idem);
      expect(first.status).toBe(200);
      expect(first.body).toEqual({
        transactionId: expect.any(String),
        inventoryId: expect.any(String),
        currencyKey: 'gems',
        amount: 250,
        balanceAfter: 250,
        replayed: false,
      });
      const again = await move(id, 'gems', 'credit', { reference: 'quest 7', reason: 'quest_reward', amount: 250 }, idem);
      expect(again.status).toBe(200);
      expect(again.body).toEqual({ ...first.body, replayed: true });
      expect([first.headers.get('idempotent-replayed'), again.headers.get('idempotent-replayed')]).toEqual(['false', 'true']);
      const account = (await call(h.base, 'GET', `/players/${id}/inventories/account`, { token: key })).body;
      expect(first.body.inventoryId).toBe(account.id);
      const entries = (await ledger(id)).items;
      expect(entries).toEqual([
        {
          id: first.body.transactionId,
          inventoryId: account.id,
          currencyKey: 'gems',
          amount: 250,
          balanceAfter: 250,
          reason: 'quest_reward',
          reference: 'quest 7',
          createdAt: expect.any(String),
        },
      ]);
      const balances = await call(h.base, 'GET', `/players/${id}/inventories/account/balances`, { token: key });
      expect(balances.body).toEqual({ items: [{ currencyKey: 'gems', amount: 250 }], next: null, inventory: account });
      // The same key for another request.
      expectError(await move(id, 'gems', 'credit', { amount: 251, reason: 'quest_reward', reference: 'quest 7' }, idem), 409, 'idempotency-conflict');
      expectError(await move(id, 'gems', 'debit', { amount: 250, reason: 'quest_reward', reference: 'quest 7' }, idem), 409, 'idempotency-conflict');
      expect((await ledger(id)).items).toHaveLength(1);
    });

    test('a retry across the upgrade: a record the pipeline kept (the Movement itself) is replayed as it was, acting nothing', async () => {
      const id = await player('upgraded');
      const idem = newKey();
      const body = { amount: 5, reason: 'quest_reward' };
      const kept = { transactionId: '999', inventoryId: 'inv-before-upgrade', currencyKey: 'gems', amount: 5, balanceAfter: 5, replayed: false };
      const environmentId = (await h.db('environments').where({ app_key: 'alpha-live' }).first('id')).id;
      await h.db('idempotency_records').insert({
        environment_id: environmentId,
        scope: 'server',
        key: idem,
        fingerprint: fingerprintOf(['creditCurrency', { playerId: id, currencyKey: 'gems' }, {}, body]),
        status: 200,
        body: JSON.stringify(kept),
      });
      const retry = await move(id, 'gems', 'credit', body, idem);
      expect([retry.status, retry.body]).toEqual([200, { ...kept, replayed: true }]);
      expect((await ledger(id)).items).toEqual([]);
    });

    test('insufficient-balance is 409 with held and requested in details, and frees the Idempotency-Key', async () => {
      const id = await player('debitor');
      await move(id, 'gems', 'credit', { amount: 100, reason: 'grant' });
      const idem = newKey();
      const refused = expectError(await move(id, 'gems', 'debit', { amount: 101, reason: 'shop' }, idem), 409, 'insufficient-balance');
      expect(refused.details).toEqual({ currencyKey: 'gems', held: 100, requested: 101 });
      await move(id, 'gems', 'credit', { amount: 1, reason: 'grant' });
      // The refused key did nothing, so the same request under it now acts.
      const later = await move(id, 'gems', 'debit', { amount: 101, reason: 'shop' }, idem);
      expect(later.body).toMatchObject({ amount: -101, balanceAfter: 0, replayed: false });
    });

    test('balance-cap is 409 with details, for a credit and a refund', async () => {
      const id = await player('capped');
      expect((await move(id, 'gold', 'credit', { amount: 1000, reason: 'grant' })).body.balanceAfter).toBe(1000);
      const refused = expectError(await move(id, 'gold', 'credit', { amount: 1, reason: 'grant' }), 409, 'balance-cap');
      expect(refused.details).toMatchObject({ currencyKey: 'gold', held: 1000, requested: 1 });
      expectError(await move(id, 'gold', 'refund', { amount: 1, reason: 'refund' }), 409, 'balance-cap');
    });

    test('consume answers a Movement; allowance-exceeded is 409 with the allowance in details', async () => {
      const id = await player('consumer');
      expect((await move(id, 'energy', 'consume', { amount: 30, allowance: 50, reason: 'match' })).body).toMatchObject({ amount: 30, balanceAfter: 30 });
      const refused = expectError(await move(id, 'energy', 'consume', { amount: 21, allowance: 50, reason: 'match' }), 409, 'allowance-exceeded');
      expect(refused.details).toEqual({ currencyKey: 'energy', allowance: 50, held: 30, requested: 21 });
      expect((await move(id, 'energy', 'refund', { amount: 25, reason: 'match_cancelled' })).body).toMatchObject({ amount: -25, balanceAfter: 5 });
    });

    test('invalid-request: wrong kind of currency, allowance missing or not taken, bad amounts, reasons and references, a missing or bad Idempotency-Key', async () => {
      const id = await player('invalid');
      expectError(await move(id, 'energy', 'credit', { amount: 1, reason: 'r' }), 400, 'invalid-request', 'path.currencyKey');
      expectError(await move(id, 'energy', 'debit', { amount: 1, reason: 'r' }), 400, 'invalid-request', 'path.currencyKey');
      expectError(await move(id, 'gems', 'consume', { amount: 1, allowance: 5, reason: 'r' }), 400, 'invalid-request', 'path.currencyKey');
      expectError(await move(id, 'energy', 'consume', { amount: 1, reason: 'r' }), 400, 'invalid-request', 'body.allowance');
      expectError(await move(id, 'gems', 'credit', { amount: 1, allowance: 5, reason: 'r' }), 400, 'invalid-request', 'body.allowance');
      for (const amount of [0, -1, 1.5, 1_000_000_001, '5'])
        expectError(await move(id, 'gems', 'credit', { amount, reason: 'r' }), 400, 'invalid-request', 'body.amount');
      expect((await move(id, 'gems', 'credit', { amount: 1_000_000_000, reason: 'r' })).status).toBe(200);
      expectError(await move(id, 'gems', 'credit', { amount: 1 }), 400, 'invalid-request', 'body.reason');
      for (const reason of ['', '-leading', 'has space', 'x'.repeat(129)])
        expectError(await move(id, 'gems', 'credit', { amount: 1, reason }), 400, 'invalid-request', 'body.reason');
      expectError(await move(id, 'gems', 'credit', { amount: 1, reason: 'r', reference: '' }), 400, 'invalid-request', 'body.reference');
      expectError(await move(id, 'gems', 'credit', { amount: 1, reason: 'r', reference: 'x'.repeat(201) }), 400, 'invalid-request', 'body.reference');
      expectError(await move(id, 'gems', 'credit', { amount: 1, reason: 'r', extra: true }), 400, 'invalid-request');
      expectError(await move(id, 'gems', 'credit', { amount: 1, reason: 'r' }, null), 400, 'invalid-request', 'header.Idempotency-Key');
      expectError(await move(id, 'gems', 'credit', { amount: 1, reason: 'r' }, 'x'.repeat(129)), 400, 'invalid-request', 'header.Idempotency-Key');
      expect((await ledger(id)).items).toHaveLength(1);
    });

    test("an engine's own reason is invalid-request on body.reason, on every move route; the refused key is free for the corrected request", async () => {
      const id = await player('engine-reasons');
      expect((await move(id, 'gems', 'credit', { amount: 10, reason: 'setup' })).status).toBe(200);
      for (const [currencyKey, kind, extra] of [
        ['gems', 'credit', {}],
        ['gems', 'debit', {}],
        ['gems', 'refund', {}],
        ['energy', 'consume', { allowance: 10 }],
      ] as const) {
        const refused = expectError(await move(id, currencyKey, kind, { amount: 1, reason: 'purchase', ...extra }), 400, 'invalid-request', 'body.reason');
        expect(refused.message).toContain('"purchase" is a reason the money engine keeps for its own moves');
      }
      // The same key, refused, is free for the corrected request; the refusal was not recorded as an answer.
      const idem = newKey();
      expectError(await move(id, 'gems', 'credit', { amount: 5, reason: 'commerce' }, idem), 400, 'invalid-request', 'body.reason');
      expect((await move(id, 'gems', 'credit', { amount: 5, reason: 'commerce.bonus' }, idem)).body).toMatchObject({
        amount: 5,
        balanceAfter: 15,
        replayed: false,
      });
    });

    test('not-found (currency, player, inventory, realm), disabled, forbidden for a player token', async () => {
      const p = await signIn(h.base, key, 'refused');
      const id = p.player.id;
      expectError(await move(id, 'silver', 'credit', { amount: 1, reason: 'r' }), 404, 'not-found');
      expectError(await move('nobody', 'gems', 'credit', { amount: 1, reason: 'r' }), 404, 'not-found');
      expectError(await move('me', 'gems', 'credit', { amount: 1, reason: 'r' }), 404, 'not-found');
      expectError(await move(id, 'gems', 'credit', { amount: 1, reason: 'r', inventoryId: 'nope' }), 404, 'not-found');
      expectError(await move(id, 'season.tokens', 'credit', { amount: 1, reason: 'r', realmId: 'no-such-realm' }), 404, 'not-found');
      const off = expectError(await move(id, 'retired', 'credit', { amount: 1, reason: 'r' }), 409, 'disabled');
      expect(off.details).toEqual({ currencyKey: 'retired' });
      expectError(await move('me', 'gems', 'credit', { amount: 1, reason: 'r' }, newKey(), p.accessToken), 403, 'forbidden');
      expectError(await move(id, 'gems', 'credit', { amount: 1, reason: 'r' }, newKey(), h.serverKeys['noinv-live-key']), 403, 'service-disabled');
      expect((await ledger(id)).items).toHaveLength(0);
    });

    test('choosing an inventory: a place that does not fit is invalid-request on body.realmId or body.inventoryId; no open realm is 409', async () => {
      const id = await player('chooser');
      const account = (await call(h.base, 'GET', `/players/${id}/inventories/account`, { token: key })).body;
      const toSeason1 = await move(id, 'season.tokens', 'credit', { amount: 3, reason: 'r', realmId: 'season-1' });
      expect(toSeason1.status).toBe(200);
      expect((await move(id, 'season.tokens', 'debit', { amount: 2, reason: 'r', inventoryId: toSeason1.body.inventoryId })).body.balanceAfter).toBe(1);
      expectError(await move(id, 'gems', 'credit', { amount: 1, reason: 'r', realmId: 's2' }), 400, 'invalid-request', 'body.realmId');
      expectError(await move(id, 'season.tokens', 'credit', { amount: 1, reason: 'r', inventoryId: account.id }), 400, 'invalid-request', 'body.inventoryId');
      const t = (await signIn(h.base, testKey, 'no-realm-mover')).player.id;
      expectError(await move(t, 'stars', 'credit', { amount: 1, reason: 'r' }, newKey(), testKey), 409, 'no-current-realm');
    });
  });

  describe('the ledger', () => {
    test('newest first, filtered by currency and inventory, in pages whose cursors belong to their filters', async () => {
      const p = await signIn(h.base, key, 'ledger-reader');
      const id = p.player.id;
      const made = [];
      made.push((await move(id, 'gems', 'credit', { amount: 10, reason: 'a' })).body);
      made.push((await move(id, 'season.tokens', 'credit', { amount: 3, reason: 'b' })).body);
      made.push((await move(id, 'gems', 'debit', { amount: 4, reason: 'c', reference: 'order 1' })).body);
      made.push((await move(id, 'energy', 'consume', { amount: 2, allowance: 10, reason: 'd' })).body);
      const all = (await call(h.base, 'GET', '/players/me/ledger', { token: p.accessToken })).body;
      expect(all.items.map((e: { id: string }) => e.id)).toEqual(made.map((m) => m.transactionId).reverse());
      expect(all.items[1]).toMatchObject({ currencyKey: 'gems', amount: -4, balanceAfter: 6, reason: 'c', reference: 'order 1' });
      expect((await ledger(id, '?currencyKey=gems')).items.map((e) => e.amount)).toEqual([-4, 10]);
      const realmInventory = made[1].inventoryId;
      expect((await ledger(id, `?inventoryId=${realmInventory}`)).items.map((e) => e.reason)).toEqual(['b']);
      expect((await ledger(id, `?inventoryId=${made[0].inventoryId}&currencyKey=energy`)).items.map((e) => e.reason)).toEqual(['d']);
      const first = await ledger(id, '?limit=2');
      expect(first.items.map((e) => e.reason)).toEqual(['d', 'c']);
      const second = await ledger(id, `?limit=2&cursor=${encodeURIComponent(first.next!)}`);
      expect(second).toEqual({ items: [expect.objectContaining({ reason: 'b' }), expect.objectContaining({ reason: 'a' })], next: null });
      expectError(
        await call(h.base, 'GET', `/players/${id}/ledger?currencyKey=gems&cursor=${encodeURIComponent(first.next!)}`, { token: key }),
        400,
        'invalid-request',
        'query.cursor',
      );
      expectError(await call(h.base, 'GET', `/players/${id}/ledger?currencyKey=bad%20key`, { token: key }), 400, 'invalid-request', 'query.currencyKey');
      expectError(await call(h.base, 'GET', '/players/nobody/ledger', { token: key }), 404, 'not-found');
      expectError(await call(h.base, 'GET', `/players/${id}/ledger`, { token: p.accessToken }), 403, 'forbidden');
    });
  });
});
