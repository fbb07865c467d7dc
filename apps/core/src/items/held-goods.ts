/**
 * What items and cards held in inventories share, written once (docs/economy.md "Items held",
 * docs/cards.md "Cards held"): the page of what one inventory holds one by one and the page of its
 * counted stacks, and the checks of a request's quantity and data. Their moves share the money
 * engine's pieces the same way (hearth_stack_add, hearth_stack_take, hearth_choose_held_inventory in
 * ../economy/sql/). What differs stays with each: an item's use and opening, a card's template and decks.
 */
import type { Queryable } from '../db/knex';
import { refuse } from '../errors';
import { type CursorCodec, type Page, keysetPage } from '../pagination';
import type { EnvironmentContext } from '../tenancy/environments';
import type { EconomyService, Inventory, InventorySelector } from '../economy/service';
import { compactBytes } from './item-types';
import type { PageRequest } from '../shapes/common';

/** The two kinds of goods held one by one or in counted stacks. */
export type HeldGoods = 'item' | 'card';

/** Where each kind is kept: its rows held one by one (answered by the database's JSON of one), its stacks, and the type key's column. */
const TABLES = {
  item: { held: 'items', asAnswered: 'hearth_item_json(items) AS held', stacks: 'item_stacks', typeKey: 'item_type_key' },
  card: { held: 'cards', asAnswered: 'hearth_card_json(cards) AS held', stacks: 'card_stacks', typeKey: 'card_type_key' },
} as const;

/**
 * A service's read of a page of what one of a player's inventories holds, with the inventory (GET
 * .../inventories/:inventory/<items, cards, stacks>): the caller's database, the player, which of
 * their inventories (`account`, `current` or an id) and the page.
 */
export type HeldPageRead<T> = (
  db: Queryable,
  env: EnvironmentContext,
  playerId: string,
  selector: InventorySelector,
  q: PageRequest,
) => Promise<Page<T> & { inventory: Inventory }>;

/** Makes the reads of the pages of what an inventory holds, for the items and cards services alike. */
export class HeldGoodsPages {
  constructor(
    private readonly cursors: CursorCodec,
    private readonly economy: EconomyService,
  ) {}

  /** The read of what an inventory holds one by one and has not consumed, in the order granted. */
  held<T>(goods: HeldGoods): HeldPageRead<T> {
    const table = TABLES[goods];
    return (db, env, playerId, selector, q) =>
      this.ofInventory(db, env, playerId, selector, (inventory) =>
        keysetPage(
          this.cursors,
          `${table.held}|${env.id}|${inventory.id}`,
          q,
          (after: string | undefined, take) => {
            const query = db(table.held)
              .where({ inventory_id: inventory.id })
              .whereNull('consumed_at')
              .orderBy('seq')
              .limit(take)
              .select('seq', db.raw(table.asAnswered));
            if (after !== undefined) query.where('seq', '>', after);
            return query;
          },
          (row: Record<string, unknown>) => String(row.seq),
          (row: Record<string, unknown>) => row.held as T,
        ),
      );
  }

  /** The read of an inventory's counted stacks above 0 by type key, each answered by `answer`. */
  stacks<T>(goods: HeldGoods, answer: (inventory: Inventory, typeKey: string, quantity: number) => T): HeldPageRead<T> {
    const table = TABLES[goods];
    return (db, env, playerId, selector, q) =>
      this.ofInventory(db, env, playerId, selector, (inventory) =>
        keysetPage(
          this.cursors,
          `${goods}-stacks|${env.id}|${inventory.id}`,
          q,
          (after: string | undefined, take) => {
            const query = db(table.stacks)
              .where({ inventory_id: inventory.id })
              .where('quantity', '>', 0)
              .orderBy(table.typeKey)
              .limit(take)
              .select(table.typeKey, 'quantity');
            if (after !== undefined) query.where(table.typeKey, '>', after);
            return query;
          },
          (row: Record<string, unknown>) => row[table.typeKey] as string,
          (row: Record<string, unknown>) => answer(inventory, row[table.typeKey] as string, Number(row.quantity)),
        ),
      );
  }

  /** The inventory the selector names (made when `current` is missing), and `read`'s page of it with it. */
  private async ofInventory<T>(
    db: Queryable,
    env: EnvironmentContext,
    playerId: string,
    selector: InventorySelector,
    read: (inventory: Inventory) => Promise<Page<T>>,
  ): Promise<Page<T> & { inventory: Inventory }> {
    const inventory = await this.economy.resolve(db, env, playerId, selector);
    return { ...(await read(inventory)), inventory };
  }
}

/** A request's quantity (spec §8: 1 to `max`), else `invalid-request` on `quantity`. */
export function checkQuantity(quantity: number, max: number): void {
  if (!Number.isInteger(quantity) || quantity < 1 || quantity > max) throw refuse.invalid('quantity', `A quantity is a whole number 1 to ${max}.`);
}

/** A thing's own data (spec §8: at most `maxBytes` written compactly), else `invalid-request` on `data`. */
export function checkData(data: Record<string, unknown>, maxBytes: number): void {
  const bytes = compactBytes(data);
  if (bytes > maxBytes) throw refuse.invalid('data', `data is ${bytes} bytes written compactly; at most ${maxBytes}.`);
}
