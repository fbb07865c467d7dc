/**
 * Items players hold (spec §2 Item, Stack (items); §3 consumed items; §4 Items; docs/economy.md
 * "Items held", "Using and opening"): one-by-one items (each with an id) and counted stacks, on the
 * inventories of apps/core/src/economy.
 *
 * Correctness: every grant, consumption, use and opening is one transaction (the caller's when it has
 * one: the idempotency transaction on the routes, a purchase's later), so the record, the change and
 * everything an opening grants commit or roll back together. Locks follow the economy's order
 * (docs/economy.md "How a move stays exact"): the idempotency record → the player FOR KEY SHARE →
 * the inventory → held rows: first the one item acted on (FOR UPDATE), then stack rows and grant-lock
 * rows in item-type-key order. Item type definitions are read in the same transaction FOR SHARE
 * (never from a cache); their writers lock nothing of a player's, so that read cannot close a cycle.
 */
import { randomInt } from 'node:crypto';
import type { Queryable, Tx } from '../db/knex';
import { inTransaction } from '../db/transaction';
import { ApiError, refuse } from '../errors';
import { randomId } from '../ids';
import { CursorCodec, Page, keysetPage } from '../pagination';
import type { EnvironmentContext } from '../tenancy/environments';
import type { EconomyService, Inventory, InventoryChoice, InventorySelector } from '../economy/service';
import { engineError, refusalOf } from '../economy/refusals';
import { MAX_BALANCE } from '../manifests/schemas';
import { holdExistingPlayer } from '../players/hold';
import type { UnlockService } from '../progression/unlocks';
import { ContainerContents, ItemTypeDefinition, compactBytes, loadItemType } from './item-types';
import { ITEM_TYPE_LIMITS } from './item-type-spec';

/** Item (spec §2). */
export interface Item {
  id: string;
  inventoryId: string;
  itemTypeKey: string;
  grantKey: string | null;
  consumedAt: string | null;
  data: Record<string, unknown>;
}

/** Stack (items) (spec §2). */
export interface ItemStack {
  itemTypeKey: string;
  quantity: number;
}

/** What one grant put where: the stack after it (counted types) or the items it made (one-by-one). */
export interface GrantedItems {
  inventoryId: string;
  itemTypeKey: string;
  stack: ItemStack | null;
  items: Item[];
}

/** POST /players/:playerId/items/grant's answer. */
export interface ItemGrant extends GrantedItems {
  /** true when the grantKey had already granted: the answer is that first grant. */
  alreadyGranted: boolean;
}

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

/** The answer of use (and of opening, which adds what it granted). */
export interface ItemUse {
  itemTypeKey: string;
  /** The item used or opened, now consumed; null when one was taken from a stack. */
  item: Item | null;
}

export interface ContainerOpening extends ItemUse {
  /** What the container gave, one entry per item type in key order (docs/economy.md "Using and opening"). */
  granted: GrantedItems[];
}

/** Spec §8: quantities 1 to 1,000. */
export const ITEM_QUANTITY_MAX = 1000;
/** Spec §8: an item's data is at most 1 KB compact. */
export const ITEM_DATA_MAX_BYTES = ITEM_TYPE_LIMITS.dataBytes;

/** An item from its row, as knex reads it or as the engine answers it (JSON: consumed_at is a string there). */
const toItem = (row: Record<string, any>): Item => ({
  id: row.id,
  inventoryId: row.inventory_id,
  itemTypeKey: row.item_type_key,
  grantKey: row.grant_key ?? null,
  consumedAt: row.consumed_at ? new Date(row.consumed_at).toISOString() : null,
  data: row.data,
});

/** What hearth_grant_items answers: the rows it made or found, as stored. */
export interface StoredGrant {
  inventory_id: string;
  stack_quantity: number | string | null;
  items: Record<string, unknown>[];
  already_granted: boolean;
}

/** The grant's answer from what the engine made (a grant, a purchase's grant). */
export function grantOf(stored: StoredGrant, itemTypeKey: string): ItemGrant {
  return {
    inventoryId: stored.inventory_id,
    itemTypeKey,
    stack: stored.stack_quantity === null ? null : { itemTypeKey, quantity: Number(stored.stack_quantity) },
    items: stored.items.map(toItem),
    alreadyGranted: stored.already_granted,
  };
}

const ITEM_COLUMNS = ['id', 'seq', 'inventory_id', 'item_type_key', 'grant_key', 'consumed_at', 'data'];

export class ItemService {
  constructor(
    private readonly cursors: CursorCodec,
    private readonly economy: EconomyService,
    private readonly unlocks: UnlockService,
  ) {}

  /** GET .../inventories/:inventory/items: the one-by-one items held there and not yet consumed, in the order granted. */
  async listItems(db: Queryable, env: EnvironmentContext, playerId: string, selector: InventorySelector, q: { limit?: number; cursor?: string }): Promise<Page<Item> & { inventory: Inventory }> {
    const inventory = await this.economy.resolve(db, env, playerId, selector);
    const page = await keysetPage(
      this.cursors,
      `items|${env.id}|${inventory.id}`,
      q,
      (after: string | undefined, take) => {
        const query = db('items').where({ inventory_id: inventory.id }).whereNull('consumed_at').orderBy('seq').limit(take).select(ITEM_COLUMNS);
        if (after !== undefined) query.where('seq', '>', after);
        return query;
      },
      (row: Record<string, unknown>) => String(row.seq),
      toItem,
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
   * POST /players/:playerId/items/grant, and the grant a purchase makes: in the caller's transaction
   * when `db` is one, so a purchase charges and grants together. Refusals change nothing.
   */
  async grant(db: Queryable, env: EnvironmentContext, playerId: string, request: GrantRequest): Promise<ItemGrant> {
    const quantity = request.quantity ?? 1;
    checkQuantity(quantity, 'body.quantity');
    if (request.data !== undefined) checkData(request.data);
    return inTransaction(db, async (trx) => {
      const definition = await loadItemType(trx, env.id, request.itemTypeKey, { lock: true });
      if (!definition) throw refuse.notFound('The item type');
      if (definition.ownership === 'counted') {
        if (request.grantKey !== undefined) throw refuse.invalid('body.grantKey', `${definition.key} is counted: a grantKey is for items held one by one.`);
        if (request.data !== undefined) throw refuse.invalid('body.data', `${definition.key} is counted: data is for items held one by one.`);
      }
      if (request.grantKey !== undefined && quantity !== 1) throw refuse.invalid('body.quantity', 'A grant under a grantKey grants exactly one item.');
      await holdExistingPlayer(trx, env, playerId);
      // Granted before under this key: the first grant is the answer, whatever has changed since.
      if (request.grantKey !== undefined) {
        const first = await firstGrant(trx, playerId, definition.key, request.grantKey);
        if (first) return first;
      }
      checkEnabled(definition);
      const inventory = await this.economy.choose(trx, env, playerId, request, definition.scope, definition.key);
      return grantInto(trx, env, playerId, inventory.id, definition.key, quantity, { grantKey: request.grantKey, data: request.data });
    });
  }

  /** POST /players/:playerId/items/:itemId/consume (server): takes one item away; a second time is `already-consumed`. */
  async consumeItem(db: Queryable, env: EnvironmentContext, playerId: string, itemId: string): Promise<{ item: Item }> {
    return inTransaction(db, async (trx) => {
      await holdExistingPlayer(trx, env, playerId);
      const row = await lockItem(trx, env, playerId, itemId);
      if (row.consumed_at) throw alreadyConsumed(row);
      return { item: await markConsumed(trx, row.id) };
    });
  }

  /** POST /players/:playerId/item-stacks/consume (server): takes `quantity` (default 1) from a counted stack. */
  async consumeStack(db: Queryable, env: EnvironmentContext, playerId: string, request: StackRequest): Promise<{ stack: ItemStack }> {
    const quantity = request.quantity ?? 1;
    checkQuantity(quantity, 'body.quantity');
    return inTransaction(db, async (trx) => {
      const definition = await this.countedType(trx, env, request.itemTypeKey);
      await holdExistingPlayer(trx, env, playerId);
      const inventory = await this.economy.choose(trx, env, playerId, request, definition.scope, definition.key);
      return { stack: await takeFromStack(trx, inventory.id, definition.key, quantity) };
    });
  }

  /** POST /players/:playerId/items/:itemId/use (either): uses, and so consumes, one item of a usable type. */
  async useItem(db: Queryable, env: EnvironmentContext, playerId: string, itemId: string): Promise<ItemUse> {
    return inTransaction(db, async (trx) => {
      await holdExistingPlayer(trx, env, playerId);
      const row = await lockItem(trx, env, playerId, itemId);
      if (row.consumed_at) throw alreadyConsumed(row);
      const definition = await loadItemType(trx, env.id, row.item_type_key, { lock: true });
      await this.checkUsable(trx, playerId, row.item_type_key, definition);
      return { itemTypeKey: row.item_type_key, item: await markConsumed(trx, row.id) };
    });
  }

  /** POST /players/:playerId/item-stacks/use (either): uses one of a counted stack. */
  async useStack(db: Queryable, env: EnvironmentContext, playerId: string, request: StackRequest): Promise<ItemUse> {
    return inTransaction(db, async (trx) => {
      const definition = await this.countedType(trx, env, request.itemTypeKey);
      await holdExistingPlayer(trx, env, playerId);
      await this.checkUsable(trx, playerId, definition.key, definition);
      const inventory = await this.economy.choose(trx, env, playerId, request, definition.scope, definition.key);
      await takeFromStack(trx, inventory.id, definition.key, 1);
      return { itemTypeKey: definition.key, item: null };
    });
  }

  /**
   * POST /players/:playerId/items/:itemId/open (either): consumes a container and grants its contents,
   * in one transaction: the item row's lock makes parallel opens of one container run one after
   * another, and every one after the first finds it consumed. A content naming an item type that is
   * missing or switched off refuses the opening (`not-usable`) and consumes nothing.
   */
  async openContainer(db: Queryable, env: EnvironmentContext, playerId: string, itemId: string): Promise<ContainerOpening> {
    return inTransaction(db, async (trx) => {
      await holdExistingPlayer(trx, env, playerId);
      const row = await lockItem(trx, env, playerId, itemId);
      if (row.consumed_at) throw alreadyConsumed(row);
      const container = await loadItemType(trx, env.id, row.item_type_key, { lock: true });
      if (!container || container.category !== 'container' || !container.contents) {
        throw new ApiError('not-usable', `Only a container is opened; ${row.item_type_key} is not one.`, { itemTypeKey: row.item_type_key });
      }
      checkEnabled(container);
      await this.checkUnlocked(trx, playerId, container);

      // Every type the contents name must exist and be switched on, drawn or not: whether a container
      // opens must not depend on the draw.
      const contentTypes = new Map<string, ItemTypeDefinition>();
      for (const key of namedTypes(container.contents)) {
        const definition = await loadItemType(trx, env.id, key, { lock: true });
        if (!definition || !definition.enabled) {
          throw new ApiError('not-usable', `${container.key} cannot be opened: its contents name ${key}, which is ${definition ? 'switched off' : 'not defined'}.`, { itemTypeKey: key });
        }
        contentTypes.set(key, definition);
      }

      const item = await markConsumed(trx, row.id);
      const home = await trx('inventories').where({ id: row.inventory_id }).first('id', 'realm_key');
      const granted: GrantedItems[] = [];
      // Key order: the lock order of stack and grant-lock rows.
      for (const [key, quantity] of [...drawContents(container.contents)].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
        const definition = contentTypes.get(key)!;
        // A content goes into the container's inventory when its scope allows that place, else where its scope puts it.
        const fits = (home.realm_key === null) === (definition.scope === 'account');
        const inventory = fits
          ? { id: home.id as string }
          : await this.economy.choose(trx, env, playerId, {}, definition.scope, definition.key);
        const { alreadyGranted: _, ...made } = await grantInto(trx, env, playerId, inventory.id, definition.key, quantity, {});
        granted.push(made);
      }
      return { itemTypeKey: row.item_type_key, item, granted };
    });
  }

  /** A counted type for the stack routes: not-found when undefined; one-by-one types are acted on by item id. */
  private async countedType(trx: Tx, env: EnvironmentContext, key: string): Promise<ItemTypeDefinition> {
    const definition = await loadItemType(trx, env.id, key, { lock: true });
    if (!definition) throw refuse.notFound('The item type');
    if (definition.ownership !== 'counted') throw refuse.invalid('body.itemTypeKey', `${key} is held one by one: act on its items by id.`);
    return definition;
  }

  /** Use's rules: the type usable (`not-usable`), switched on (`disabled`), its unlocks held (`locked`). */
  private async checkUsable(trx: Tx, playerId: string, key: string, definition: ItemTypeDefinition | null): Promise<void> {
    if (!definition || !definition.usable) {
      throw new ApiError('not-usable', definition ? `${key} is not usable.` : `${key} is no longer defined.`, { itemTypeKey: key });
    }
    checkEnabled(definition);
    await this.checkUnlocked(trx, playerId, definition);
  }

  private async checkUnlocked(trx: Tx, playerId: string, definition: ItemTypeDefinition): Promise<void> {
    const missing = await this.unlocks.missing(trx, playerId, definition.requires);
    if (missing.length > 0) throw new ApiError('locked', `${definition.key} needs unlocks the player lacks: ${missing.join(', ')}.`, { itemTypeKey: definition.key, missing });
  }
}

function checkQuantity(quantity: number, field: string): void {
  if (!Number.isInteger(quantity) || quantity < 1 || quantity > ITEM_QUANTITY_MAX) throw refuse.invalid(field, `A quantity is a whole number 1 to ${ITEM_QUANTITY_MAX}.`);
}

function checkData(data: Record<string, unknown>): void {
  const bytes = compactBytes(data);
  if (bytes > ITEM_DATA_MAX_BYTES) throw refuse.invalid('body.data', `data is ${bytes} bytes written compactly; at most ${ITEM_DATA_MAX_BYTES}.`);
}

function checkEnabled(definition: ItemTypeDefinition): void {
  if (!definition.enabled) throw refusalOf({ outcome: 'item-type-disabled', itemTypeKey: definition.key });
}

function alreadyConsumed(row: Record<string, any>): ApiError {
  return new ApiError('already-consumed', `The item was already used, opened or consumed (${(row.consumed_at as Date).toISOString()}).`, { itemTypeKey: row.item_type_key });
}

/** The player's item, its row locked until the transaction ends (consumptions of one item run one after another). */
async function lockItem(trx: Tx, env: EnvironmentContext, playerId: string, itemId: string): Promise<Record<string, any>> {
  const row = await trx('items').where({ id: itemId, player_id: playerId, environment_id: env.id }).forUpdate().first(ITEM_COLUMNS);
  if (!row) throw refuse.notFound('The item');
  return row;
}

async function markConsumed(trx: Tx, itemId: string): Promise<Item> {
  const [row] = await trx('items').where({ id: itemId }).update({ consumed_at: trx.raw('clock_timestamp()') }).returning(ITEM_COLUMNS);
  return toItem(row);
}

/** The first grant under (player, type, grantKey), answered as a grant; null when there is none. */
async function firstGrant(trx: Tx, playerId: string, itemTypeKey: string, grantKey: string): Promise<ItemGrant | null> {
  const row = await trx('items').where({ player_id: playerId, item_type_key: itemTypeKey, grant_key: grantKey }).first(ITEM_COLUMNS);
  return row ? { inventoryId: row.inventory_id, itemTypeKey, stack: null, items: [toItem(row)], alreadyGranted: true } : null;
}

/**
 * Puts `quantity` of a type into an inventory the caller has chosen (the player held, the type read
 * FOR SHARE in this transaction), by the engine's one grant (hearth_grant_items, which a purchase
 * runs too): a counted stack grows under its row lock; one-by-one items are made under the
 * (inventory, type) grant lock, so `maxOwned` counts them with no parallel grant in between. Past
 * `maxOwned` (or 2^53-1): `owned-limit`. `alreadyGranted` when a grant under the same grantKey
 * committed first.
 */
async function grantInto(
  trx: Tx,
  env: EnvironmentContext,
  playerId: string,
  inventoryId: string,
  itemTypeKey: string,
  quantity: number,
  extra: { grantKey?: string; data?: Record<string, unknown> },
): Promise<ItemGrant> {
  try {
    const { rows } = await trx.raw(
      'SELECT hearth_grant_items(?, ?, ?, t, ?, ?, ?, ?) AS granted FROM item_types t WHERE t.environment_id = ? AND t.key = ?',
      [env.id, playerId, inventoryId, quantity, extra.grantKey ?? null, extra.data === undefined ? null : JSON.stringify(extra.data), MAX_BALANCE.toString(), env.id, itemTypeKey],
    );
    return grantOf(rows[0].granted as StoredGrant, itemTypeKey);
  } catch (err) {
    throw engineError(err);
  }
}

/** Takes `quantity` from a counted stack under its row lock; `insufficient-balance` when fewer are held. */
async function takeFromStack(trx: Tx, inventoryId: string, itemTypeKey: string, quantity: number): Promise<ItemStack> {
  const row = await trx('item_stacks').where({ inventory_id: inventoryId, item_type_key: itemTypeKey }).forUpdate().first('quantity');
  const held = row ? BigInt(row.quantity) : 0n;
  if (held < BigInt(quantity)) {
    throw new ApiError('insufficient-balance', `Not enough ${itemTypeKey}: ${held} held, ${quantity} asked.`, { itemTypeKey, held: Number(held), requested: quantity });
  }
  const after = held - BigInt(quantity);
  await trx('item_stacks').where({ inventory_id: inventoryId, item_type_key: itemTypeKey }).update({ quantity: after.toString() });
  return { itemTypeKey, quantity: Number(after) };
}

/** Every item type a container's contents name (grants and every pick's entries), each once. */
export function namedTypes(contents: ContainerContents): string[] {
  const keys = new Set<string>();
  for (const g of contents.grants) keys.add(g.itemTypeKey);
  for (const p of contents.picks) for (const e of p.from) keys.add(e.itemTypeKey);
  return [...keys].sort();
}

/**
 * What one opening gives, by item type: every fixed grant, and each pick's `count` independent draws,
 * an entry coming up with probability weight / the sum of the pick's weights (crypto randomness: a
 * player cannot predict a draw from earlier ones).
 */
export function drawContents(contents: ContainerContents, draw: (below: number) => number = randomInt): Map<string, number> {
  const out = new Map<string, number>();
  const add = (key: string, quantity: number) => out.set(key, (out.get(key) ?? 0) + quantity);
  for (const g of contents.grants) add(g.itemTypeKey, g.quantity);
  for (const pick of contents.picks) {
    const total = pick.from.reduce((sum, e) => sum + e.weight, 0);
    for (let i = 0; i < pick.count; i++) {
      let ticket = draw(total);
      const entry = pick.from.find((e) => (ticket -= e.weight) < 0)!;
      add(entry.itemTypeKey, entry.quantity);
    }
  }
  return out;
}
