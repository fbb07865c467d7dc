/**
 * Decks (spec §2 Deck; §4 "Cards and decks"; docs/cards.md "Decks"): a player's named lists of cards
 * in one inventory, each line one card by id or a count of a card type, and their validation.
 *
 * Decks move no value, so they are plain transactions here, not moves of the money engine. Limits
 * stay exact under concurrency: creating a deck holds the player (FOR KEY SHARE: a deletion waits) and
 * takes a transaction-scoped advisory lock of the player's decks before counting them; changing a
 * deck's lines locks the deck row (FOR UPDATE) before counting its lines. A card put in a deck is
 * read FOR SHARE, so a consumption (which takes the card FOR UPDATE, then deletes its lines) either
 * sees the new line or makes the put find the card consumed.
 */
import type { Queryable, Tx } from '../db/knex';
import { inTransaction } from '../db/transaction';
import { Refusal, refuse } from '../errors';
import { randomId } from '../ids';
import { holdExistingPlayer } from '../players/hold';
import { type CursorCodec, type Page, keysetPage } from '../pagination';
import type { EnvironmentContext } from '../tenancy/environments';
import { CARD_LIMITS } from '../contract/card-type';
import type { Deck, DeckEntry, DeckValidation } from '../shapes';
import type { PageRequest } from '../shapes/common';
export type { Deck, DeckEntry, DeckValidation } from '../shapes';

type Problem = DeckValidation['problems'][number];

export class DeckService {
  constructor(private readonly cursors: CursorCodec) {}

  /** GET /players/:playerId/decks: the player's decks in the order made, of one inventory when `inventoryId` is given. */
  async list(db: Queryable, env: EnvironmentContext, playerId: string, q: PageRequest & { inventoryId?: string }): Promise<Page<Deck>> {
    await this.existingPlayer(db, env, playerId);
    const page = await keysetPage(
      this.cursors,
      `decks|${env.id}|${playerId}|${q.inventoryId ?? ''}`,
      q,
      (after: string | undefined, take) => {
        const query = db('decks').where({ player_id: playerId, environment_id: env.id }).orderBy('seq').limit(take).select('*');
        if (q.inventoryId !== undefined) query.where({ inventory_id: q.inventoryId });
        if (after !== undefined) query.where('seq', '>', after);
        return query;
      },
      (row: Record<string, unknown>) => String(row.seq),
      (row: Record<string, unknown>) => row,
    );
    const entries = await entriesOf(
      db,
      page.items.map((row) => row.id as string),
    );
    return { items: page.items.map((row) => deckOf(row, entries.get(row.id as string) ?? [])), next: page.next };
  }

  /** POST /players/:playerId/decks: a new empty deck in one of the player's inventories; `owned-limit` past 50 decks. */
  create(db: Queryable, env: EnvironmentContext, playerId: string, body: { inventoryId: string; name: string }): Promise<Deck> {
    return inTransaction(db, async (trx) => {
      await holdExistingPlayer(trx, env, playerId);
      const inventory = await trx('inventories').where({ id: body.inventoryId, player_id: playerId, environment_id: env.id }).first('id');
      if (!inventory) throw refuse.notFound('The inventory', { key: body.inventoryId, field: 'inventoryId' });
      // Decks of one player are counted one creation at a time.
      await trx.raw('SELECT pg_advisory_xact_lock(hashtextextended(?, 0))', [`decks|${playerId}`]);
      const held = Number((await trx('decks').where({ player_id: playerId }).count({ n: '*' }))[0].n);
      if (held >= CARD_LIMITS.decksPerPlayer) throw ownedLimit(`A player holds at most ${CARD_LIMITS.decksPerPlayer} decks.`, held, CARD_LIMITS.decksPerPlayer);
      const [row] = await trx('decks')
        .insert({ id: randomId(), environment_id: env.id, player_id: playerId, inventory_id: body.inventoryId, name: body.name })
        .returning('*');
      return deckOf(row, []);
    });
  }

  /** GET /players/:playerId/decks/:deckId. */
  async get(db: Queryable, env: EnvironmentContext, playerId: string, deckId: string): Promise<Deck> {
    const row = await deckRow(db, env, playerId, deckId);
    return deckOf(row, (await entriesOf(db, [deckId])).get(deckId) ?? []);
  }

  /** PATCH /players/:playerId/decks/:deckId: a new name. */
  rename(db: Queryable, env: EnvironmentContext, playerId: string, deckId: string, name: string): Promise<Deck> {
    return this.change(db, env, playerId, deckId, async (trx) => {
      await trx('decks').where({ id: deckId }).update({ name });
    });
  }

  /** DELETE /players/:playerId/decks/:deckId: the deck and its lines (the cards stay the player's). */
  delete(db: Queryable, env: EnvironmentContext, playerId: string, deckId: string): Promise<void> {
    return inTransaction(db, async (trx) => {
      await deckRow(trx, env, playerId, deckId, { lock: true });
      await trx('decks').where({ id: deckId }).delete();
    });
  }

  /**
   * PUT /players/:playerId/decks/:deckId/cards/:cardId: the player's card (held in the deck's inventory,
   * not consumed) as a line of the deck; a card already there changes nothing.
   */
  putCard(db: Queryable, env: EnvironmentContext, playerId: string, deckId: string, cardId: string): Promise<Deck> {
    return this.change(db, env, playerId, deckId, async (trx, deck) => {
      const card = await trx('cards')
        .where({ id: cardId, player_id: playerId, environment_id: env.id })
        .forShare()
        .first('inventory_id', 'consumed_at', 'card_type_key');
      if (!card) throw refuse.notFound('The card', { key: cardId, field: 'cardId' });
      if (card.consumed_at !== null)
        throw new Refusal('already-consumed', 'The card was consumed: it cannot be put in a deck.', { cardTypeKey: card.card_type_key });
      if (card.inventory_id !== deck.inventory_id) throw refuse.invalid('cardId', "The card is held in another inventory than the deck's.");
      if (await trx('deck_entries').where({ deck_id: deckId, card_id: cardId }).first('id')) return;
      await addLine(trx, deckId, { card_id: cardId, count: 1 });
    });
  }

  /** DELETE /players/:playerId/decks/:deckId/cards/:cardId: the card's line out of the deck, if it is there. */
  takeCard(db: Queryable, env: EnvironmentContext, playerId: string, deckId: string, cardId: string): Promise<Deck> {
    return this.change(db, env, playerId, deckId, async (trx) => {
      await trx('deck_entries').where({ deck_id: deckId, card_id: cardId }).delete();
    });
  }

  /**
   * PUT /players/:playerId/decks/:deckId/types/:cardTypeKey: the type's line set to `count` (0 removes
   * it). The type must be defined (switched off is allowed: validation reports it).
   */
  setTypeCount(db: Queryable, env: EnvironmentContext, playerId: string, deckId: string, cardTypeKey: string, count: number): Promise<Deck> {
    if (!Number.isInteger(count) || count < 0 || count > CARD_LIMITS.lineCountMax)
      throw refuse.invalid('count', `A count is a whole number 0 to ${CARD_LIMITS.lineCountMax}.`);
    return this.change(db, env, playerId, deckId, async (trx) => {
      if (!(await trx('card_types').where({ environment_id: env.id, key: cardTypeKey }).first('key')))
        throw refuse.notFound('The card type', { key: cardTypeKey, field: 'cardTypeKey' });
      if (count === 0) {
        await trx('deck_entries').where({ deck_id: deckId, card_type_key: cardTypeKey }).delete();
        return;
      }
      const updated = await trx('deck_entries').where({ deck_id: deckId, card_type_key: cardTypeKey }).update({ count });
      if (updated === 0) await addLine(trx, deckId, { card_type_key: cardTypeKey, count });
    });
  }

  /**
   * GET /players/:playerId/decks/:deckId/validation: the deck's size (every card it counts) and its
   * problems: `size` (past `maxSize`), `per-type-limit` (a type counted past its perDeckLimit),
   * `not-owned` (a type line asks more cards than the deck's inventory holds beyond the deck's own
   * card lines; never for a starter type), `unknown-card-type`, `disabled-card-type`.
   */
  async validate(db: Queryable, env: EnvironmentContext, playerId: string, deckId: string, maxSize?: number): Promise<DeckValidation> {
    const deck = await this.get(db, env, playerId, deckId);
    const cardTypes = new Map<string, string>();
    if (deck.entries.some((e) => e.cardId !== null)) {
      const rows = await db('cards')
        .whereIn(
          'id',
          deck.entries.flatMap((e) => (e.cardId === null ? [] : [e.cardId])),
        )
        .select('id', 'card_type_key');
      for (const row of rows) cardTypes.set(row.id, row.card_type_key);
    }
    // What the deck counts of each type: its type line and its card lines.
    const counted = new Map<string, { line: number; cards: number }>();
    for (const entry of deck.entries) {
      const type = entry.cardTypeKey ?? cardTypes.get(entry.cardId ?? '');
      if (type === undefined) continue;
      const c = counted.get(type) ?? { line: 0, cards: 0 };
      if (entry.cardId === null) c.line += entry.count;
      else c.cards += 1;
      counted.set(type, c);
    }
    const ordered = [...counted].sort(([a], [b]) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
    const keys = ordered.map(([type]) => type);
    const definitions = new Map<string, { enabled: boolean; starter: boolean; per_deck_limit: number | null }>();
    for (const row of await db('card_types').where({ environment_id: env.id }).whereIn('key', keys).select('key', 'enabled', 'starter', 'per_deck_limit'))
      definitions.set(row.key, row);
    const held = new Map<string, number>();
    for (const row of await db('card_stacks').where({ inventory_id: deck.inventoryId }).whereIn('card_type_key', keys).select('card_type_key', 'quantity')) {
      held.set(row.card_type_key, Number(row.quantity));
    }
    const cardsHeld = await db('cards')
      .where({ inventory_id: deck.inventoryId })
      .whereNull('consumed_at')
      .whereIn('card_type_key', keys)
      .groupBy('card_type_key')
      .select('card_type_key')
      .count({ n: '*' });
    for (const row of cardsHeld as { card_type_key: string; n: string }[]) held.set(row.card_type_key, (held.get(row.card_type_key) ?? 0) + Number(row.n));

    const size = deck.entries.reduce((sum, e) => sum + e.count, 0);
    const problems: Problem[] = [];
    if (maxSize !== undefined && size > maxSize) problems.push({ code: 'size', message: `The deck counts ${size} cards; at most ${maxSize}.` });
    for (const [key, { line, cards }] of ordered) {
      const definition = definitions.get(key);
      if (!definition) {
        problems.push({ code: 'unknown-card-type', message: `The card type ${key} is not defined.`, cardTypeKey: key });
        continue;
      }
      if (!definition.enabled) problems.push({ code: 'disabled-card-type', message: `The card type ${key} is switched off.`, cardTypeKey: key });
      if (definition.per_deck_limit !== null && line + cards > definition.per_deck_limit) {
        problems.push({
          code: 'per-type-limit',
          message: `The deck counts ${line + cards} of ${key}; at most ${definition.per_deck_limit}.`,
          cardTypeKey: key,
        });
      }
      const spare = (held.get(key) ?? 0) - cards;
      if (line > 0 && !definition.starter && line > spare) {
        problems.push({
          code: 'not-owned',
          message: `The deck asks ${line} more of ${key}; the inventory holds ${Math.max(spare, 0)} beyond the deck's own cards.`,
          cardTypeKey: key,
        });
      }
    }
    return { valid: problems.length === 0, size, problems };
  }

  /** One change of a deck's lines or name, under the deck's row lock; answers the deck after. */
  private change(
    db: Queryable,
    env: EnvironmentContext,
    playerId: string,
    deckId: string,
    work: (trx: Tx, deck: Record<string, any>) => Promise<void>,
  ): Promise<Deck> {
    return inTransaction(db, async (trx) => {
      const deck = await deckRow(trx, env, playerId, deckId, { lock: true });
      await work(trx, deck);
      const after = await trx('decks').where({ id: deckId }).first();
      return deckOf(after, (await entriesOf(trx, [deckId])).get(deckId) ?? []);
    });
  }

  private async existingPlayer(db: Queryable, env: EnvironmentContext, playerId: string): Promise<void> {
    if (!(await db('players').where({ id: playerId, environment_id: env.id }).first('id')))
      throw refuse.notFound('The player', { key: playerId, field: 'playerId' });
  }
}

/** The player's deck (its row locked FOR UPDATE with `lock`), or not-found (another player's deck, of another environment). */
async function deckRow(
  db: Queryable,
  env: EnvironmentContext,
  playerId: string,
  deckId: string,
  options: { lock?: boolean } = {},
): Promise<Record<string, any>> {
  const query = db('decks').where({ id: deckId, player_id: playerId, environment_id: env.id }).first();
  if (options.lock) query.forUpdate();
  const row = await query;
  if (!row) throw refuse.notFound('The deck', { key: deckId, field: 'deckId' });
  return row;
}

/** A new line, within the deck's 200 (the deck row is locked by the caller). */
async function addLine(trx: Tx, deckId: string, line: { card_id?: string; card_type_key?: string; count: number }): Promise<void> {
  const lines = Number((await trx('deck_entries').where({ deck_id: deckId }).count({ n: '*' }))[0].n);
  if (lines >= CARD_LIMITS.deckLines) throw ownedLimit(`A deck holds at most ${CARD_LIMITS.deckLines} lines.`, lines, CARD_LIMITS.deckLines);
  await trx('deck_entries').insert({ id: randomId(), deck_id: deckId, ...line });
}

function ownedLimit(message: string, held: number, limit: number): Refusal {
  return new Refusal('owned-limit', message, { held, requested: 1, limit });
}

async function entriesOf(db: Queryable, deckIds: string[]): Promise<Map<string, DeckEntry[]>> {
  const byDeck = new Map<string, DeckEntry[]>();
  if (deckIds.length === 0) return byDeck;
  const rows = await db('deck_entries').whereIn('deck_id', deckIds).orderBy('seq').select('*');
  for (const row of rows) {
    const list = byDeck.get(row.deck_id) ?? [];
    list.push({ id: row.id, cardId: row.card_id ?? null, cardTypeKey: row.card_type_key ?? null, count: Number(row.count) });
    byDeck.set(row.deck_id, list);
  }
  return byDeck;
}

function deckOf(row: Record<string, any>, entries: DeckEntry[]): Deck {
  return { id: row.id, inventoryId: row.inventory_id, name: row.name, entries };
}
