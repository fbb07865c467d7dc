import type { Knex } from 'knex';

/**
 * Realms, currencies, players' inventories, balances and the ledger (spec §2 Game-service shapes,
 * §4 Realms and inventories, Currency moves; docs/economy.md).
 *
 * Realms and currencies are content written by their manifests (owner = `namespace/name`), keyed by
 * (environment, key). A player's inventories, balances and ledger entries go with the player (ON
 * DELETE CASCADE from players). They point at realms and currencies by key and without a foreign
 * key: deleting a definition never deletes what players hold, and putting it back finds it again.
 *
 * Money-like figures are bigint. A balance row holds the stored figure of one currency in one
 * inventory: what is held (balance currencies) or what has been spent (consumed ones); it is never
 * negative and never past 2^53-1, so it always reaches clients as an exact JSON number. Every change
 * of a balance writes a ledger entry with the balance after, in the same transaction.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE realms (
      environment_id bigint NOT NULL REFERENCES environments(id) ON DELETE CASCADE,
      key text COLLATE "C" NOT NULL,
      owner text NOT NULL UNIQUE,
      number integer NOT NULL CHECK (number >= 0),
      name text NOT NULL,
      enabled boolean NOT NULL,
      visible boolean NOT NULL,
      start_at timestamptz NOT NULL,
      end_at timestamptz CHECK (end_at IS NULL OR end_at > start_at),
      PRIMARY KEY (environment_id, key),
      UNIQUE (environment_id, number)
    );

    CREATE TABLE currencies (
      environment_id bigint NOT NULL REFERENCES environments(id) ON DELETE CASCADE,
      key text COLLATE "C" NOT NULL,
      owner text NOT NULL UNIQUE,
      name text NOT NULL,
      description text,
      icon text,
      scope text NOT NULL CHECK (scope IN ('account', 'realm')),
      kind text NOT NULL CHECK (kind IN ('balance', 'consumed')),
      max bigint CHECK (max IS NULL OR max >= 0),
      enabled boolean NOT NULL,
      PRIMARY KEY (environment_id, key)
    );

    -- One inventory per player per place: the account (realm_key NULL) or one realm. Items,
    -- containers and purchases join it later by inventory_id.
    CREATE TABLE inventories (
      id text COLLATE "C" PRIMARY KEY,
      seq bigserial NOT NULL UNIQUE,
      environment_id bigint NOT NULL REFERENCES environments(id) ON DELETE CASCADE,
      player_id text COLLATE "C" NOT NULL REFERENCES players(id) ON DELETE CASCADE,
      realm_key text COLLATE "C",
      created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
      UNIQUE NULLS NOT DISTINCT (player_id, realm_key)
    );
    CREATE INDEX inventories_listed ON inventories (player_id, seq);

    CREATE TABLE balances (
      inventory_id text COLLATE "C" NOT NULL REFERENCES inventories(id) ON DELETE CASCADE,
      currency_key text COLLATE "C" NOT NULL,
      amount bigint NOT NULL CHECK (amount >= 0 AND amount <= 9007199254740991),
      PRIMARY KEY (inventory_id, currency_key)
    );

    -- The ledger: append-only; a correction is a new entry, never an edit. id orders it (newest first
    -- = id descending).
    CREATE TABLE ledger_entries (
      id bigserial PRIMARY KEY,
      environment_id bigint NOT NULL,
      player_id text COLLATE "C" NOT NULL REFERENCES players(id) ON DELETE CASCADE,
      inventory_id text COLLATE "C" NOT NULL REFERENCES inventories(id) ON DELETE CASCADE,
      currency_key text COLLATE "C" NOT NULL,
      amount bigint NOT NULL CHECK (amount <> 0),
      balance_after bigint NOT NULL CHECK (balance_after >= 0),
      reason text COLLATE "C" NOT NULL,
      reference text,
      created_at timestamptz NOT NULL DEFAULT clock_timestamp()
    );
    CREATE INDEX ledger_by_player ON ledger_entries (player_id, id DESC);
    CREATE INDEX ledger_by_currency ON ledger_entries (player_id, currency_key, id DESC);
    CREATE INDEX ledger_by_inventory ON ledger_entries (inventory_id, id DESC);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE ledger_entries, balances, inventories, currencies, realms');
}
