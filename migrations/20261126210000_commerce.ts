import type { Knex } from 'knex';

/**
 * Commerce (docs/commerce.md): products sold through the project's store, the store account a player
 * proved (identify), the identify attempts the per-player limit counts, orders and entitlements.
 *
 * - `commerce_products`: one row per Product document (environment, sku); `definition` is the spec as
 *   the domain reads it.
 * - `commerce_store_accounts`: the store id the store's answer to a ticket named (never one a client
 *   sent), and the wallet currency, country and purchase status GetUserInfo gave.
 * - `commerce_identify_attempts`: one row per identify that reached the store, counted per clock window.
 * - `commerce_orders`: made before the store hears of it; `store_order_id` is the uint64 the store
 *   knows it by, as decimal digits (unique: the store keys a transaction by it). At most one order per
 *   player and product is open at once (`order-in-progress`). `finalize_claimed_at` is who may call
 *   FinalizeTxn: the one claim that moved it (docs/commerce.md "Exactly once").
 * - `commerce_entitlements`: what a completed order gave; UNIQUE (order_id) is the grant's exactly-once.
 *   Each is also a grant for the game's servers (GET /commerce/grants) until a server acknowledges it.
 * - `commerce_grant_changes`: the environment's feed of grants given and revoked, in commit order of
 *   its `seq` per environment (GET /commerce/grants/changes).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE commerce_products (
      environment_id bigint NOT NULL REFERENCES environments(id) ON DELETE CASCADE,
      sku text COLLATE "C" NOT NULL,
      owner text COLLATE "C" NOT NULL,
      definition jsonb NOT NULL,
      PRIMARY KEY (environment_id, sku)
    );
    CREATE INDEX commerce_products_owner ON commerce_products (owner);

    CREATE TABLE commerce_store_accounts (
      player_id text COLLATE "C" PRIMARY KEY REFERENCES players(id) ON DELETE CASCADE,
      environment_id bigint NOT NULL,
      provider text NOT NULL,
      store_id text COLLATE "C" NOT NULL CHECK (store_id ~ '^[1-9][0-9]{0,19}$'),
      country text NOT NULL,
      currency text NOT NULL,
      purchase_status text NOT NULL,
      identified_at timestamptz NOT NULL DEFAULT now()
    );

    CREATE TABLE commerce_identify_attempts (
      player_id text COLLATE "C" NOT NULL REFERENCES players(id) ON DELETE CASCADE,
      at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX commerce_identify_attempts_player ON commerce_identify_attempts (player_id, at);

    CREATE TABLE commerce_orders (
      id text COLLATE "C" PRIMARY KEY,
      environment_id bigint NOT NULL,
      player_id text COLLATE "C" NOT NULL REFERENCES players(id) ON DELETE CASCADE,
      provider text NOT NULL,
      store_order_id text COLLATE "C" NOT NULL UNIQUE CHECK (store_order_id ~ '^[1-9][0-9]{0,19}$' AND store_order_id::numeric < 18446744073709551616),
      store_trans_id text,
      store_id text NOT NULL,
      sku text COLLATE "C" NOT NULL,
      currency text NOT NULL,
      amount bigint NOT NULL,
      language text NOT NULL,
      status text NOT NULL CHECK (status IN ('pending', 'awaiting-player', 'completed', 'failed', 'refunded', 'chargedback')),
      finalize_claimed_at timestamptz,
      idempotency_key text,
      idempotency_fingerprint text,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE UNIQUE INDEX commerce_orders_one_open ON commerce_orders (player_id, sku) WHERE status IN ('pending', 'awaiting-player');
    CREATE UNIQUE INDEX commerce_orders_idempotency ON commerce_orders (player_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
    CREATE INDEX commerce_orders_player ON commerce_orders (player_id, created_at, id);

    CREATE TABLE commerce_entitlements (
      id text COLLATE "C" PRIMARY KEY,
      environment_id bigint NOT NULL,
      player_id text COLLATE "C" NOT NULL REFERENCES players(id) ON DELETE CASCADE,
      key text COLLATE "C" NOT NULL,
      sku text COLLATE "C" NOT NULL,
      order_id text COLLATE "C" NOT NULL UNIQUE REFERENCES commerce_orders(id) ON DELETE CASCADE,
      status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'revoked')),
      granted_at timestamptz NOT NULL DEFAULT now(),
      revoked_at timestamptz,
      acknowledged_at timestamptz
    );
    CREATE INDEX commerce_entitlements_player ON commerce_entitlements (player_id, granted_at, id);
    CREATE INDEX commerce_entitlements_unacknowledged ON commerce_entitlements (environment_id, granted_at, id) WHERE acknowledged_at IS NULL;

    CREATE TABLE commerce_grant_changes (
      seq bigserial PRIMARY KEY,
      environment_id bigint NOT NULL REFERENCES environments(id) ON DELETE CASCADE,
      entitlement_id text COLLATE "C" NOT NULL REFERENCES commerce_entitlements(id) ON DELETE CASCADE,
      change text NOT NULL CHECK (change IN ('granted', 'revoked')),
      at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX commerce_grant_changes_feed ON commerce_grant_changes (environment_id, seq);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TABLE commerce_grant_changes;
    DROP TABLE commerce_entitlements;
    DROP TABLE commerce_orders;
    DROP TABLE commerce_identify_attempts;
    DROP TABLE commerce_store_accounts;
    DROP TABLE commerce_products;
  `);
}
