/**
 * Players' inventories, balances, the ledger and currency moves (spec §2 Inventory, Movement,
 * LedgerEntry, Balance; §4 Choosing an inventory, Realms and inventories, Currency moves).
 *
 * Correctness (docs/economy.md "Moves"): a move is one statement of the money engine (./engine.ts),
 * in the caller's transaction when it has one, that locks the balance row, checks, writes the new
 * figure and appends the ledger entry with the balance after. Figures are bigint in PostgreSQL and BigInt
 * here; they leave as JSON numbers only because a balance can never pass 2^53-1 (MAX_BALANCE).
 *
 * Lock order, for every area that joins this one (items, purchases): the idempotency record → the
 * player's row (FOR KEY SHARE, so deletion waits) → inventories → balance rows in currency-key order.
 */
import type { Queryable, Tx } from '../db/knex';
import { afterCommit, inTransaction } from '../db/transaction';
import { refuse } from '../errors';
import type { IdempotencyScope } from '../idempotency';
import { type CursorCodec, type Page, keysetPage } from '../pagination';
import { holdExistingPlayer } from '../players/hold';
import type { EnvironmentContext } from '../tenancy/environments';
import { Telemetry } from '../process/telemetry';
import { ENGINE_REASONS, isEngineReason } from '../contract/ledger-reasons';
import { runEngineMove } from './engine';
import { refusalOf } from './refusals';

// Inventory, Balance, LedgerEntry and Movement (spec §2) are the answer shapes' types (shapes/economy.ts).
import type { Balance, Inventory, LedgerEntry, Movement } from '../shapes';
export type { Balance, Inventory, LedgerEntry, Movement } from '../shapes';
// What the routes send (shapes/economy.ts); the items and cards services take InventoryChoice from here.
import type { InventoryChoice, LedgerQuery, MoveRequest } from '../shapes/economy';
import type { PageRequest } from '../shapes/common';
export type { InventoryChoice, MoveRequest } from '../shapes/economy';

export type MoveKind = 'credit' | 'debit' | 'refund' | 'consume';

/** A path's `:inventory`: `account`, `current` or an inventory id. */
export type InventorySelector = string;

const toInventory = (row: Record<string, unknown>): Inventory => ({ id: row.id as string, realmId: (row.realm_key as string | null) ?? null });

/** The engine's choice of inventory (hearth_choose_inventory), for what the items routes move in their own transactions. */
const CHOOSE_INVENTORY_SQL = 'SELECT outcome, inventory_id AS id, realm_key FROM hearth_choose_inventory(?, ?, ?, ?, ?, ?)';

export class EconomyService {
  constructor(
    private readonly cursors: CursorCodec,
    private readonly telemetry = new Telemetry(),
  ) {}

  /**
   * A path's `:inventory` for the player: `account` and `current` are made when missing (spec); an id
   * must be one of the player's inventories. The player must exist in the environment.
   */
  async resolve(db: Queryable, env: EnvironmentContext, playerId: string, selector: InventorySelector): Promise<Inventory> {
    if (selector === 'account' || selector === 'current') {
      return inTransaction(db, async (trx) => {
        await holdExistingPlayer(trx, env, playerId);
        return this.choose(trx, env, playerId, {}, selector === 'account' ? 'account' : 'realm');
      });
    }
    const row = await db('inventories').where({ id: selector, player_id: playerId, environment_id: env.id }).first();
    if (!row) {
      await this.expectPlayer(db, env, playerId);
      throw refuse.notFound('The inventory', { key: selector, field: 'inventory' });
    }
    return toInventory(row);
  }

  private async expectPlayer(db: Queryable, env: EnvironmentContext, playerId: string): Promise<void> {
    const row = await db('players').where({ id: playerId, environment_id: env.id }).first('id');
    if (!row) throw refuse.notFound('The player', { key: playerId, field: 'playerId' });
  }

  /**
   * Where a body puts something (spec "Choosing an inventory"), chosen by the engine's one rule
   * (hearth_choose_inventory): `inventoryId` (one of the player's), `realmId` (a realm of the
   * environment, null for the account), or else the scope's place: the account, or the current realm,
   * made when missing. What is held on the account is moved only in the account inventory, what is
   * held per realm only in realms (docs/economy.md). The caller holds the player first.
   */
  async choose(
    trx: Tx,
    env: EnvironmentContext,
    playerId: string,
    choice: InventoryChoice,
    scope: 'account' | 'realm',
    itemTypeKey?: string,
  ): Promise<Inventory> {
    const { rows } = await trx.raw(CHOOSE_INVENTORY_SQL, [
      env.id,
      playerId,
      scope,
      choice.inventoryId ?? null,
      choice.realmId !== undefined,
      choice.realmId ?? null,
    ]);
    const chosen = rows[0] as { outcome: string; id: string; realm_key: string | null };
    if (chosen.outcome !== 'chosen') {
      throw refusalOf({ outcome: chosen.outcome, itemTypeKey, field: choice.inventoryId !== undefined ? 'inventoryId' : 'realmId' }, { playerId, ...choice });
    }
    return toInventory(chosen);
  }

  /** GET /players/:playerId/inventories: the player's inventories in the order they were made. */
  async listInventories(db: Queryable, env: EnvironmentContext, playerId: string, q: PageRequest): Promise<Page<Inventory>> {
    await this.expectPlayer(db, env, playerId);
    return keysetPage(
      this.cursors,
      `inventories|${env.id}|${playerId}`,
      q,
      (after: string | undefined, take) => {
        const query = db('inventories').where({ player_id: playerId, environment_id: env.id }).orderBy('seq').limit(take).select('id', 'realm_key', 'seq');
        if (after !== undefined) query.where('seq', '>', after);
        return query;
      },
      (row: Record<string, unknown>) => String(row.seq),
      toInventory,
    );
  }

  /** GET .../inventories/:inventory/balances: the inventory's balances by currency key, with the inventory. */
  async balances(
    db: Queryable,
    env: EnvironmentContext,
    playerId: string,
    selector: InventorySelector,
    q: PageRequest,
  ): Promise<Page<Balance> & { inventory: Inventory }> {
    const inventory = await this.resolve(db, env, playerId, selector);
    const page = await keysetPage(
      this.cursors,
      `balances|${env.id}|${inventory.id}`,
      q,
      (after: string | undefined, take) => {
        const query = db('balances').where({ inventory_id: inventory.id }).orderBy('currency_key').limit(take).select('currency_key', 'amount');
        if (after !== undefined) query.where('currency_key', '>', after);
        return query;
      },
      (row: Record<string, unknown>) => row.currency_key as string,
      (row: Record<string, unknown>): Balance => ({ currencyKey: row.currency_key as string, amount: Number(row.amount) }),
    );
    return { ...page, inventory };
  }

  /** GET /players/:playerId/ledger: newest first, optionally of one currency and/or one inventory. */
  async ledger(db: Queryable, env: EnvironmentContext, playerId: string, q: LedgerQuery): Promise<Page<LedgerEntry>> {
    await this.expectPlayer(db, env, playerId);
    return keysetPage(
      this.cursors,
      `ledger|${env.id}|${playerId}|${q.currencyKey ?? ''}|${q.inventoryId ?? ''}`,
      q,
      (after: string | undefined, take) => {
        const query = db('ledger_entries').where({ player_id: playerId, environment_id: env.id }).orderBy('id', 'desc').limit(take).select('*');
        if (q.currencyKey !== undefined) query.where('currency_key', q.currencyKey);
        if (q.inventoryId !== undefined) query.where('inventory_id', q.inventoryId);
        if (after !== undefined) query.where('id', '<', after);
        return query;
      },
      (row: Record<string, unknown>) => String(row.id),
      toLedgerEntry,
    );
  }

  /**
   * POST /players/:playerId/currencies/:currencyKey/<kind> without a record of its own: one move, in
   * the caller's transaction when it has one, else one statement by itself. Refusals change nothing.
   */
  async move(db: Queryable, env: EnvironmentContext, playerId: string, currencyKey: string, kind: MoveKind, request: MoveRequest): Promise<Movement> {
    refuseEngineReason(request.reason);
    const { answer } = await runEngineMove<Movement>(db, env, playerId, kind, { currencyKey, ...request });
    await afterCommit(db, () => this.telemetry.ledgerMove(kind, 'move'));
    return answer;
  }

  /**
   * The move at most once per Idempotency-Key, the key's record kept by the engine's one statement
   * (the currency routes, and `hearth economy credit|debit`): one round trip. A replay answers the
   * first Movement with `replayed: true` and is not counted. The engine's own reasons are refused
   * (`invalid-request` on `reason`): they are the engine's (spec/ledger-reasons.ts).
   */
  async moveOnce(
    db: Queryable,
    env: EnvironmentContext,
    playerId: string,
    currencyKey: string,
    kind: MoveKind,
    request: MoveRequest,
    record: IdempotencyScope,
  ): Promise<Movement> {
    refuseEngineReason(request.reason);
    return this.recordedMove(db, env, playerId, kind, { currencyKey, ...request }, record);
  }

  /**
   * A store order's grant of a currency (commerce): a credit with the engine's reason `commerce` and
   * the order as reference, at most once per `record`, in the caller's transaction.
   */
  async creditForOrder(
    trx: Tx,
    env: EnvironmentContext,
    playerId: string,
    currencyKey: string,
    amount: number,
    orderId: string,
    record: IdempotencyScope,
  ): Promise<Movement> {
    return this.recordedMove(trx, env, playerId, 'credit', { currencyKey, amount, reason: ENGINE_REASONS.commerce, reference: orderId }, record);
  }

  /** The engine's move of `kind` on the currency `move` names, kept under `record`; a replay is answered as one and not counted. */
  private async recordedMove(
    db: Queryable,
    env: EnvironmentContext,
    playerId: string,
    kind: MoveKind,
    move: MoveRequest & { currencyKey: string },
    record: IdempotencyScope,
  ): Promise<Movement> {
    const { answer, replayed } = await runEngineMove<Movement>(db, env, playerId, kind, move, record);
    if (replayed) return { ...answer, replayed: true };
    await afterCommit(db, () => this.telemetry.ledgerMove(kind, 'move'));
    return answer;
  }
}

/** A game's move naming one of the engine's own reasons is refused before anything is read or written. */
function refuseEngineReason(reason: string): void {
  if (isEngineReason(reason)) {
    throw refuse.invalid(
      'reason',
      `"${reason}" is a reason the money engine keeps for its own moves (${Object.values(ENGINE_REASONS).join(', ')}); name the flow with a key of your own, such as quest_reward.`,
    );
  }
}

function toLedgerEntry(row: Record<string, unknown>): LedgerEntry {
  return {
    id: String(row.id),
    inventoryId: row.inventory_id as string,
    currencyKey: row.currency_key as string,
    amount: Number(row.amount),
    balanceAfter: Number(row.balance_after),
    reason: row.reason as string,
    reference: (row.reference as string | null) ?? null,
    createdAt: (row.created_at as Date).toISOString(),
  };
}
