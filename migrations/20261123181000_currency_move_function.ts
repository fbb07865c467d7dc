import type { Knex } from 'knex';

/**
 * A currency move as one statement (docs/economy.md "Moves", "Performance"): `hearth_currency_move`
 * reads the currency, holds the player's row FOR KEY SHARE, chooses (and makes) the inventory, locks
 * the balance row by its upsert, checks, writes the new figure and appends the ledger entry, in the
 * lock order of docs/economy.md. One round trip instead of seven, so the balance row lock, which
 * serializes one balance's moves, is held only while the database runs the rest of the statement and
 * the caller's last two round trips (the idempotency record's answer, COMMIT), never across the move's
 * own client round trips.
 *
 * It runs inside the caller's transaction (the idempotency record's): a refusal answers an outcome
 * and the service throws, rolling back what the statement made (an inventory, a balance row at 0), so
 * a refusal writes nothing. Outcomes, in the service's order of checks: `currency-not-found`,
 * `wrong-kind`, `disabled`, `player-not-found`, `both-choices`, `inventory-not-found`,
 * `realm-not-found`, `no-current-realm`, `held-on-account` / `held-per-realm` (the place named does
 * not fit the currency's scope), `insufficient-balance`,
 * `allowance-exceeded`, `balance-cap`, then `moved`.
 *
 * `hearth_realm_open` and `hearth_current_realm` are what "open" and "current" mean (docs/economy.md
 * "Realms"), written here once for this function and RealmService.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE FUNCTION hearth_realm_open(p_enabled boolean, p_start_at timestamptz, p_end_at timestamptz) RETURNS boolean
    LANGUAGE sql STABLE AS $fn$
      SELECT p_enabled AND p_start_at <= now() AND (p_end_at IS NULL OR p_end_at > now())
    $fn$;

    CREATE FUNCTION hearth_current_realm(p_environment_id bigint) RETURNS text
    LANGUAGE sql STABLE AS $fn$
      SELECT r.key FROM realms r
      WHERE r.environment_id = p_environment_id AND hearth_realm_open(r.enabled, r.start_at, r.end_at)
      ORDER BY r.start_at DESC, r.number DESC LIMIT 1
    $fn$;

    CREATE FUNCTION hearth_currency_move(
      p_environment_id bigint,
      p_player_id text,
      p_currency_key text,
      p_kind text,            -- credit | debit | refund | consume
      p_amount bigint,
      p_allowance bigint,     -- consume only
      p_reason text,
      p_reference text,
      p_inventory_id text,    -- the body's inventoryId, or NULL
      p_realm_given boolean,  -- the body named realmId (p_realm_key NULL: the account)
      p_realm_key text,
      p_new_inventory_id text, -- the id an inventory made now takes
      p_max_balance bigint     -- no figure passes it, whatever the definition says
    ) RETURNS TABLE (outcome text, currency_kind text, held bigint, cap bigint, inventory_id text, ledger_id bigint, change bigint, balance_after bigint)
    LANGUAGE plpgsql AS $fn$
    #variable_conflict use_column
    DECLARE
      c currencies%ROWTYPE;
      v_cap bigint;
      v_realm text;
      v_inventory text;
      v_realm_of_inventory text;
      v_held bigint;
      v_change bigint;
      v_entry bigint;
    BEGIN
      SELECT * INTO c FROM currencies WHERE environment_id = p_environment_id AND key = p_currency_key;
      IF NOT FOUND THEN
        RETURN QUERY SELECT 'currency-not-found', NULL::text, NULL::bigint, NULL::bigint, NULL::text, NULL::bigint, NULL::bigint, NULL::bigint;
        RETURN;
      END IF;
      v_cap := least(coalesce(c.max, p_max_balance), p_max_balance);
      -- credit and debit move balance currencies, consume consumed ones, refund either.
      IF c.kind <> (CASE p_kind WHEN 'consume' THEN 'consumed' WHEN 'refund' THEN c.kind ELSE 'balance' END) THEN
        RETURN QUERY SELECT 'wrong-kind', c.kind, NULL::bigint, v_cap, NULL::text, NULL::bigint, NULL::bigint, NULL::bigint;
        RETURN;
      END IF;
      IF NOT c.enabled THEN
        RETURN QUERY SELECT 'disabled', c.kind, NULL::bigint, v_cap, NULL::text, NULL::bigint, NULL::bigint, NULL::bigint;
        RETURN;
      END IF;
      -- Lock order: the player's row (deletion, FOR UPDATE, waits) → the inventory → the balance row.
      PERFORM 1 FROM players WHERE id = p_player_id AND environment_id = p_environment_id FOR KEY SHARE;
      IF NOT FOUND THEN
        RETURN QUERY SELECT 'player-not-found', c.kind, NULL::bigint, v_cap, NULL::text, NULL::bigint, NULL::bigint, NULL::bigint;
        RETURN;
      END IF;
      IF p_inventory_id IS NOT NULL AND p_realm_given THEN
        RETURN QUERY SELECT 'both-choices', c.kind, NULL::bigint, v_cap, NULL::text, NULL::bigint, NULL::bigint, NULL::bigint;
        RETURN;
      END IF;
      IF p_inventory_id IS NOT NULL THEN
        SELECT i.id, i.realm_key INTO v_inventory, v_realm_of_inventory FROM inventories i
          WHERE i.id = p_inventory_id AND i.player_id = p_player_id AND i.environment_id = p_environment_id;
        IF NOT FOUND THEN
          RETURN QUERY SELECT 'inventory-not-found', c.kind, NULL::bigint, v_cap, NULL::text, NULL::bigint, NULL::bigint, NULL::bigint;
          RETURN;
        END IF;
      ELSE
        IF p_realm_given THEN
          v_realm := p_realm_key;
          IF v_realm IS NOT NULL AND NOT EXISTS (SELECT 1 FROM realms r WHERE r.environment_id = p_environment_id AND r.key = v_realm) THEN
            RETURN QUERY SELECT 'realm-not-found', c.kind, NULL::bigint, v_cap, NULL::text, NULL::bigint, NULL::bigint, NULL::bigint;
            RETURN;
          END IF;
        ELSIF c.scope = 'realm' THEN
          v_realm := hearth_current_realm(p_environment_id);
          IF v_realm IS NULL THEN
            RETURN QUERY SELECT 'no-current-realm', c.kind, NULL::bigint, v_cap, NULL::text, NULL::bigint, NULL::bigint, NULL::bigint;
            RETURN;
          END IF;
        END IF;
        -- Made once whoever races: the insert waits for a concurrent maker, and the next statement
        -- (a new snapshot in this function) sees what it made.
        INSERT INTO inventories (id, environment_id, player_id, realm_key) VALUES (p_new_inventory_id, p_environment_id, p_player_id, v_realm)
          ON CONFLICT (player_id, realm_key) DO NOTHING RETURNING id INTO v_inventory;
        IF v_inventory IS NULL THEN
          SELECT i.id INTO v_inventory FROM inventories i WHERE i.player_id = p_player_id AND i.realm_key IS NOT DISTINCT FROM v_realm;
        END IF;
        v_realm_of_inventory := v_realm;
      END IF;
      -- An account currency is held only on the account inventory, a per-realm one only in realms.
      IF (v_realm_of_inventory IS NULL) <> (c.scope = 'account') THEN
        RETURN QUERY SELECT CASE c.scope WHEN 'account' THEN 'held-on-account' ELSE 'held-per-realm' END, c.kind, NULL::bigint, v_cap, NULL::text, NULL::bigint, NULL::bigint, NULL::bigint;
        RETURN;
      END IF;
      -- The balance row, made at 0 when missing, locked either way until the transaction ends.
      INSERT INTO balances AS b (inventory_id, currency_key, amount) VALUES (v_inventory, c.key, 0)
        ON CONFLICT (inventory_id, currency_key) DO UPDATE SET amount = b.amount
        RETURNING b.amount INTO v_held;
      -- What lowers the figure: a debit, and a refund of a consumed currency (what was spent goes down).
      IF p_kind = 'debit' OR (p_kind = 'refund' AND c.kind = 'consumed') THEN
        IF v_held < p_amount THEN
          RETURN QUERY SELECT 'insufficient-balance', c.kind, v_held, v_cap, v_inventory, NULL::bigint, NULL::bigint, NULL::bigint;
          RETURN;
        END IF;
        v_change := -p_amount;
      ELSE
        IF p_kind = 'consume' AND v_held + p_amount > p_allowance THEN
          RETURN QUERY SELECT 'allowance-exceeded', c.kind, v_held, v_cap, v_inventory, NULL::bigint, NULL::bigint, NULL::bigint;
          RETURN;
        END IF;
        IF v_held + p_amount > v_cap THEN
          RETURN QUERY SELECT 'balance-cap', c.kind, v_held, v_cap, v_inventory, NULL::bigint, NULL::bigint, NULL::bigint;
          RETURN;
        END IF;
        v_change := p_amount;
      END IF;
      UPDATE balances SET amount = v_held + v_change WHERE balances.inventory_id = v_inventory AND currency_key = c.key;
      INSERT INTO ledger_entries (environment_id, player_id, inventory_id, currency_key, amount, balance_after, reason, reference)
        VALUES (p_environment_id, p_player_id, v_inventory, c.key, v_change, v_held + v_change, p_reason, p_reference)
        RETURNING id INTO v_entry;
      RETURN QUERY SELECT 'moved', c.kind, v_held, v_cap, v_inventory, v_entry, v_change, v_held + v_change;
    END
    $fn$;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP FUNCTION hearth_currency_move(bigint, text, text, text, bigint, bigint, text, text, text, boolean, text, text, bigint);
    DROP FUNCTION hearth_current_realm(bigint);
    DROP FUNCTION hearth_realm_open(boolean, timestamptz, timestamptz);
  `);
}
