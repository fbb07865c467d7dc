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
import type { CursorCodec } from '../pagination';
import type { EnvironmentContext } from '../tenancy/environments';
import type { EconomyService, InventoryChoice } from '../economy/service';
import { type Sender, type SenderRule, checkSender } from '../economy/senders';
import type { Purchase, PurchaseService } from '../items/purchases';
import { HeldGoodsPages, type HeldPageRead, checkData, checkQuantity } from '../items/held-goods';
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

/** A card's template and data, and an allowance, are the game server's word: never a player's own. */
const PURCHASE_SENDERS: SenderRule<CardPurchaseRequest> = { serverOnly: ['cardTemplateKey', 'data', 'allowances'] };

/** A move of a counted card stack by `quantity` (1 to CARD_LIMITS.quantityMax, checked alike for both). */
function cardStackMove(kind: 'card-stack-grant' | 'card-stack-consume') {
  return async (
    db: Queryable,
    env: EnvironmentContext,
    playerId: string,
    request: CardStackRequest,
    record?: IdempotencyScope,
  ): Promise<EngineAnswer<CardStack>> => {
    checkQuantity(request.quantity, CARD_LIMITS.quantityMax);
    return runEngineMove(db, env, playerId, kind, request, record);
  };
}

export class CardService {
  /** GET .../inventories/:inventory/cards: the cards held there one by one and not consumed, in the order granted. */
  readonly listCards: HeldPageRead<Card>;
  /** GET .../inventories/:inventory/card-stacks: the counted stacks held there (quantity above 0), by card type key. */
  readonly listStacks: HeldPageRead<CardStack>;

  constructor(
    cursors: CursorCodec,
    economy: EconomyService,
    private readonly purchases: PurchaseService,
  ) {
    const pages = new HeldGoodsPages(cursors, economy);
    this.listCards = pages.held('card');
    this.listStacks = pages.stacks('card', (inventory, cardTypeKey, quantity): CardStack => ({ inventoryId: inventory.id, cardTypeKey, quantity }));
  }

  /** POST /players/:playerId/cards/grant (server): one card; under a grantKey granted before, the first card (`alreadyGranted`). */
  async grant(
    db: Queryable,
    env: EnvironmentContext,
    playerId: string,
    request: CardGrantRequest,
    record?: IdempotencyScope,
  ): Promise<EngineAnswer<CardGrant>> {
    if (request.data !== undefined) checkData(request.data, CARD_LIMITS.dataBytes);
    return runEngineMove(db, env, playerId, 'card-grant', request, record);
  }

  /** POST /players/:playerId/cards/:cardId/consume (server): takes the card away and out of every deck; a second time is `already-consumed`. */
  consume(db: Queryable, env: EnvironmentContext, playerId: string, cardId: string, record?: IdempotencyScope): Promise<EngineAnswer<Card>> {
    return runEngineMove(db, env, playerId, 'card-consume', { cardId }, record);
  }

  /** POST /players/:playerId/card-stacks/grant (server): the type's stack grows by `quantity`. */
  readonly grantStack = cardStackMove('card-stack-grant');

  /** POST /players/:playerId/card-stacks/consume (server): takes `quantity` from the stack; `insufficient-balance` when it holds fewer. */
  readonly consumeStack = cardStackMove('card-stack-consume');

  /**
   * POST /players/:playerId/purchases/cards: charges the card type's prices (every one for `all`, the
   * one `payWith` names for `any`) and grants one card or one more of its stack, in one statement
   * (hearth_card_purchase). With `record`, at most once per Idempotency-Key (a retry answers the first
   * purchase, `replayed: true`, `granted: null`). `by` is who sent it: a player's token may not send
   * a template, data or allowances (`forbidden`). Refusals change nothing.
   */
  async buy(
    db: Queryable,
    env: EnvironmentContext,
    playerId: string,
    request: CardPurchaseRequest,
    by: Sender,
    record?: IdempotencyScope,
  ): Promise<Purchase<CardGrant | CardStack>> {
    checkSender(PURCHASE_SENDERS, by, env, request);
    if (request.data !== undefined) checkData(request.data, CARD_LIMITS.dataBytes);
    return this.purchases.purchase<CardGrant | CardStack>(db, env, playerId, 'card-purchase', request, record);
  }
}
