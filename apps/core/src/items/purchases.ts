/**
 * Buying items with currencies (spec §2 Purchase<T>; §4 Game services "Buying"; docs/economy.md
 * "Buying"): POST /players/:playerId/purchases/items.
 *
 * A purchase is one move of the money engine (../economy/engine.ts): ONE statement,
 * `hearth_item_purchase` under `hearth_move`, that checks the type and its prices, charges every
 * price through the currency move and grants the items through the engine's grant, so it charges and
 * grants together or not at all (an `owned-limit` from the grant rolls the charges back). Under an
 * Idempotency-Key the same statement claims and answers the key's record. Lock order, the economy's
 * (docs/economy.md "How a move stays exact"): the idempotency record → the item type FOR SHARE
 * (definitions: their writers lock nothing of a player's) → the player FOR KEY SHARE → the
 * inventories (the account's before a realm's) → the balance rows in currency-key order → the item rows.
 */
import type { Queryable } from '../db/knex';
import { afterCommit } from '../db/transaction';
import { refuse } from '../errors';
import type { IdempotencyScope } from '../idempotency';
import type { EnvironmentContext } from '../tenancy/environments';
import { runEngineMove } from '../economy/engine';
import type { InventoryChoice, Movement } from '../economy/service';
import { type Sender, type SenderRule, checkSender } from '../economy/senders';
import { Telemetry } from '../process/telemetry';
import type { ItemGrant } from './service';

/** Spec §8: an item purchase's quantity is 1 to 100. */
export const PURCHASE_QUANTITY_MAX = 100;

export interface ItemPurchaseRequest extends InventoryChoice {
  itemTypeKey: string;
  /** 1-100, default 1: every price is multiplied by it. */
  quantity?: number;
  /** priceRule `any`: the currency of the price to pay. */
  payWith?: string;
  /** Server key only: the allowance per consumed currency key. */
  allowances?: Record<string, number>;
}

/** An allowance is the game server's word on what the player may spend: never a player's own. */
const PURCHASE_SENDERS: SenderRule<ItemPurchaseRequest> = { serverOnly: ['allowances'] };

/** Purchase<T> (spec §2): `granted` is null when a retry replays the first purchase. */
export interface Purchase<T> {
  replayed: boolean;
  charges: Movement[];
  granted: T | null;
}

export class PurchaseService {
  constructor(private readonly telemetry = new Telemetry()) {}

  /**
   * Buys `quantity` items of a purchasable type: charges its prices (every one for `all`, the one
   * `payWith` names for `any`), each multiplied by the quantity, and grants the items, in one
   * statement (in the caller's transaction when `db` is one). With `record`, at most once per
   * Idempotency-Key: a retry answers the first purchase's charges with `replayed: true` and
   * `granted: null`, charging nothing again. `by` is who sent it: a player's token may not send
   * allowances (`forbidden`). Refusals change nothing.
   */
  async buyItem(
    db: Queryable,
    env: EnvironmentContext,
    playerId: string,
    request: ItemPurchaseRequest,
    by: Sender,
    record?: IdempotencyScope,
  ): Promise<Purchase<ItemGrant>> {
    checkSender(PURCHASE_SENDERS, by, env, request);
    const quantity = request.quantity ?? 1;
    if (!Number.isInteger(quantity) || quantity < 1 || quantity > PURCHASE_QUANTITY_MAX) {
      throw refuse.invalid('quantity', `A purchase's quantity is a whole number 1 to ${PURCHASE_QUANTITY_MAX}.`);
    }
    const move = {
      itemTypeKey: request.itemTypeKey,
      quantity,
      inventoryId: request.inventoryId,
      realmId: request.realmId,
      payWith: request.payWith,
      allowances: request.allowances,
    };
    return this.purchase<ItemGrant>(db, env, playerId, 'item-purchase', move, record);
  }

  /**
   * One purchase of the money engine (items, cards): its statement, the replay's shape (spec
   * Purchase<T>: `granted` null, every charge `replayed`), and its charges counted once it commits.
   */
  async purchase<T>(
    db: Queryable,
    env: EnvironmentContext,
    playerId: string,
    kind: 'item-purchase' | 'card-purchase',
    move: object,
    record?: IdempotencyScope,
  ): Promise<Purchase<T>> {
    const { answer, replayed } = await runEngineMove<Purchase<T>>(db, env, playerId, kind, move, record);
    if (replayed) return { replayed: true, charges: answer.charges.map((c) => ({ ...c, replayed: true })), granted: null };
    // A charge lowers a balance currency (a debit) or raises what was spent of a consumed one (a consume).
    await afterCommit(db, () => {
      for (const charge of answer.charges) this.telemetry.ledgerMove(charge.amount < 0 ? 'debit' : 'consume', 'purchase');
    });
    return answer;
  }
}
