/**
 * The money engine (docs/architecture.md "Money engine"): every move of value is one statement of its
 * database functions. Held here, over real HTTP and PostgreSQL: a credit and a purchase under an
 * Idempotency-Key each send exactly one statement (and one without a key, too); a move's metrics are
 * counted only once it is committed, never for one rolled back; refusals are worded from one table
 * whoever moves (the currency routes, purchases, item grants); and the one player hold makes a
 * player's deletion wait for a move in flight.
 *
 * These stay over HTTP and on committed transactions: the round trips are those of a request through
 * the API, the metrics count only after a real commit, and the hold needs a second connection. The
 * same wording as core's refusals, without a route, is held in test/economy/rules.test.ts.
 */
import { IDEMPOTENT_MOVE, ENGINE_MOVE } from '@hearth/core/economy';
import { HOLD_PLAYER_SQL, holdPlayer } from '@hearth/core/players';
import { loadEnvironmentById, type EnvironmentContext } from '@hearth/core/tenancy';
import type { LedgerMoveKind } from '@hearth/core/process';
import { type Harness, startHarness } from '../support/harness';
import { call, expectError, signIn } from '../support/http';
import { standardManifests } from '../support/manifests';
import { goldAndEnergy, potionAndSwordForGold } from '../support/fixtures/economy';
import { eventually } from '../support/wait';

let h: Harness;
let key: string;
let seq = 0;
const newKey = () => `engine-${Date.now()}-${++seq}`;

beforeAll(async () => {
  h = await startHarness({ manifests: [...standardManifests(), ...goldAndEnergy(), ...potionAndSwordForGold()] });
  key = h.serverKeys['alpha-live-key'];
});
afterAll(async () => {
  await h.close();
});

const player = async (subject: string) => (await signIn(h.base, key, subject)).player.id;
const post = (path: string, body: unknown, idem?: string) => call(h.base, 'POST', path, { token: key, body, headers: idem ? { 'Idempotency-Key': idem } : {} });
const envOf = async (playerId: string): Promise<EnvironmentContext> => {
  const row = await h.db('players').where({ id: playerId }).first('environment_id');
  return (await loadEnvironmentById(h.db, row.environment_id))!;
};

/** The statements the API's database client sends while `work` runs. */
async function statementsOf(work: () => Promise<unknown>): Promise<string[]> {
  const sent: string[] = [];
  const listen = (q: { sql: string }) => sent.push(q.sql);
  h.db.on('query', listen);
  try {
    await work();
  } finally {
    h.db.removeListener('query', listen);
  }
  return sent;
}

describe('round trips', () => {
  test('a credit and a purchase under an Idempotency-Key are each ONE statement; a purchase without a key too', async () => {
    const p = await player('engine-trips');
    // Warm: the player's inventory and balance rows exist, caches (keys, environment, definitions) are filled.
    expect((await post(`/players/${p}/currencies/gold/credit`, { amount: 100, reason: 'setup' }, newKey())).status).toBe(200);
    expect((await post(`/players/${p}/purchases/items`, { itemTypeKey: 'potion' }, newKey())).status).toBe(200);

    const credit = await statementsOf(async () =>
      expect((await post(`/players/${p}/currencies/gold/credit`, { amount: 1, reason: 'trip' }, newKey())).status).toBe(200),
    );
    expect(credit).toEqual([IDEMPOTENT_MOVE.text]);
    const purchase = await statementsOf(async () =>
      expect((await post(`/players/${p}/purchases/items`, { itemTypeKey: 'potion' }, newKey())).status).toBe(200),
    );
    expect(purchase).toEqual([IDEMPOTENT_MOVE.text]);
    const unkeyed = await statementsOf(async () => expect((await post(`/players/${p}/purchases/items`, { itemTypeKey: 'potion' })).status).toBe(200));
    expect(unkeyed).toEqual([ENGINE_MOVE.text]);
  });

  test("the items' grant and consumptions (of an item, of a stack) are one statement each too, replayed by the same statement", async () => {
    const p = await player('engine-item-trips');
    const granted = await statementsOf(async () => expect((await post(`/players/${p}/items/grant`, { itemTypeKey: 'sword' }, newKey())).status).toBe(200));
    expect(granted).toEqual([IDEMPOTENT_MOVE.text]);
    const item = (await call(h.base, 'GET', `/players/${p}/inventories/account/items`, { token: key })).body.items[0];
    const idem = newKey();
    const consumed = await statementsOf(async () => expect((await post(`/players/${p}/items/${item.id}/consume`, undefined, idem)).status).toBe(200));
    expect(consumed).toEqual([IDEMPOTENT_MOVE.text]);
    // Replayed by the same statement: the first answer, as it was.
    const again = await post(`/players/${p}/items/${item.id}/consume`, undefined, idem);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.item).toEqual({ ...item, consumedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/) });
    expect((await post(`/players/${p}/items/grant`, { itemTypeKey: 'potion', quantity: 2 }, newKey())).status).toBe(200);
    const taken = await statementsOf(async () =>
      expect((await post(`/players/${p}/item-stacks/consume`, { itemTypeKey: 'potion' }, newKey())).status).toBe(200),
    );
    expect(taken).toEqual([IDEMPOTENT_MOVE.text]);
  });
});

describe('metrics after commit', () => {
  test('a move and a purchase in a transaction that rolls back are never counted; committed, each is counted once', async () => {
    const p = await player('engine-metrics');
    const env = await envOf(p);
    expect((await post(`/players/${p}/currencies/gold/credit`, { amount: 100, reason: 'setup' }, newKey())).status).toBe(200);
    const counted: [LedgerMoveKind, string][] = [];
    const detach = h.core.telemetry.attach({ ledgerMove: (kind, source) => counted.push([kind, source]) });
    try {
      const rolledBack = new Error('rolled back on purpose');
      await expect(
        h.db.transaction(async (trx) => {
          await h.core.economy.move(trx, env, p, 'gold', 'credit', { amount: 5, reason: 'metrics' });
          await h.core.purchases.buyItem(trx, env, p, { itemTypeKey: 'potion' }, 'server');
          // Inside the transaction nothing is counted yet: the change is not durable.
          expect(counted).toEqual([]);
          throw rolledBack;
        }),
      ).rejects.toBe(rolledBack);
      expect(counted).toEqual([]);

      await h.db.transaction(async (trx) => {
        await h.core.economy.move(trx, env, p, 'gold', 'credit', { amount: 5, reason: 'metrics' });
        await h.core.purchases.buyItem(trx, env, p, { itemTypeKey: 'potion' }, 'server');
      });
      // knex's own transaction: the counts run after its commit, unawaited.
      await new Promise((resolve) => setImmediate(resolve));
      expect(counted).toEqual([
        ['credit', 'move'],
        ['debit', 'purchase'],
      ]);

      // A refused move (nothing written) counts nothing; a replay is no move.
      counted.length = 0;
      expectError(await post(`/players/${p}/currencies/gold/debit`, { amount: 10_000, reason: 'metrics' }, newKey()), 409, 'insufficient-balance');
      const idem = newKey();
      expect((await post(`/players/${p}/currencies/gold/credit`, { amount: 1, reason: 'metrics' }, idem)).status).toBe(200);
      expect((await post(`/players/${p}/currencies/gold/credit`, { amount: 1, reason: 'metrics' }, idem)).body.replayed).toBe(true);
      expect(counted).toEqual([['credit', 'move']]);
    } finally {
      detach();
    }
    // The rolled-back transaction left nothing: 100 credited, +5 -10 committed, +1.
    const balances = (await call(h.base, 'GET', `/players/${p}/inventories/account/balances`, { token: key })).body.items;
    expect(balances).toEqual([{ currencyKey: 'gold', amount: 96 }]);
  });
});

describe('one wording for every move', () => {
  test('owned-limit is worded the same by a purchase and by a grant; a place that does not fit names the body field', async () => {
    const p = await player('engine-words');
    expect((await post(`/players/${p}/currencies/gold/credit`, { amount: 100, reason: 'setup' }, newKey())).status).toBe(200);
    expect((await post(`/players/${p}/purchases/items`, { itemTypeKey: 'sword' }, newKey())).status).toBe(200);
    const bought = expectError(await post(`/players/${p}/purchases/items`, { itemTypeKey: 'sword' }, newKey()), 409, 'owned-limit');
    const granted = expectError(await post(`/players/${p}/items/grant`, { itemTypeKey: 'sword' }, newKey()), 409, 'owned-limit');
    expect(granted).toEqual(bought);
    expect(bought.details).toEqual({ itemTypeKey: 'sword', held: 1, requested: 1, limit: 1 });

    const account = (await call(h.base, 'GET', `/players/${p}/inventories/account/balances`, { token: key })).body.inventory.id;
    // A realm the environment has would do; none here, so the account named by realmId null must fit.
    const credit = expectError(
      await post(`/players/${p}/currencies/gold/credit`, { amount: 1, reason: 'x', inventoryId: account, realmId: null }, newKey()),
      400,
      'invalid-request',
    );
    const buy = expectError(
      await post(`/players/${p}/purchases/items`, { itemTypeKey: 'potion', inventoryId: account, realmId: null }, newKey()),
      400,
      'invalid-request',
    );
    expect(credit).toEqual(buy);
    expect(credit.details).toEqual({ field: 'body.realmId' });
  });
});

describe('the one player hold', () => {
  test('a deletion of the player waits for a transaction holding them, and the helper is the SQL function every move runs', async () => {
    expect(HOLD_PLAYER_SQL).toContain('hearth_hold_player');
    const p = await player('engine-hold');
    const env = await envOf(p);
    let deleted: boolean | Error = false;
    await h.db.transaction(async (trx) => {
      expect(await holdPlayer(trx, env.id, p)).toEqual({ displayName: null });
      const deletion = h
        .db('players')
        .where({ id: p })
        .delete()
        .then(
          () => (deleted = true),
          (err: Error) => (deleted = err),
        );
      // The deletion reaches the player's row and waits on it (were the hold broken, it would be done).
      const lockWaiters = async () =>
        (await h.db.raw("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'")).rows[0].n as number;
      await eventually(async () => deleted !== false || (await lockWaiters()) >= 1, 5000, 10);
      expect(deleted).toBe(false);
      // Still held: a move made now in this transaction lands before the deletion.
      await h.core.economy.move(trx, env, p, 'gold', 'credit', { amount: 1, reason: 'held' });
      void deletion;
    });
    await eventually(async () => deleted !== false, 5000, 10);
    expect(deleted).toBe(true);
    await h.db.transaction(async (trx) => expect(await holdPlayer(trx, env.id, p)).toBeNull());
  });
});
