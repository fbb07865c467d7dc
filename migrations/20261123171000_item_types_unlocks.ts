import type { Knex } from 'knex';

/**
 * Item type definitions (spec §2 item type definition, §4 Definitions; written by ItemType manifests,
 * owner = `namespace/name` of the document) and players' unlocks (spec §2 Unlock, §4 Progression).
 *
 * An item type is updated in place (never deleted and inserted again), so what refers to it by
 * (environment_id, key) sees one row for its whole life. Nothing held refers to it by a foreign key:
 * a deleted definition must never take players' items with it (docs/economy.md).
 *
 * A player's unlocks go with the player (ON DELETE CASCADE is the whole deletion step). The primary
 * key makes the first record stand: a second PUT of the same key finds it and inserts nothing.
 * Keys compare in byte order (COLLATE "C"), so `key LIKE 'prefix%'` walks the primary key's index.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE item_types (
      environment_id bigint NOT NULL REFERENCES environments(id) ON DELETE CASCADE,
      key text COLLATE "C" NOT NULL,
      owner text NOT NULL UNIQUE,
      name text NOT NULL,
      description text NOT NULL,
      icon text,
      category text COLLATE "C" NOT NULL,
      ownership text NOT NULL CHECK (ownership IN ('one-by-one', 'counted')),
      scope text NOT NULL CHECK (scope IN ('account', 'realm')),
      enabled boolean NOT NULL,
      usable boolean NOT NULL,
      purchasable boolean NOT NULL,
      max_owned bigint CHECK (max_owned >= 1),
      price_rule text NOT NULL CHECK (price_rule IN ('all', 'any')),
      prices jsonb NOT NULL,
      data jsonb NOT NULL,
      contents jsonb,
      requires jsonb NOT NULL,
      updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
      PRIMARY KEY (environment_id, key)
    );

    CREATE TABLE player_unlocks (
      player_id text COLLATE "C" NOT NULL REFERENCES players(id) ON DELETE CASCADE,
      environment_id bigint NOT NULL,
      key text COLLATE "C" NOT NULL,
      source text NOT NULL,
      unlocked_at timestamptz NOT NULL DEFAULT clock_timestamp(),
      PRIMARY KEY (player_id, key)
    );
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE player_unlocks, item_types');
}
