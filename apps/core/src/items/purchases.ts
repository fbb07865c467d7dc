/**
 * Buying items with currencies (spec §2 Purchase<T>; §4 Game services "Buying"; docs/economy.md
 * "Buying"): POST /players/:playerId/purchases/items.
 *
 * Correctness: a purchase is one transaction (the idempotency transaction when the request carries a
 * key, else one of its own) that charges every price and grants the items, so it charges and grants
 * together or not at all (an `owned-limit` from the grant rolls the charges back). Lock order, the
 * economy's (docs/economy.md "How a move stays exact"): the idempotency record → the item type FOR
 * SHARE (definitions: their writers lock nothing of a player's) → the player FOR KEY SHARE → the
 * inventories (the account's before a realm's) → the balance rows in currency-key order → the item
 * rows, through ItemService.grant in the same transaction.
 */
import type { Queryable, Tx } from '../db/knex';
import { inTransaction } from '../db/transaction';
import { ApiError, refuse } from '../errors';
import type { EnvironmentContext } from '../tenancy/environments';
import { currencyNamed } from '../economy/definitions';
import { chargeKindOf, chargePrice, type EconomyService, type Inventory, type InventoryChoice, type Movement, type PriceCharge } from '../economy/service';
import { loadItemType, type ItemTypeDefinition } from './item-types';
import { Telemetry } from '../process/telemetry';
import type { ItemGrant, ItemService } from './service';

/** Spec §8: an item purchase's quantity is 1 to 100. */
export const PURCHASE_QUANTITY_MAX = 100;

/** The ledger reason of every charge a purchase makes; its reference names what was bought (`item:<key>`). */
export const PURCHASE_REASON = 'purchase';

export interface ItemPurchaseRequest extends InventoryChoice {
  itemTypeKey: string;
  /** 1-100, default 1: every price is multiplied by it. */
  quantity?: number;
  /** priceRule `any`: the currency of the price to pay. */
  payWith?: string;
  /** Server key only: the allowance per consumed currency key. */
  allowances?: Record<string, number>;
}

/** Purchase<T> (spec §2): `granted` is null when a retry replays the first purchase. */
export interface Purchase<T> {
  replayed: boolean;
  charges: Movement[];
  granted: T | null;
}

export class PurchaseService {
  constructor(
    private readonly economy: EconomyService,
    private readonly items: ItemService,
    private readonly telemetry = new Telemetry(),
  ) {}

  /**
   * Buys `quantity` items of a purchasable type: charges its prices (every one for `all`, the one
   * `payWith` names for `any`), each multiplied by the quantity, and grants the items, in one
   * transaction (the caller's when `db` is one). Refusals change nothing.
   */
  async buyItem(db: Queryable, env: EnvironmentContext, playerId: string, request: ItemPurchaseRequest): Promise<Purchase<ItemGrant>> {
    const quantity = request.quantity ?? 1;
    if (!Number.isInteger(quantity) || quantity < 1 || quantity > PURCHASE_QUANTITY_MAX) {
      throw refuse.invalid('body.quantity', `A purchase's quantity is a whole number 1 to ${PURCHASE_QUANTITY_MAX}.`);
    }
    const purchase = await inTransaction(db, async (trx) => {
      const definition = await loadItemType(trx, env.id, request.itemTypeKey, { lock: true });
      if (!definition) throw refuse.notFound('The item type');
      if (!definition.purchasable) throw new ApiError('not-purchasable', `${definition.key} is not for sale.`, { itemTypeKey: definition.key });
      if (!definition.enabled) throw new ApiError('disabled', `The item type ${definition.key} is switched off.`, { itemTypeKey: definition.key });
      const charges = await pricesToCharge(trx, env, definition, quantity, request);

      await this.economy.holdPlayer(trx, env, playerId);
      // Inventories are made account first, then a realm's: two purchases making both cannot wait on each other.
      if (definition.scope === 'account' || charges.some((c) => c.currency.scope === 'account')) {
        await this.economy.ensureInventory(trx, env, playerId, null);
      }
      const home = await this.economy.choose(trx, env, playerId, request, definition.scope, `The item type ${definition.key}`);
      const movements: Movement[] = [];
      for (const charge of charges) {
        const from = await this.payingInventory(trx, env, playerId, home, charge.currency.scope);
        movements.push(await chargePrice(trx, env, playerId, from.id, charge, { reason: PURCHASE_REASON, reference: `item:${definition.key}` }));
      }
      // Same transaction: an owned-limit here rolls the charges back with it.
      const granted = await this.items.grantBought(trx, env, playerId, home.id, definition, quantity);
      return { replayed: false, charges: movements, granted, kinds: charges.map((c) => chargeKindOf(c.currency)) };
    });
    for (const kind of purchase.kinds) this.telemetry.ledgerMove(kind, 'purchase');
    return { replayed: purchase.replayed, charges: purchase.charges, granted: purchase.granted };
  }

  /**
   * Where a currency is paid from: the inventory the items go to when the currency is held in that
   * kind of place; otherwise the account, or the current realm (`no-current-realm` while none is open).
   */
  private async payingInventory(trx: Tx, env: EnvironmentContext, playerId: string, home: Inventory, scope: 'account' | 'realm'): Promise<Inventory> {
    if ((home.realmId === null) === (scope === 'account')) return home;
    return this.economy.choose(trx, env, playerId, {}, scope);
  }
}

/**
 * The prices a purchase pays, in currency-key order (the balances' lock order), each multiplied by
 * the quantity, with the allowance of each consumed one. Refusals, in this order: `payWith` missing
 * (priceRule `any`) or naming no price (`invalid-request` on body.payWith); a price's currency
 * missing (`not-purchasable`) or switched off (`disabled`); a consumed currency without its
 * allowance (`invalid-request` on body.allowances).
 */
async function pricesToCharge(trx: Tx, env: EnvironmentContext, definition: ItemTypeDefinition, quantity: number, request: ItemPurchaseRequest): Promise<PriceCharge[]> {
  const key = definition.key;
  if (request.payWith !== undefined && !definition.prices.some((p) => p.currencyKey === request.payWith)) {
    throw refuse.invalid('body.payWith', `${key} has no price in ${request.payWith}; its prices are in ${definition.prices.map((p) => p.currencyKey).join(', ')}.`);
  }
  let prices = definition.prices;
  if (definition.priceRule === 'any') {
    if (request.payWith === undefined) throw refuse.invalid('body.payWith', `${key} is paid with any one of its prices: name its currency in payWith (${prices.map((p) => p.currencyKey).join(', ')}).`);
    prices = prices.filter((p) => p.currencyKey === request.payWith);
  }
  const charges: PriceCharge[] = [];
  for (const price of [...prices].sort((a, b) => (a.currencyKey < b.currencyKey ? -1 : a.currencyKey > b.currencyKey ? 1 : 0))) {
    const currency = await currencyNamed(trx, env.id, price.currencyKey);
    // A price in a currency the environment does not have makes the item not for sale, never free.
    if (!currency) throw new ApiError('not-purchasable', `${key} is priced in ${price.currencyKey}, which is not defined.`, { itemTypeKey: key, currencyKey: price.currencyKey });
    if (!currency.enabled) throw new ApiError('disabled', `${key} is priced in ${currency.key}, which is switched off.`, { itemTypeKey: key, currencyKey: currency.key });
    const charge: PriceCharge = { currency, cost: BigInt(price.amount) * BigInt(quantity) };
    if (currency.kind === 'consumed') {
      const allowance = request.allowances?.[currency.key];
      if (allowance === undefined) {
        throw new ApiError('invalid-request', `${key} is priced in ${currency.key}, a consumed currency: a server key must send its allowance in allowances.${currency.key}.`, {
          field: 'body.allowances',
          currencyKey: currency.key,
        });
      }
      charge.allowance = BigInt(allowance);
    }
    charges.push(charge);
  }
  return charges;
}
