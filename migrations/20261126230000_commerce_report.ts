import type { Knex } from 'knex';

/**
 * The store's report (docs/commerce.md "Background reconciliation", "Refunds and chargebacks"):
 *
 * - `commerce_report_cursors`: per project that sells through a store, where the next GetReport
 *   starts (`position`, the store's time of the last order applied) and when a read last reached the
 *   report's end (`read_through`, what the cursor-lag metric measures from). Moved only after the
 *   orders read were applied; reading the same orders again changes nothing.
 * - `commerce_orders.store_checked_at`: when the background job last asked the store about an open
 *   order, so each tick asks the ones asked longest ago (bounded work, every open order in turn).
 * - `commerce_order_item_grants`: the items an order's grant made (the inventory, the quantity of a
 *   counted stack, the ids of one-by-one items), written with the grant: what a take-back takes.
 * - `commerce_take_back_shortfalls`: what a refund or chargeback could not take back (the player had
 *   already spent the currency, used the items), for support.
 * - `hearth_commerce_take_back`: a new kind of move of the money engine (`commerce-take-back`, a new
 *   branch of `hearth_move`, under the engine's one idempotency protocol): every currency an order's
 *   grant credited, read from its ledger entries (reason `commerce`, reference the order), is taken
 *   back from the balance it went to, as a ledger entry of its own (reason `commerce-refund` or
 *   `commerce-chargeback`); a balance lower than what was given is taken down to zero, never below,
 *   and the rest is recorded as a shortfall. Items likewise: a counted stack down to zero at most,
 *   one-by-one items consumed unless already consumed.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE commerce_report_cursors (
      project_id bigint PRIMARY KEY REFERENCES projects(id) ON DELETE CASCADE,
      position timestamptz NOT NULL,
      read_through timestamptz,
      updated_at timestamptz NOT NULL DEFAULT now()
    );

    ALTER TABLE commerce_orders ADD COLUMN store_checked_at timestamptz;
    CREATE INDEX commerce_orders_open ON commerce_orders (environment_id, (coalesce(store_checked_at, created_at))) WHERE status IN ('pending', 'awaiting-player');

    CREATE TABLE commerce_order_item_grants (
      order_id text COLLATE "C" NOT NULL REFERENCES commerce_orders(id) ON DELETE CASCADE,
      item_type_key text COLLATE "C" NOT NULL,
      inventory_id text COLLATE "C" NOT NULL REFERENCES inventories(id) ON DELETE CASCADE,
      quantity bigint NOT NULL CHECK (quantity > 0),
      -- One-by-one items: their ids; NULL for a counted stack.
      item_ids text[],
      PRIMARY KEY (order_id, item_type_key)
    );

    CREATE TABLE commerce_take_back_shortfalls (
      id bigserial PRIMARY KEY,
      environment_id bigint NOT NULL,
      player_id text COLLATE "C" NOT NULL REFERENCES players(id) ON DELETE CASCADE,
      order_id text COLLATE "C" NOT NULL REFERENCES commerce_orders(id) ON DELETE CASCADE,
      currency_key text COLLATE "C",
      item_type_key text COLLATE "C",
      inventory_id text COLLATE "C",
      owed bigint NOT NULL CHECK (owed > 0),
      taken bigint NOT NULL CHECK (taken >= 0 AND taken < owed),
      reason text NOT NULL,
      at timestamptz NOT NULL DEFAULT now(),
      CHECK ((currency_key IS NULL) <> (item_type_key IS NULL))
    );
    CREATE INDEX commerce_take_back_shortfalls_player ON commerce_take_back_shortfalls (player_id, at);

    -- An order's grant taken back (a refund or a chargeback in the store's report). Lock order as every
    -- move: the player, then each balance the grant credited in (inventory, currency) order:
    -- least(held, given) taken as one ledger entry; then the items the grant made (its record in
    -- commerce_order_item_grants): a counted stack down by least(held, given), one-by-one items consumed
    -- unless already consumed. What could not be taken is recorded as a shortfall
    -- (docs/commerce.md "Refunds and chargebacks").
    CREATE FUNCTION hearth_commerce_take_back(p_environment_id bigint, p_player_id text, p_request jsonb) RETURNS jsonb
    LANGUAGE plpgsql AS $fn$
    DECLARE
      v_order text := p_request->>'orderId';
      v_reason text := p_request->>'reason';
      g record;
      it record;
      v_consumed bigint;
      v_items jsonb := '[]'::jsonb;
      v_held bigint;
      v_taken bigint;
      v_entry bigint;
      v_currencies jsonb := '[]'::jsonb;
    BEGIN
      PERFORM 1 FROM hearth_hold_player(p_environment_id, p_player_id);
      IF NOT FOUND THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', 'player-not-found'));
      END IF;
      -- What the grant credited, as its ledger entries say (never the product as it reads now).
      FOR g IN
        SELECT le.inventory_id, le.currency_key, sum(le.amount)::bigint AS given FROM ledger_entries le
          WHERE le.player_id = p_player_id AND le.environment_id = p_environment_id AND le.reason = 'commerce' AND le.reference = v_order AND le.amount > 0
          GROUP BY le.inventory_id, le.currency_key
          ORDER BY le.inventory_id, le.currency_key
      LOOP
        SELECT b.amount INTO v_held FROM balances b WHERE b.inventory_id = g.inventory_id AND b.currency_key = g.currency_key FOR UPDATE;
        v_held := coalesce(v_held, 0);
        v_taken := least(v_held, g.given);
        v_entry := NULL;
        IF v_taken > 0 THEN
          UPDATE balances SET amount = v_held - v_taken WHERE inventory_id = g.inventory_id AND currency_key = g.currency_key;
          INSERT INTO ledger_entries (environment_id, player_id, inventory_id, currency_key, amount, balance_after, reason, reference)
            VALUES (p_environment_id, p_player_id, g.inventory_id, g.currency_key, -v_taken, v_held - v_taken, v_reason, v_order)
            RETURNING id INTO v_entry;
        END IF;
        IF v_taken < g.given THEN
          INSERT INTO commerce_take_back_shortfalls (environment_id, player_id, order_id, currency_key, inventory_id, owed, taken, reason)
            VALUES (p_environment_id, p_player_id, v_order, g.currency_key, g.inventory_id, g.given, v_taken, v_reason);
        END IF;
        v_currencies := v_currencies || jsonb_build_object('currencyKey', g.currency_key, 'inventoryId', g.inventory_id, 'given', g.given,
          'taken', v_taken, 'shortfall', g.given - v_taken, 'balanceAfter', v_held - v_taken, 'transactionId', v_entry::text);
      END LOOP;
      FOR it IN
        SELECT * FROM commerce_order_item_grants oig WHERE oig.order_id = v_order ORDER BY oig.inventory_id, oig.item_type_key
      LOOP
        IF it.item_ids IS NULL THEN
          SELECT s.quantity INTO v_held FROM item_stacks s WHERE s.inventory_id = it.inventory_id AND s.item_type_key = it.item_type_key FOR UPDATE;
          v_taken := least(coalesce(v_held, 0), it.quantity);
          IF v_taken > 0 THEN
            UPDATE item_stacks SET quantity = v_held - v_taken WHERE inventory_id = it.inventory_id AND item_type_key = it.item_type_key;
          END IF;
        ELSE
          -- In the items' order (seq), as every move that locks several items.
          WITH taken AS (
            UPDATE items SET consumed_at = clock_timestamp()
              WHERE id IN (SELECT i.id FROM items i WHERE i.id = ANY (it.item_ids) AND i.player_id = p_player_id AND i.consumed_at IS NULL ORDER BY i.seq FOR UPDATE)
              RETURNING 1
          )
          SELECT count(*) INTO v_consumed FROM taken;
          v_taken := v_consumed;
        END IF;
        IF v_taken < it.quantity THEN
          INSERT INTO commerce_take_back_shortfalls (environment_id, player_id, order_id, item_type_key, inventory_id, owed, taken, reason)
            VALUES (p_environment_id, p_player_id, v_order, it.item_type_key, it.inventory_id, it.quantity, v_taken, v_reason);
        END IF;
        v_items := v_items || jsonb_build_object('itemTypeKey', it.item_type_key, 'inventoryId', it.inventory_id, 'given', it.quantity,
          'taken', v_taken, 'shortfall', it.quantity - v_taken);
      END LOOP;
      RETURN jsonb_build_object('orderId', v_order, 'currencies', v_currencies, 'items', v_items, 'replayed', false);
    END
    $fn$;

    CREATE OR REPLACE FUNCTION hearth_move(p_environment_id bigint, p_player_id text, p_kind text, p_request jsonb, p_max_balance bigint) RETURNS jsonb
    LANGUAGE plpgsql AS $fn$
    DECLARE
      m record;
    BEGIN
      CASE p_kind
        WHEN 'credit', 'debit', 'refund', 'consume' THEN
          SELECT * INTO m FROM hearth_currency_move(p_environment_id, p_player_id, p_request->>'currencyKey', p_kind,
            (p_request->>'amount')::bigint, (p_request->>'allowance')::bigint, p_request->>'reason', p_request->>'reference',
            p_request->>'inventoryId', p_request->'realmId' IS NOT NULL, p_request->>'realmId', p_max_balance);
          RETURN hearth_movement(m, p_request->>'currencyKey', p_kind, (p_request->>'amount')::bigint, (p_request->>'allowance')::bigint,
            CASE WHEN p_request->'inventoryId' IS NOT NULL THEN 'inventoryId' ELSE 'realmId' END);
        WHEN 'item-purchase' THEN
          RETURN hearth_item_purchase(p_environment_id, p_player_id, p_request, p_max_balance);
        WHEN 'item-grant' THEN
          RETURN hearth_item_grant(p_environment_id, p_player_id, p_request, p_max_balance);
        WHEN 'item-consume' THEN
          RETURN hearth_item_consume(p_environment_id, p_player_id, p_request, false);
        WHEN 'item-use' THEN
          RETURN hearth_item_consume(p_environment_id, p_player_id, p_request, true);
        WHEN 'stack-consume' THEN
          RETURN hearth_stack_consume(p_environment_id, p_player_id, p_request, false);
        WHEN 'stack-use' THEN
          RETURN hearth_stack_consume(p_environment_id, p_player_id, p_request, true);
        WHEN 'item-open' THEN
          RETURN hearth_item_open(p_environment_id, p_player_id, p_request, p_max_balance);
        -- cards
        WHEN 'card-grant' THEN
          RETURN hearth_card_grant(p_environment_id, p_player_id, p_request);
        WHEN 'card-consume' THEN
          RETURN hearth_card_consume(p_environment_id, p_player_id, p_request);
        WHEN 'card-stack-grant' THEN
          RETURN hearth_card_stack_grant(p_environment_id, p_player_id, p_request, p_max_balance);
        WHEN 'card-stack-consume' THEN
          RETURN hearth_card_stack_consume(p_environment_id, p_player_id, p_request);
        WHEN 'card-purchase' THEN
          RETURN hearth_card_purchase(p_environment_id, p_player_id, p_request, p_max_balance);
        -- progression
        WHEN 'skill-node-unlock' THEN
          RETURN hearth_skill_node_unlock(p_environment_id, p_player_id, p_request, p_max_balance);
        -- commerce
        WHEN 'commerce-take-back' THEN
          RETURN hearth_commerce_take_back(p_environment_id, p_player_id, p_request);
      END CASE;
    END
    $fn$;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE OR REPLACE FUNCTION hearth_move(p_environment_id bigint, p_player_id text, p_kind text, p_request jsonb, p_max_balance bigint) RETURNS jsonb
    LANGUAGE plpgsql AS $fn$
    DECLARE
      m record;
    BEGIN
      CASE p_kind
        WHEN 'credit', 'debit', 'refund', 'consume' THEN
          SELECT * INTO m FROM hearth_currency_move(p_environment_id, p_player_id, p_request->>'currencyKey', p_kind,
            (p_request->>'amount')::bigint, (p_request->>'allowance')::bigint, p_request->>'reason', p_request->>'reference',
            p_request->>'inventoryId', p_request->'realmId' IS NOT NULL, p_request->>'realmId', p_max_balance);
          RETURN hearth_movement(m, p_request->>'currencyKey', p_kind, (p_request->>'amount')::bigint, (p_request->>'allowance')::bigint,
            CASE WHEN p_request->'inventoryId' IS NOT NULL THEN 'inventoryId' ELSE 'realmId' END);
        WHEN 'item-purchase' THEN
          RETURN hearth_item_purchase(p_environment_id, p_player_id, p_request, p_max_balance);
        WHEN 'item-grant' THEN
          RETURN hearth_item_grant(p_environment_id, p_player_id, p_request, p_max_balance);
        WHEN 'item-consume' THEN
          RETURN hearth_item_consume(p_environment_id, p_player_id, p_request, false);
        WHEN 'item-use' THEN
          RETURN hearth_item_consume(p_environment_id, p_player_id, p_request, true);
        WHEN 'stack-consume' THEN
          RETURN hearth_stack_consume(p_environment_id, p_player_id, p_request, false);
        WHEN 'stack-use' THEN
          RETURN hearth_stack_consume(p_environment_id, p_player_id, p_request, true);
        WHEN 'item-open' THEN
          RETURN hearth_item_open(p_environment_id, p_player_id, p_request, p_max_balance);
        -- cards
        WHEN 'card-grant' THEN
          RETURN hearth_card_grant(p_environment_id, p_player_id, p_request);
        WHEN 'card-consume' THEN
          RETURN hearth_card_consume(p_environment_id, p_player_id, p_request);
        WHEN 'card-stack-grant' THEN
          RETURN hearth_card_stack_grant(p_environment_id, p_player_id, p_request, p_max_balance);
        WHEN 'card-stack-consume' THEN
          RETURN hearth_card_stack_consume(p_environment_id, p_player_id, p_request);
        WHEN 'card-purchase' THEN
          RETURN hearth_card_purchase(p_environment_id, p_player_id, p_request, p_max_balance);
        -- progression
        WHEN 'skill-node-unlock' THEN
          RETURN hearth_skill_node_unlock(p_environment_id, p_player_id, p_request, p_max_balance);
      END CASE;
    END
    $fn$;
    DROP FUNCTION hearth_commerce_take_back(bigint, text, jsonb);
    DROP TABLE commerce_take_back_shortfalls;
    DROP TABLE commerce_order_item_grants;
    DROP INDEX commerce_orders_open;
    ALTER TABLE commerce_orders DROP COLUMN store_checked_at;
    DROP TABLE commerce_report_cursors;
  `);
}
