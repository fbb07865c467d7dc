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
 * What items share with cards (the pages of what an inventory holds, the quantity and data checks,
 * the engine's stack functions) is written once, in ./held-goods.ts.
 */
import type { Queryable } from '../db/knex';
import type { IdempotencyScope } from '../idempotency';
import { runEngineMove, type EngineAnswer } from '../economy/engine';
import type { CursorCodec } from '../pagination';
import type { EnvironmentContext } from '../tenancy/environments';
import type { EconomyService, InventoryChoice } from '../economy/service';
import { HeldGoodsPages, type HeldPageRead, checkData, checkQuantity } from './held-goods';
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

export class ItemService {
  /** GET .../inventories/:inventory/items: the one-by-one items held there and not yet consumed, in the order granted. */
  readonly listItems: HeldPageRead<Item>;
  /** GET .../inventories/:inventory/item-stacks: the counted stacks held there (quantity above 0), by item type key. */
  readonly listStacks: HeldPageRead<ItemStack>;

  constructor(cursors: CursorCodec, economy: EconomyService) {
    const pages = new HeldGoodsPages(cursors, economy);
    this.listItems = pages.held('item');
    this.listStacks = pages.stacks('item', (_inventory, itemTypeKey, quantity): ItemStack => ({ itemTypeKey, quantity }));
  }

  /**
   * POST /players/:playerId/items/grant: one move of the money engine (hearth_item_grant), at most
   * once per Idempotency-Key with `record`. Refusals change nothing.
   */
  async grant(db: Queryable, env: EnvironmentContext, playerId: string, request: GrantRequest, record?: IdempotencyScope): Promise<EngineAnswer<ItemGrant>> {
    const quantity = request.quantity ?? 1;
    checkQuantity(quantity, ITEM_QUANTITY_MAX);
    if (request.data !== undefined) checkData(request.data, ITEM_DATA_MAX_BYTES);
    return runEngineMove<ItemGrant>(db, env, playerId, 'item-grant', { ...request, quantity }, record);
  }

  /** POST /players/:playerId/items/:itemId/consume (server): takes one item away; a second time is `already-consumed`. */
  consumeItem(db: Queryable, env: EnvironmentContext, playerId: string, itemId: string, record?: IdempotencyScope): Promise<EngineAnswer<{ item: Item }>> {
    return runEngineMove(db, env, playerId, 'item-consume', { itemId }, record);
  }

  /** POST /players/:playerId/item-stacks/consume (server): takes `quantity` (default 1) from a counted stack. */
  async consumeStack(
    db: Queryable,
    env: EnvironmentContext,
    playerId: string,
    request: StackRequest,
    record?: IdempotencyScope,
  ): Promise<EngineAnswer<{ stack: ItemStack }>> {
    const quantity = request.quantity ?? 1;
    checkQuantity(quantity, ITEM_QUANTITY_MAX);
    return runEngineMove(db, env, playerId, 'stack-consume', { ...request, quantity }, record);
  }

  /** POST /players/:playerId/items/:itemId/use (either): uses, and so consumes, one item of a usable type. */
  useItem(db: Queryable, env: EnvironmentContext, playerId: string, itemId: string, record?: IdempotencyScope): Promise<EngineAnswer<ItemUse>> {
    return runEngineMove(db, env, playerId, 'item-use', { itemId }, record);
  }

  /** POST /players/:playerId/item-stacks/use (either): uses one of a counted stack. */
  useStack(db: Queryable, env: EnvironmentContext, playerId: string, request: StackRequest, record?: IdempotencyScope): Promise<EngineAnswer<ItemUse>> {
    return runEngineMove(
      db,
      env,
      playerId,
      'stack-use',
      { itemTypeKey: request.itemTypeKey, inventoryId: request.inventoryId, realmId: request.realmId },
      record,
    );
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
