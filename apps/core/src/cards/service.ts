/**
 * Cards players hold (spec §2 Card, Stack (cards), Purchase<T>; §4 "Cards and decks", "Buying";
 * docs/cards.md): cards held one by one (each with an id, a type, an optional template and data) and
 * counted stacks, on the inventories of apps/core/src/economy.
 *
 * Correctness: a grant, a consumption, a stack's grant or consumption and a purchase are each one move
 * of the money engine (../economy/engine.ts; migrations/20261126191000_cards_moves.ts): one statement,
 * its Idempotency-Key record kept by the same statement, so the record and the change commit or roll
 * back together. Locks follow the economy's order (docs/economy.md "How a move stays exact"): the
 * idempotency record → the card type and template FOR SHARE → the player FOR KEY SHARE → the
 * inventories → the balance rows in currency-key order → the card or stack row → its deck lines.
 */
import type { Queryable } from '../db/knex';
import type { IdempotencyScope } from '../idempotency';
import { runEngineMove, type EngineAnswer } from '../economy/engine';
import { refuse } from '../errors';
import { type CursorCodec, type Page, keysetPage } from '../pagination';
import type { EnvironmentContext } from '../tenancy/environments';
import type { EconomyService, Inventory, InventoryChoice, InventorySelector } from '../economy/service';
import type { Purchase, PurchaseService } from '../items/purchases';
import { compactBytes } from '../items/item-types';
import { CARD_LIMITS } from '../contract/card-type';
import type { Card, CardGrant, CardStack } from '../shapes';
export type { Card, CardGrant, CardStack } from '../shapes';

export interface CardGrantRequest extends InventoryChoice {
  cardTypeKey: string;
  cardTemplateKey?: string;
  /** Granting again under it answers the first grant (`alreadyGranted: true`). */
  grantKey?: string;
  /** The card's own data, at most 1 KB compact. */
  data?: Record<string, unknown>;
}

export interface CardStackRequest extends InventoryChoice {
  cardTypeKey: string;
  /** 1-1000. */
  quantity: number;
}

export const CARD_PURCHASE_FORMS = ['instance', 'stack'] as const;

export interface CardPurchaseRequest extends InventoryChoice {
  cardTypeKey: string;
  /** `instance` (default): one card with an id; `stack`: one more in the type's stack. */
  as?: (typeof CARD_PURCHASE_FORMS)[number];
  payWith?: string;
  /** Server key only: instance only. */
  cardTemplateKey?: string;
  /** Server key only: instance only, at most 1 KB compact. */
  data?: Record<string, unknown>;
  /** Server key only: the allowance per consumed currency key. */
  allowances?: Record<string, number>;
}

/** A card as the API answers it, made by the database (hearth_card_json) for every answer that holds cards. */
const CARD_JSON = 'hearth_card_json(cards) AS card';

export class CardService {
  constructor(
    private readonly cursors: CursorCodec,
    private readonly economy: EconomyService,
    private readonly purchases: PurchaseService,
  ) {}

  /** GET .../inventories/:inventory/cards: the cards held there one by one and not consumed, in the order granted. */
  async listCards(db: Queryable, env: EnvironmentContext, playerId: string, selector: InventorySelector, q: { limit?: number; cursor?: string }): Promise<Page<Card> & { inventory: Inventory }> {
    const inventory = await this.economy.resolve(db, env, playerId, selector);
    const page = await keysetPage(
      this.cursors,
      `cards|${env.id}|${inventory.id}`,
      q,
      (after: string | undefined, take) => {
        const query = db('cards').where({ inventory_id: inventory.id }).whereNull('consumed_at').orderBy('seq').limit(take).select('seq', db.raw(CARD_JSON));
        if (after !== undefined) query.where('seq', '>', after);
        return query;
      },
      (row: Record<string, unknown>) => String(row.seq),
      (row: Record<string, unknown>) => row.card as Card,
    );
    return { ...page, inventory };
  }

  /** GET .../inventories/:inventory/card-stacks: the counted stacks held there (quantity above 0), by card type key. */
  async listStacks(db: Queryable, env: EnvironmentContext, playerId: string, selector: InventorySelector, q: { limit?: number; cursor?: string }): Promise<Page<CardStack> & { inventory: Inventory }> {
    const inventory = await this.economy.resolve(db, env, playerId, selector);
    const page = await keysetPage(
      this.cursors,
      `card-stacks|${env.id}|${inventory.id}`,
      q,
      (after: string | undefined, take) => {
        const query = db('card_stacks').where({ inventory_id: inventory.id }).where('quantity', '>', 0).orderBy('card_type_key').limit(take).select('card_type_key', 'quantity');
        if (after !== undefined) query.where('card_type_key', '>', after);
        return query;
      },
      (row: Record<string, unknown>) => row.card_type_key as string,
      (row: Record<string, unknown>): CardStack => ({ inventoryId: inventory.id, cardTypeKey: row.card_type_key as string, quantity: Number(row.quantity) }),
    );
    return { ...page, inventory };
  }

  /** POST /players/:playerId/cards/grant (server): one card; under a grantKey granted before, the first card (`alreadyGranted`). */
  grant(db: Queryable, env: EnvironmentContext, playerId: string, request: CardGrantRequest, record?: IdempotencyScope): Promise<EngineAnswer<CardGrant>> {
    if (request.data !== undefined) checkData(request.data);
    return runEngineMove(db, env, playerId, 'card-grant', request, record);
  }

  /** POST /players/:playerId/cards/:cardId/consume (server): takes the card away and out of every deck; a second time is `already-consumed`. */
  consume(db: Queryable, env: EnvironmentContext, playerId: string, cardId: string, record?: IdempotencyScope): Promise<EngineAnswer<Card>> {
    return runEngineMove(db, env, playerId, 'card-consume', { cardId }, record);
  }

  /** POST /players/:playerId/card-stacks/grant (server): the type's stack grows by `quantity`. */
  grantStack(db: Queryable, env: EnvironmentContext, playerId: string, request: CardStackRequest, record?: IdempotencyScope): Promise<EngineAnswer<CardStack>> {
    checkQuantity(request.quantity);
    return runEngineMove(db, env, playerId, 'card-stack-grant', request, record);
  }

  /** POST /players/:playerId/card-stacks/consume (server): takes `quantity` from the stack; `insufficient-balance` when it holds fewer. */
  consumeStack(db: Queryable, env: EnvironmentContext, playerId: string, request: CardStackRequest, record?: IdempotencyScope): Promise<EngineAnswer<CardStack>> {
    checkQuantity(request.quantity);
    return runEngineMove(db, env, playerId, 'card-stack-consume', request, record);
  }

  /**
   * POST /players/:playerId/purchases/cards: charges the card type's prices (every one for `all`, the
   * one `payWith` names for `any`) and grants one card or one more of its stack, in one statement
   * (hearth_card_purchase). With `record`, at most once per Idempotency-Key (a retry answers the first
   * purchase, `replayed: true`, `granted: null`). Refusals change nothing.
   */
  buy(db: Queryable, env: EnvironmentContext, playerId: string, request: CardPurchaseRequest, record?: IdempotencyScope): Promise<Purchase<CardGrant | CardStack>> {
    if (request.data !== undefined) checkData(request.data);
    return this.purchases.purchase<CardGrant | CardStack>(db, env, playerId, 'card-purchase', request, record);
  }
}

function checkQuantity(quantity: number): void {
  if (!Number.isInteger(quantity) || quantity < 1 || quantity > CARD_LIMITS.quantityMax) throw refuse.invalid('quantity', `A quantity is a whole number 1 to ${CARD_LIMITS.quantityMax}.`);
}

/** Spec §8: a card's data is at most 1 KB compact. */
function checkData(data: Record<string, unknown>): void {
  const bytes = compactBytes(data);
  if (bytes > CARD_LIMITS.dataBytes) throw refuse.invalid('data', `data is ${bytes} bytes written compactly; at most ${CARD_LIMITS.dataBytes}.`);
}
