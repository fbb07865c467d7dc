import type { Knex } from 'knex';

/**
 * Cards and decks (spec §2 Card, Deck, Stack (cards); §4 "Cards and decks"; docs/cards.md).
 *
 * - `card_types`, `card_templates`: the definitions CardType and CardTemplate manifests write (owner =
 *   `namespace/name` of the document), keyed by (environment, key). Nothing held refers to them by a
 *   foreign key: deleting a definition never takes players' cards with it.
 * - `cards`: cards held one by one, each with an id, its type, an optional template, `data` (at most
 *   1 KB compact: the code checks compact bytes, the CHECK is a loose backstop on jsonb's spaced
 *   text), an optional `grant_key` unique per player and card type (granting again under it finds the
 *   first), and `consumed_at` once taken away (kept, so a second consumption is refused).
 * - `card_stacks`: counted cards, one row per inventory and card type; its row lock serialises every
 *   change of the stack, as item stacks do.
 * - `decks` and `deck_entries`: a player's decks, each in one inventory, and their lines: one card by
 *   id, or a count of a card type. A line naming a card goes when the card is consumed (the engine's
 *   card consumption deletes it in the same statement) or deleted (the foreign key's cascade).
 *
 * Everything a player holds goes with the player (cascade from players and inventories).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE card_types (
      environment_id bigint NOT NULL REFERENCES environments(id) ON DELETE CASCADE,
      key text COLLATE "C" NOT NULL,
      owner text NOT NULL UNIQUE,
      name text NOT NULL,
      description text NOT NULL,
      enabled boolean NOT NULL,
      per_deck_limit integer CHECK (per_deck_limit >= 1),
      starter boolean NOT NULL,
      purchasable boolean NOT NULL,
      price_rule text NOT NULL CHECK (price_rule IN ('all', 'any')),
      prices jsonb NOT NULL,
      data jsonb NOT NULL,
      PRIMARY KEY (environment_id, key)
    );

    CREATE TABLE card_templates (
      environment_id bigint NOT NULL REFERENCES environments(id) ON DELETE CASCADE,
      key text COLLATE "C" NOT NULL,
      owner text NOT NULL UNIQUE,
      name text NOT NULL,
      description text NOT NULL,
      enabled boolean NOT NULL,
      data jsonb NOT NULL,
      PRIMARY KEY (environment_id, key)
    );

    CREATE TABLE cards (
      id text COLLATE "C" PRIMARY KEY,
      seq bigserial NOT NULL UNIQUE,
      environment_id bigint NOT NULL,
      player_id text COLLATE "C" NOT NULL REFERENCES players(id) ON DELETE CASCADE,
      inventory_id text COLLATE "C" NOT NULL REFERENCES inventories(id) ON DELETE CASCADE,
      card_type_key text COLLATE "C" NOT NULL,
      card_template_key text COLLATE "C",
      grant_key text COLLATE "C",
      data jsonb NOT NULL DEFAULT '{}'::jsonb CHECK (jsonb_typeof(data) = 'object' AND octet_length(data::text) <= 2048),
      granted_at timestamptz NOT NULL DEFAULT clock_timestamp(),
      consumed_at timestamptz,
      UNIQUE (player_id, card_type_key, grant_key)
    );
    -- The list of what an inventory holds (not yet consumed), in the order granted.
    CREATE INDEX cards_held ON cards (inventory_id, seq) WHERE consumed_at IS NULL;
    CREATE INDEX cards_by_player ON cards (player_id);

    CREATE TABLE card_stacks (
      inventory_id text COLLATE "C" NOT NULL REFERENCES inventories(id) ON DELETE CASCADE,
      card_type_key text COLLATE "C" NOT NULL,
      quantity bigint NOT NULL CHECK (quantity >= 0 AND quantity <= 9007199254740991),
      PRIMARY KEY (inventory_id, card_type_key)
    );

    CREATE TABLE decks (
      id text COLLATE "C" PRIMARY KEY,
      seq bigserial NOT NULL UNIQUE,
      environment_id bigint NOT NULL,
      player_id text COLLATE "C" NOT NULL REFERENCES players(id) ON DELETE CASCADE,
      inventory_id text COLLATE "C" NOT NULL REFERENCES inventories(id) ON DELETE CASCADE,
      name text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT clock_timestamp()
    );
    CREATE INDEX decks_of_player ON decks (player_id, seq);

    CREATE TABLE deck_entries (
      id text COLLATE "C" PRIMARY KEY,
      seq bigserial NOT NULL UNIQUE,
      deck_id text COLLATE "C" NOT NULL REFERENCES decks(id) ON DELETE CASCADE,
      card_id text COLLATE "C" REFERENCES cards(id) ON DELETE CASCADE,
      card_type_key text COLLATE "C",
      count integer NOT NULL CHECK (count >= 1 AND count <= 1000),
      CHECK ((card_id IS NULL) <> (card_type_key IS NULL)),
      UNIQUE (deck_id, card_id),
      UNIQUE (deck_id, card_type_key)
    );
    -- A consumed card leaves every deck: found by card.
    CREATE INDEX deck_entries_by_card ON deck_entries (card_id) WHERE card_id IS NOT NULL;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE deck_entries, decks, card_stacks, cards, card_templates, card_types');
}
