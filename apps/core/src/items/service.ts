/**
 * Items players hold (spec §2 Item, Stack (items); §3 consumed items; §4 Items; docs/economy.md
 * "Items held", "Using and opening"): one-by-one items (each with an id) and counted stacks, on the
 * inventories of apps/core/src/economy.
 *
 * Correctness: a grant, a consumption and a use are each one move of the money engine
 * (../economy/engine.ts: one statement, its Idempotency-Key record kept by the same statement); an
 * opening draws its contents here and is one transaction (the caller's when it has one: the
 * idempotency transaction on its route) built of the engine's pieces (the player hold, the unlock
 * check, the choice of inventory, the grant), so the record, the consumption and everything it
 * grants commit or roll back together. Locks follow the economy's order
 * (docs/economy.md "How a move stays exact"): the idempotency record → the player FOR KEY SHARE →
 * the inventory → held rows: first the one item acted on (FOR UPDATE), then stack rows and grant-lock
 * rows in item-type-key order. Item type definitions are read in the same transaction FOR SHARE
 * (never from a cache); their writers lock nothing of a player's, so that read cannot close a cycle.
 */
import { randomInt } from 'node:crypto';
import type { Knex } from 'knex';
import type { Queryable, Tx } from '../db/knex';
import type { IdempotencyScope } from '../idempotency';
import { runEngineMove, type EngineAnswer } from '../economy/engine';
import { inTransaction } from '../db/transaction';
import { refuse } from '../errors';
import { CursorCodec, Page, keysetPage } from '../pagination';
import type { EnvironmentContext } from '../tenancy/environments';
import type { EconomyService, Inventory, InventoryChoice, InventorySelector } from '../economy/service';
import { engineError, refusalOf } from '../economy/refusals';
import { MAX_BALANCE } from '../manifests/schemas';
import { holdExistingPlayer } from '../players/hold';
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
    checkQuantity(quantity, 'body.quantity');
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
    checkQuantity(quantity, 'body.quantity');
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
   * in one transaction: the item row's lock makes parallel opens of one container run one after
   * another, and every one after the first finds it consumed. A content naming an item type that is
   * missing or switched off refuses the opening (`not-usable`) and consumes nothing.
   */
  async openContainer(db: Queryable, env: EnvironmentContext, playerId: string, itemId: string): Promise<ContainerOpening> {
    return inTransaction(db, async (trx) => {
      await holdExistingPlayer(trx, env, playerId);
      const row = await lockItem(trx, env, playerId, itemId);
      const container = await loadItemType(trx, env.id, row.item_type_key, { lock: true });
      if (!container || container.category !== 'container' || !container.contents) {
        throw refusalOf({ outcome: 'not-a-container', itemTypeKey: row.item_type_key });
      }
      checkEnabled(container);
      await engineStatement(trx, 'SELECT hearth_check_unlocked(?, t) FROM item_types t WHERE t.environment_id = ? AND t.key = ?', [playerId, env.id, container.key]);

      // Every type the contents name must exist and be switched on, drawn or not: whether a container
      // opens must not depend on the draw.
      const contentTypes = new Map<string, ItemTypeDefinition>();
      for (const key of namedTypes(container.contents)) {
        const definition = await loadItemType(trx, env.id, key, { lock: true });
        if (!definition || !definition.enabled) {
          throw refusalOf({ outcome: 'contents-unusable', container: container.key, itemTypeKey: key, state: definition ? 'switched off' : 'not defined' });
        }
        contentTypes.set(key, definition);
      }

      const [{ item }] = await engineStatement<{ item: Item }>(trx, `UPDATE items SET consumed_at = clock_timestamp() WHERE id = ? RETURNING ${ITEM_JSON}`, [row.id]);
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

/** The player's item, its row locked until the transaction ends; not-found, or already-consumed. */
async function lockItem(trx: Tx, env: EnvironmentContext, playerId: string, itemId: string): Promise<Record<string, any>> {
  const [row] = await engineStatement<Record<string, any>>(trx, 'SELECT * FROM hearth_lock_unconsumed_item(?, ?, ?)', [env.id, playerId, itemId]);
  return row;
}

/** A statement of the engine's functions in the caller's transaction: a refusal it raises is thrown as the table words it. */
async function engineStatement<Row>(trx: Tx, sql: string, bindings: Knex.RawBinding[]): Promise<Row[]> {
  try {
    return (await trx.raw(sql, bindings)).rows as Row[];
  } catch (err) {
    throw engineError(err);
  }
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
  const [{ granted }] = await engineStatement<{ granted: ItemGrant }>(
    trx,
    'SELECT hearth_grant_items(?, ?, ?, t, ?, ?, ?, ?) AS granted FROM item_types t WHERE t.environment_id = ? AND t.key = ?',
    [env.id, playerId, inventoryId, quantity, extra.grantKey ?? null, extra.data === undefined ? null : JSON.stringify(extra.data), MAX_BALANCE.toString(), env.id, itemTypeKey],
  );
  return granted;
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
