/**
 * Items players hold (spec §2 Item, Stack (items); §3 consumed items; §4 Items; docs/economy.md
 * "Items held", "Using and opening"): one-by-one items (each with an id) and counted stacks, on the
 * inventories of apps/core/src/economy.
 *
 * Correctness: a grant, a consumption, a use and an opening are each one move of the money engine
 * (../economy/engine.ts; migrations/20261126171000_item_moves.ts): one statement, its
 * Idempotency-Key record kept by the same statement, so the record, the change and everything an
 * opening grants commit or roll back together. Locks follow the economy's order
 * (docs/economy.md "How a move stays exact"): the idempotency record → the player FOR KEY SHARE →
 * the inventory → held rows: first the one item acted on (FOR UPDATE), then stack rows and grant-lock
 * rows in item-type-key order. Item type definitions are read in the same transaction FOR SHARE
 * (never from a cache); their writers lock nothing of a player's, so that read cannot close a cycle.
 */
import type { Queryable } from '../db/knex';
import type { IdempotencyScope } from '../idempotency';
import { runEngineMove, type EngineAnswer } from '../economy/engine';
import { refuse } from '../errors';
import { type CursorCodec, type Page, keysetPage } from '../pagination';
import type { EnvironmentContext } from '../tenancy/environments';
import type { EconomyService, Inventory, InventoryChoice, InventorySelector } from '../economy/service';
import { compactBytes } from './item-types';
import { ITEM_TYPE_LIMITS } from '../contract/item-type';

// Item, ItemStack and the answers of grants, use and opening (spec §2) are the answer shapes' types (shapes/items.ts).
import type { ContainerOpening, Item, ItemGrant, ItemStack, ItemUse } from '../shapes';
export type { ContainerOpening, GrantedItems, Item, ItemGrant, ItemStack, ItemUse } from '../shapes';

export interface GrantRequest extends InventoryChoice {
  itemTypeKey: string;
  /** 1-1000, default 1. */
  quantity?: number;
  /** One-by-one types only, quantity 1: granting again under it answers the first grant. */
  grantKey?: string;
  /** One-by-one types only: the item's own data, at most 1 KB compact. */
  data?: Record<string, unknown>;
}

export interface StackRequest extends InventoryChoice {
  itemTypeKey: string;
  quantity?: number;
}

/** Spec §8: quantities 1 to 1,000. */
export const ITEM_QUANTITY_MAX = 1000;
/** Spec §8: an item's data is at most 1 KB compact. */
export const ITEM_DATA_MAX_BYTES = ITEM_TYPE_LIMITS.dataBytes;

/** An item as the API answers it, made by the database (hearth_item_json) for every answer that holds items. */
const ITEM_JSON = 'hearth_item_json(items) AS item';

export class ItemService {
  constructor(
    private readonly cursors: CursorCodec,
    private readonly economy: EconomyService,
  ) {}

  /** GET .../inventories/:inventory/items: the one-by-one items held there and not yet consumed, in the order granted. */
  async listItems(db: Queryable, env: EnvironmentContext, playerId: string, selector: InventorySelector, q: { limit?: number; cursor?: string }): Promise<Page<Item> & { inventory: Inventory }> {
    const inventory = await this.economy.resolve(db, env, playerId, selector);
    const page = await keysetPage(
      this.cursors,
      `items|${env.id}|${inventory.id}`,
      q,
      (after: string | undefined, take) => {
        const query = db('items').where({ inventory_id: inventory.id }).whereNull('consumed_at').orderBy('seq').limit(take).select('seq', db.raw(ITEM_JSON));
        if (after !== undefined) query.where('seq', '>', after);
        return query;
      },
      (row: Record<string, unknown>) => String(row.seq),
      (row: Record<string, unknown>) => row.item as Item,
    );
    return { ...page, inventory };
  }

  /** GET .../inventories/:inventory/item-stacks: the counted stacks held there (quantity above 0), by item type key. */
  async listStacks(db: Queryable, env: EnvironmentContext, playerId: string, selector: InventorySelector, q: { limit?: number; cursor?: string }): Promise<Page<ItemStack> & { inventory: Inventory }> {
    const inventory = await this.economy.resolve(db, env, playerId, selector);
    const page = await keysetPage(
      this.cursors,
      `item-stacks|${env.id}|${inventory.id}`,
      q,
      (after: string | undefined, take) => {
        const query = db('item_stacks').where({ inventory_id: inventory.id }).where('quantity', '>', 0).orderBy('item_type_key').limit(take).select('item_type_key', 'quantity');
        if (after !== undefined) query.where('item_type_key', '>', after);
        return query;
      },
      (row: Record<string, unknown>) => row.item_type_key as string,
      (row: Record<string, unknown>): ItemStack => ({ itemTypeKey: row.item_type_key as string, quantity: Number(row.quantity) }),
    );
    return { ...page, inventory };
  }

  /**
   * POST /players/:playerId/items/grant: one move of the money engine (hearth_item_grant), at most
   * once per Idempotency-Key with `record`. Refusals change nothing.
   */
  async grant(db: Queryable, env: EnvironmentContext, playerId: string, request: GrantRequest, record?: IdempotencyScope): Promise<EngineAnswer<ItemGrant>> {
    const quantity = request.quantity ?? 1;
    checkQuantity(quantity, 'quantity');
    if (request.data !== undefined) checkData(request.data);
    return runEngineMove<ItemGrant>(db, env, playerId, 'item-grant', { ...request, quantity }, record);
  }

  /** POST /players/:playerId/items/:itemId/consume (server): takes one item away; a second time is `already-consumed`. */
  consumeItem(db: Queryable, env: EnvironmentContext, playerId: string, itemId: string, record?: IdempotencyScope): Promise<EngineAnswer<{ item: Item }>> {
    return runEngineMove(db, env, playerId, 'item-consume', { itemId }, record);
  }

  /** POST /players/:playerId/item-stacks/consume (server): takes `quantity` (default 1) from a counted stack. */
  async consumeStack(db: Queryable, env: EnvironmentContext, playerId: string, request: StackRequest, record?: IdempotencyScope): Promise<EngineAnswer<{ stack: ItemStack }>> {
    const quantity = request.quantity ?? 1;
    checkQuantity(quantity, 'quantity');
    return runEngineMove(db, env, playerId, 'stack-consume', { ...request, quantity }, record);
  }

  /** POST /players/:playerId/items/:itemId/use (either): uses, and so consumes, one item of a usable type. */
  useItem(db: Queryable, env: EnvironmentContext, playerId: string, itemId: string, record?: IdempotencyScope): Promise<EngineAnswer<ItemUse>> {
    return runEngineMove(db, env, playerId, 'item-use', { itemId }, record);
  }

  /** POST /players/:playerId/item-stacks/use (either): uses one of a counted stack. */
  useStack(db: Queryable, env: EnvironmentContext, playerId: string, request: StackRequest, record?: IdempotencyScope): Promise<EngineAnswer<ItemUse>> {
    return runEngineMove(db, env, playerId, 'stack-use', { itemTypeKey: request.itemTypeKey, inventoryId: request.inventoryId, realmId: request.realmId }, record);
  }

  /**
   * POST /players/:playerId/items/:itemId/open (either): consumes a container and grants its contents,
   * one move of the money engine (hearth_item_open): the item row's lock makes parallel opens of one
   * container run one after another, and every one after the first finds it consumed. A content
   * naming an item type that is missing or switched off refuses the opening (`not-usable`) and
   * consumes nothing.
   */
  openContainer(db: Queryable, env: EnvironmentContext, playerId: string, itemId: string, record?: IdempotencyScope): Promise<EngineAnswer<ContainerOpening>> {
    return runEngineMove(db, env, playerId, 'item-open', { itemId }, record);
  }
}

function checkQuantity(quantity: number, field: string): void {
  if (!Number.isInteger(quantity) || quantity < 1 || quantity > ITEM_QUANTITY_MAX) throw refuse.invalid(field, `A quantity is a whole number 1 to ${ITEM_QUANTITY_MAX}.`);
}

function checkData(data: Record<string, unknown>): void {
  const bytes = compactBytes(data);
  if (bytes > ITEM_DATA_MAX_BYTES) throw refuse.invalid('data', `data is ${bytes} bytes written compactly; at most ${ITEM_DATA_MAX_BYTES}.`);
}

