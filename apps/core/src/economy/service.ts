/**
 * Players' inventories, balances, the ledger and currency moves (spec §2 Inventory, Movement,
 * LedgerEntry, Balance; §4 Choosing an inventory, Realms and inventories, Currency moves).
 *
 * Correctness (docs/economy.md "Moves"): a move is one transaction, the caller's when it has one (the
 * idempotency transaction on the routes), that locks the balance row, checks, writes the new figure
 * and appends the ledger entry with the balance after. Figures are bigint in PostgreSQL and BigInt
 * here; they leave as JSON numbers only because a balance can never pass 2^53-1 (MAX_BALANCE).
 *
 * Lock order, for every area that joins this one (items, purchases): the idempotency record → the
 * player's row (FOR KEY SHARE, so deletion waits) → inventories → balance rows in currency-key order.
 */
import type { Knex } from 'knex';
import type { Queryable, Tx } from '../db/knex';
import { preparedStatement, runStatement } from '../db/statement';
import { inTransaction } from '../db/transaction';
import { ApiError, refuse } from '../errors';
import { randomId } from '../ids';
import { IDEMPOTENCY_CONFLICT_MESSAGE, type IdempotencyScope } from '../idempotency';
import { CursorCodec, Page, keysetPage } from '../pagination';
import type { EnvironmentContext } from '../tenancy/environments';
import { MAX_BALANCE } from '../manifests/schemas';
import { CurrencyDefinition, RealmService } from './definitions';
import { Telemetry } from '../process/telemetry';

// Inventory, Balance, LedgerEntry and Movement (spec §2) are the answer shapes' types (shapes/economy.ts).
import type { Balance, Inventory, LedgerEntry, Movement } from '../shapes';
export type { Balance, Inventory, LedgerEntry, Movement } from '../shapes';

export type MoveKind = 'credit' | 'debit' | 'refund' | 'consume';

export interface MoveRequest {
  amount: number;
  /** consume only: the most the player may have spent in all, after the move. */
  allowance?: number;
  reason: string;
  reference?: string;
  inventoryId?: string;
  /** A realm id, or null for the account. */
  realmId?: string | null;
}

/** A path's `:inventory`: `account`, `current` or an inventory id. */
export type InventorySelector = string;

/** Where a body puts something (spec "Choosing an inventory"). */
export interface InventoryChoice {
  inventoryId?: string;
  realmId?: string | null;
}

/**
 * The economy's building blocks, for what joins a move's lock order (resolve, items, purchases):
 * a whole currency move is one statement instead, CURRENCY_MOVE_SQL below.
 */
export const MOVE_SQL = {
  holdPlayer: 'SELECT 1 FROM players WHERE id = ? AND environment_id = ? FOR KEY SHARE',
  makeInventory:
    'INSERT INTO inventories (id, environment_id, player_id, realm_key) VALUES (?, ?, ?, ?) ON CONFLICT (player_id, realm_key) DO NOTHING RETURNING id, realm_key',
  findInventory: 'SELECT id, realm_key FROM inventories WHERE player_id = ? AND realm_key IS NOT DISTINCT FROM ? LIMIT 1',
} as const;

const toInventory = (row: Record<string, unknown>): Inventory => ({ id: row.id as string, realmId: (row.realm_key as string | null) ?? null });

export class EconomyService {
  constructor(
    private readonly cursors: CursorCodec,
    private readonly realms: RealmService,
    private readonly telemetry = new Telemetry(),
  ) {}

  /** The player's row, held FOR KEY SHARE until the caller's transaction ends (deletion waits); not-found otherwise. */
  async holdPlayer(trx: Tx, env: EnvironmentContext, playerId: string): Promise<void> {
    const { rows } = await trx.raw(MOVE_SQL.holdPlayer, [playerId, env.id]);
    if (rows.length === 0) throw refuse.notFound('The player');
  }

  /** The player's inventory of one place (realm key, or null for the account), made when missing. */
  async ensureInventory(trx: Tx, env: EnvironmentContext, playerId: string, realmKey: string | null): Promise<Inventory> {
    // Found first: a player's inventory is made once and read on every move after.
    const { rows: found } = await trx.raw(MOVE_SQL.findInventory, [playerId, realmKey]);
    if (found.length > 0) return toInventory(found[0]);
    const { rows: made } = await trx.raw(MOVE_SQL.makeInventory, [randomId(), env.id, playerId, realmKey]);
    if (made.length > 0) return toInventory(made[0]);
    // Someone made it first (committed, or this statement waited for them): a new statement sees it.
    const { rows } = await trx.raw(MOVE_SQL.findInventory, [playerId, realmKey]);
    return toInventory(rows[0]);
  }

  /** The current realm's key, or `no-current-realm`. */
  private async currentRealmKey(db: Queryable, env: EnvironmentContext): Promise<string> {
    const realm = await this.realms.current(db, env.id);
    if (!realm) throw new ApiError('no-current-realm', 'No realm is open now.');
    return realm.id;
  }

  /**
   * A path's `:inventory` for the player: `account` and `current` are made when missing (spec); an id
   * must be one of the player's inventories. The player must exist in the environment.
   */
  async resolve(db: Queryable, env: EnvironmentContext, playerId: string, selector: InventorySelector): Promise<Inventory> {
    if (selector === 'account' || selector === 'current') {
      return inTransaction(db, async (trx) => {
        await this.holdPlayer(trx, env, playerId);
        const realmKey = selector === 'account' ? null : await this.currentRealmKey(trx, env);
        return this.ensureInventory(trx, env, playerId, realmKey);
      });
    }
    const row = await db('inventories').where({ id: selector, player_id: playerId, environment_id: env.id }).first();
    if (!row) {
      await this.expectPlayer(db, env, playerId);
      throw refuse.notFound('The inventory');
    }
    return toInventory(row);
  }

  private async expectPlayer(db: Queryable, env: EnvironmentContext, playerId: string): Promise<void> {
    const row = await db('players').where({ id: playerId, environment_id: env.id }).first('id');
    if (!row) throw refuse.notFound('The player');
  }

  /**
   * Where a body puts something (spec "Choosing an inventory"): `inventoryId` (one of the player's),
   * `realmId` (a realm of the environment, null for the account), or else the definition's scope: the
   * account, or the current realm. A currency held on the account is moved only in the account
   * inventory and a per-realm one only in realm inventories (docs/economy.md).
   */
  async choose(trx: Tx, env: EnvironmentContext, playerId: string, choice: InventoryChoice, scope: 'account' | 'realm', what = 'This currency'): Promise<Inventory> {
    if (choice.inventoryId !== undefined && choice.realmId !== undefined) {
      throw refuse.invalid('body.realmId', 'Name the inventory by inventoryId or by realmId, not both.');
    }
    let inventory: Inventory;
    let field: string;
    if (choice.inventoryId !== undefined) {
      field = 'body.inventoryId';
      const row = await trx('inventories').where({ id: choice.inventoryId, player_id: playerId, environment_id: env.id }).first();
      if (!row) throw refuse.notFound('The inventory');
      inventory = toInventory(row);
    } else if (choice.realmId !== undefined) {
      field = 'body.realmId';
      if (choice.realmId !== null && !(await this.realms.get(trx, env.id, choice.realmId))) throw refuse.notFound('The realm');
      inventory = await this.ensureInventory(trx, env, playerId, choice.realmId);
    } else {
      return this.ensureInventory(trx, env, playerId, scope === 'account' ? null : await this.currentRealmKey(trx, env));
    }
    if ((inventory.realmId === null) !== (scope === 'account')) {
      throw refuse.invalid(field, scope === 'account' ? `${what} is held on the account inventory.` : `${what} is held per realm, not on the account.`);
    }
    return inventory;
  }

  /** GET /players/:playerId/inventories: the player's inventories in the order they were made. */
  async listInventories(db: Queryable, env: EnvironmentContext, playerId: string, q: { limit?: number; cursor?: string }): Promise<Page<Inventory>> {
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
  async balances(db: Queryable, env: EnvironmentContext, playerId: string, selector: InventorySelector, q: { limit?: number; cursor?: string }): Promise<Page<Balance> & { inventory: Inventory }> {
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
  async ledger(db: Queryable, env: EnvironmentContext, playerId: string, q: { limit?: number; cursor?: string; currencyKey?: string; inventoryId?: string }): Promise<Page<LedgerEntry>> {
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
   * POST /players/:playerId/currencies/:currencyKey/<kind>: one move, in the caller's transaction when
   * it has one. Refusals change nothing (the transaction rolls back with them).
   */
  async move(db: Queryable, env: EnvironmentContext, playerId: string, currencyKey: string, kind: MoveKind, request: MoveRequest): Promise<Movement> {
    const movement = await inTransaction(db, (trx) => runMove(trx, env, playerId, currencyKey, kind, request));
    this.telemetry.ledgerMove(kind, 'move');
    return movement;
  }

  /**
   * The move at most once per Idempotency-Key, the key's record kept by the move's own statement
   * (routes that own their record, and `hearth economy credit|debit`): one round trip.
   */
  async moveOnce(db: Queryable, env: EnvironmentContext, playerId: string, currencyKey: string, kind: MoveKind, request: MoveRequest, record: IdempotencyScope): Promise<Movement> {
    const movement = await runIdempotentMove(db, env, playerId, currencyKey, kind, request, record);
    if (!movement.replayed) this.telemetry.ledgerMove(kind, 'move');
    return movement;
  }
}

/** One move through the one statement (below): a refusal is thrown, and the caller's transaction rolls back what it made. */
async function runMove(trx: Tx, env: EnvironmentContext, playerId: string, currencyKey: string, kind: MoveKind, request: MoveRequest): Promise<Movement> {
  const { rows } = await trx.raw(CURRENCY_MOVE_SQL, moveBindings(env, playerId, currencyKey, kind, request));
  const outcome = rows[0] as MoveOutcome;
  if (outcome.outcome !== 'moved') throw refusalOf(outcome, currencyKey, kind, request);
  return movementOf(outcome, currencyKey, false);
}

/** The bindings of CURRENCY_MOVE_SQL, which IDEMPOTENT_CURRENCY_MOVE ends with too. */
function moveBindings(env: EnvironmentContext, playerId: string, currencyKey: string, kind: MoveKind, request: MoveRequest): Knex.RawBinding[] {
  return [
    env.id,
    playerId,
    currencyKey,
    kind,
    String(request.amount),
    request.allowance === undefined ? null : String(request.allowance),
    request.reason,
    request.reference ?? null,
    request.inventoryId ?? null,
    request.realmId !== undefined,
    request.realmId ?? null,
    randomId(),
    MAX_BALANCE.toString(),
  ];
}

/** The Movement a made move answers, first time or replayed (the idempotency record keeps the outcome row). */
function movementOf(o: MoveOutcome, currencyKey: string, replayed: boolean): Movement {
  return {
    transactionId: String(o.ledger_id),
    inventoryId: o.inventory_id!,
    currencyKey,
    amount: Number(o.change),
    balanceAfter: Number(o.balance_after),
    replayed,
  };
}

/**
 * A move under an Idempotency-Key as one statement (migrations/20261123194000): the record's claim,
 * the move and the record's answer in one round trip, in autocommit on the pool. A retry answers the
 * first Movement with `replayed: true`; the key used for another request is `idempotency-conflict`;
 * a refusal rolls the statement back (the key stays free), as runIdempotent's transaction would.
 */
export const IDEMPOTENT_CURRENCY_MOVE = preparedStatement(
  'hearth_idempotent_currency_move',
  'SELECT replayed, answer FROM hearth_idempotent_currency_move(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
);

/** SQLSTATE of a refused idempotent move; DETAIL is the outcome row as JSON. */
const MOVE_REFUSED = 'HM001';

async function runIdempotentMove(
  db: Queryable,
  env: EnvironmentContext,
  playerId: string,
  currencyKey: string,
  kind: MoveKind,
  request: MoveRequest,
  record: IdempotencyScope,
): Promise<Movement> {
  if (record.environmentId !== env.id) throw new Error('an idempotency record of another environment');
  try {
    const [{ replayed, answer }] = await runStatement<{ replayed: boolean; answer: MoveOutcome | Movement }>(db, IDEMPOTENT_CURRENCY_MOVE, [
      record.scope, record.key, record.fingerprint, ...moveBindings(env, playerId, currencyKey, kind, request),
    ]);
    // A record kept by the pipeline before moves kept their own (a retry across the upgrade) holds the
    // Movement it answered, not the move's row.
    if ('transactionId' in answer) return { ...answer, replayed };
    return movementOf(answer, currencyKey, replayed);
  } catch (err) {
    const { code, detail } = err as { code?: string; detail?: string };
    if (code !== MOVE_REFUSED || detail === undefined) throw err;
    const outcome = JSON.parse(detail) as MoveOutcome;
    if (outcome.outcome === 'idempotency-conflict') throw new ApiError('idempotency-conflict', IDEMPOTENCY_CONFLICT_MESSAGE);
    throw refusalOf(outcome, currencyKey, kind, request);
  }
}

/**
 * A whole move as one statement (migrations/20261123181000_currency_move_function.ts): the currency,
 * the player's row FOR KEY SHARE, the inventory chosen (made when missing), the balance row locked by
 * its upsert, the checks, the new figure and the ledger entry, in the lock order above. Written once:
 * the service runs it, and the bench's pgbench script (test/bench/pgbench.ts) runs the same text.
 */
export const CURRENCY_MOVE_SQL =
  'SELECT outcome, currency_kind, held, cap, inventory_id, ledger_id, change, balance_after FROM hearth_currency_move(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)';

interface MoveOutcome {
  outcome: string;
  currency_kind: CurrencyDefinition['kind'] | null;
  held: string | null;
  cap: string | null;
  inventory_id: string | null;
  ledger_id: string | null;
  change: string | null;
  balance_after: string | null;
}

/** The refusal a move's outcome names (the function decided; the words and details are here). */
function refusalOf(o: MoveOutcome, currencyKey: string, kind: MoveKind, request: MoveRequest): ApiError {
  const details = { currencyKey, held: Number(o.held), requested: request.amount };
  switch (o.outcome) {
    case 'currency-not-found':
      return refuse.notFound('The currency');
    case 'wrong-kind':
      return refuse.invalid('path.currencyKey', `${currencyKey} is a ${o.currency_kind} currency: it cannot be moved by ${kind}.`);
    case 'disabled':
      return new ApiError('disabled', `The currency ${currencyKey} is switched off.`, { currencyKey });
    case 'player-not-found':
      return refuse.notFound('The player');
    case 'both-choices':
      return refuse.invalid('body.realmId', 'Name the inventory by inventoryId or by realmId, not both.');
    case 'inventory-not-found':
      return refuse.notFound('The inventory');
    case 'realm-not-found':
      return refuse.notFound('The realm');
    case 'no-current-realm':
      return new ApiError('no-current-realm', 'No realm is open now.');
    // The place named (inventoryId or realmId) does not fit the currency's scope.
    case 'held-on-account':
    case 'held-per-realm':
      return refuse.invalid(
        request.inventoryId !== undefined ? 'body.inventoryId' : 'body.realmId',
        o.outcome === 'held-on-account' ? 'This currency is held on the account inventory.' : 'This currency is held per realm, not on the account.',
      );
    case 'insufficient-balance':
      return new ApiError('insufficient-balance', `Not enough ${currencyKey}: ${o.held} held, ${request.amount} asked.`, details);
    case 'allowance-exceeded':
      return new ApiError('allowance-exceeded', `Spending ${request.amount} ${currencyKey} would pass the allowance of ${request.allowance} (${o.held} spent).`, { ...details, allowance: request.allowance });
    case 'balance-cap':
      return new ApiError('balance-cap', `${currencyKey} would pass its maximum of ${o.cap} (${o.held} held).`, details);
    default:
      throw new Error(`hearth_currency_move answered an unknown outcome: ${o.outcome}`);
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

/**
 * One price of a purchase (docs/economy.md "Buying"): a balance currency is debited by `cost`; a
 * consumed currency's spent figure goes up by `cost`, within `allowance` and the currency's cap.
 */
export interface PriceCharge {
  currency: CurrencyDefinition;
  cost: bigint;
  /** Consumed currencies only: the most the player may have spent in all, after the charge. */
  allowance?: bigint;
}

/** The move a price's charge is: a debit of a balance currency, a consume of a consumed one. */
export function chargeKindOf(currency: CurrencyDefinition): MoveKind {
  return currency.kind === 'balance' ? 'debit' : 'consume';
}

/**
 * Charges one price in the caller's transaction as the move it is: a debit of a balance currency, a
 * consume of a consumed one within its allowance, through the move's one statement, so a purchase is
 * held to the same rules (`insufficient-balance`, `allowance-exceeded`, `balance-cap`) written once. A
 * caller charging several prices calls it in currency-key order, after the player and the inventories
 * (the lock order above).
 */
export function chargePrice(
  trx: Tx,
  env: EnvironmentContext,
  playerId: string,
  inventoryId: string,
  charge: PriceCharge,
  entry: { reason: string; reference?: string },
): Promise<Movement> {
  const { currency, cost, allowance } = charge;
  const kind = chargeKindOf(currency);
  return runMove(trx, env, playerId, currency.key, kind, {
    amount: Number(cost),
    ...(kind === 'consume' ? { allowance: Number(allowance!) } : {}),
    reason: entry.reason,
    reference: entry.reference,
    inventoryId,
  });
}
