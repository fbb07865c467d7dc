import type { Knex } from 'knex';

/**
 * Items players hold (spec §2 Item, Stack (items); §4 Items; docs/economy.md "Items held").
 *
 * - `items`: one-by-one items, each with an id, `data` (the grant's own, at most 1 KB compact: the
 *   code checks compact bytes, the CHECK here is a loose backstop on jsonb's spaced text), an
 *   optional `grant_key` unique per player and item type (granting again under it finds the first),
 *   and `consumed_at` once used, opened or consumed (kept, so a second consumption is refused).
 * - `item_stacks`: counted items, one row per inventory and item type; its row lock serialises every
 *   change of the stack (the upsert takes it whether it makes or finds the row, as balances do).
 * - `item_grant_locks`: one row per inventory and one-by-one item type, locked by every grant of that
 *   type there, so parallel grants cannot both pass `maxOwned` (the count is taken under the lock).
 *
 * They point at item types by key, with NO foreign key: deleting a definition never deletes what
 * players hold. They go with the player (cascade from players and inventories).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE items (
      id text COLLATE "C" PRIMARY KEY,
      seq bigserial NOT NULL UNIQUE,
      environment_id bigint NOT NULL,
      player_id text COLLATE "C" NOT NULL REFERENCES players(id) ON DELETE CASCADE,
      inventory_id text COLLATE "C" NOT NULL REFERENCES inventories(id) ON DELETE CASCADE,
      item_type_key text COLLATE "C" NOT NULL,
      grant_key text COLLATE "C",
      data jsonb NOT NULL DEFAULT '{}'::jsonb CHECK (jsonb_typeof(data) = 'object' AND octet_length(data::text) <= 2048),
      granted_at timestamptz NOT NULL DEFAULT clock_timestamp(),
      consumed_at timestamptz,
      UNIQUE (player_id, item_type_key, grant_key)
    );
    -- The list of what an inventory holds (not yet consumed), in the order granted.
    CREATE INDEX items_held ON items (inventory_id, seq) WHERE consumed_at IS NULL;
    -- maxOwned counts what an inventory holds of one type.
    CREATE INDEX items_held_by_type ON items (inventory_id, item_type_key) WHERE consumed_at IS NULL;
    CREATE INDEX items_by_player ON items (player_id);

    CREATE TABLE item_stacks (
      inventory_id text COLLATE "C" NOT NULL REFERENCES inventories(id) ON DELETE CASCADE,
      item_type_key text COLLATE "C" NOT NULL,
      quantity bigint NOT NULL CHECK (quantity >= 0 AND quantity <= 9007199254740991),
      PRIMARY KEY (inventory_id, item_type_key)
    );

    CREATE TABLE item_grant_locks (
      inventory_id text COLLATE "C" NOT NULL REFERENCES inventories(id) ON DELETE CASCADE,
      item_type_key text COLLATE "C" NOT NULL,
      PRIMARY KEY (inventory_id, item_type_key)
    );
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE item_grant_locks, item_stacks, items');
}
