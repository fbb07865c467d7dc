import type { Knex } from 'knex';

/**
 * Player saves (spec §2 Save, §4 "Player saves", §8): JSON slots per player with versioned writes,
 * and the usage figures the quotas are checked against. The figures are counters on the rows whose
 * locks every save write already takes (environment → player → slot, docs/saves.md), updated in the
 * same transaction as the slot, so they never drift from the slots and a quota check reads one row.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE player_saves (
      player_id text COLLATE "C" NOT NULL REFERENCES players(id) ON DELETE CASCADE,
      key text COLLATE "C" NOT NULL,
      -- no foreign key: the player's own cascades it, and a write then takes no key-share lock on the environment
      environment_id bigint NOT NULL,
      version bigint NOT NULL CHECK (version > 0),
      -- the compact JSON text's length in UTF-8 bytes: what the quotas count
      size_bytes integer NOT NULL CHECK (size_bytes > 0),
      -- json, not jsonb: a save reads back exactly as written (key order, duplicate keys, \\u0000 kept)
      data json NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (player_id, key)
    );

    -- Sums of size_bytes, kept in step under the rows' locks; never below zero even if a path forgot to give back.
    ALTER TABLE players ADD COLUMN save_bytes bigint NOT NULL DEFAULT 0 CHECK (save_bytes >= 0);
    ALTER TABLE environments ADD COLUMN player_save_bytes bigint NOT NULL DEFAULT 0 CHECK (player_save_bytes >= 0);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE environments DROP COLUMN player_save_bytes;
    ALTER TABLE players DROP COLUMN save_bytes;
    DROP TABLE player_saves;
  `);
}
