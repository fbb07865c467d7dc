import type { Knex } from 'knex';

/**
 * The items' moves join the money engine (docs/architecture.md "Money engine", docs/economy.md
 * "Items held", "Using and opening"): a grant, a consumption (of an item, of a stack), a use (of
 * an item, of a stack) and the opening of a container are kinds of `hearth_move`, so each is one statement under the engine's one
 * idempotency protocol (`hearth_idempotent_move`) and refuses through its one table of words.
 *
 * - `hearth_item_json`: an Item (spec §2) as the API answers it, for every answer that holds items
 *   (the engine's and the list reads'), so a record keeps the answer as answered.
 * - `hearth_grant_items` now answers the grant as the API does (ItemGrant).
 * - `hearth_first_grant`, `hearth_take_from_stack`, `hearth_check_unlocked`, `hearth_check_usable`:
 *   the rules the kinds share, once.
 * - `hearth_random_below`: a uniform draw from PostgreSQL's strong random source (gen_random_uuid),
 *   for the weighted picks of an opening: no draw can be predicted from earlier ones.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE FUNCTION hearth_item_json(i items) RETURNS jsonb
    LANGUAGE sql STABLE AS $fn$
      SELECT jsonb_build_object('id', i.id, 'inventoryId', i.inventory_id, 'itemTypeKey', i.item_type_key, 'grantKey', i.grant_key,
        'consumedAt', to_char(i.consumed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'data', i.data)
    $fn$;

    -- The first grant under (player, type, grantKey), answered as a grant; NULL when there is none.
    CREATE FUNCTION hearth_first_grant(p_player_id text, p_item_type_key text, p_grant_key text) RETURNS jsonb
    LANGUAGE sql STABLE AS $fn$
      SELECT jsonb_build_object('inventoryId', i.inventory_id, 'itemTypeKey', i.item_type_key, 'stack', NULL,
        'items', jsonb_build_array(hearth_item_json(i)), 'alreadyGranted', true)
      FROM items i WHERE i.player_id = p_player_id AND i.item_type_key = p_item_type_key AND i.grant_key = p_grant_key
    $fn$;

    CREATE OR REPLACE FUNCTION hearth_grant_items(
      p_environment_id bigint,
      p_player_id text,
      p_inventory_id text,
      t item_types,
      p_quantity bigint,
      p_grant_key text,
      p_data jsonb,
      p_max_balance bigint
    ) RETURNS jsonb
    LANGUAGE plpgsql AS $fn$
    DECLARE
      v_limit bigint := coalesce(t.max_owned, p_max_balance);
      v_after bigint;
      v_held bigint;
      v_items jsonb;
      v_first jsonb;
    BEGIN
      IF t.ownership = 'counted' THEN
        -- Up to the most it may hold (maxOwned, and never past 2^53-1). Refused, it changed nothing;
        -- the lock it took stays.
        INSERT INTO item_stacks AS s (inventory_id, item_type_key, quantity) VALUES (p_inventory_id, t.key, p_quantity)
          ON CONFLICT (inventory_id, item_type_key) DO UPDATE SET quantity = s.quantity + EXCLUDED.quantity
          WHERE s.quantity + EXCLUDED.quantity <= v_limit
          RETURNING s.quantity INTO v_after;
        IF v_after IS NULL THEN
          SELECT s.quantity INTO v_held FROM item_stacks s WHERE s.inventory_id = p_inventory_id AND s.item_type_key = t.key;
        ELSIF v_after > v_limit THEN
          -- A new stack made with more than it may hold: the refusal rolls it back.
          v_held := v_after - p_quantity;
        ELSE
          RETURN jsonb_build_object('inventoryId', p_inventory_id, 'itemTypeKey', t.key,
            'stack', jsonb_build_object('itemTypeKey', t.key, 'quantity', v_after), 'items', '[]'::jsonb, 'alreadyGranted', false);
        END IF;
        PERFORM hearth_refuse(jsonb_build_object('outcome', 'owned-limit', 'itemTypeKey', t.key, 'held', v_held, 'requested', p_quantity, 'limit', v_limit));
      END IF;

      INSERT INTO item_grant_locks (inventory_id, item_type_key) VALUES (p_inventory_id, t.key)
        ON CONFLICT (inventory_id, item_type_key) DO UPDATE SET item_type_key = EXCLUDED.item_type_key;
      -- Under the lock a new statement sees every grant of this type here that committed before us.
      IF p_grant_key IS NOT NULL THEN
        v_first := hearth_first_grant(p_player_id, t.key, p_grant_key);
        IF v_first IS NOT NULL THEN
          RETURN v_first;
        END IF;
      END IF;
      IF t.max_owned IS NOT NULL THEN
        SELECT count(*) INTO v_held FROM items i WHERE i.inventory_id = p_inventory_id AND i.item_type_key = t.key AND i.consumed_at IS NULL;
        IF v_held + p_quantity > t.max_owned THEN
          PERFORM hearth_refuse(jsonb_build_object('outcome', 'owned-limit', 'itemTypeKey', t.key, 'held', v_held, 'requested', p_quantity, 'limit', v_limit));
        END IF;
      END IF;
      -- A grantKey granted in another inventory in parallel: the unique index makes this insert wait for it, then insert nothing.
      WITH made AS (
        INSERT INTO items (id, environment_id, player_id, inventory_id, item_type_key, grant_key, data)
          SELECT hearth_random_id(), p_environment_id, p_player_id, p_inventory_id, t.key, p_grant_key, coalesce(p_data, '{}'::jsonb)
          FROM generate_series(1, p_quantity)
          ON CONFLICT (player_id, item_type_key, grant_key) DO NOTHING
          RETURNING *
      )
      SELECT jsonb_agg(hearth_item_json(made) ORDER BY made.seq) INTO v_items FROM made;
      IF v_items IS NULL THEN
        RETURN hearth_first_grant(p_player_id, t.key, p_grant_key);
      END IF;
      RETURN jsonb_build_object('inventoryId', p_inventory_id, 'itemTypeKey', t.key, 'stack', NULL, 'items', v_items, 'alreadyGranted', false);
    END
    $fn$;

    -- POST /players/:playerId/items/grant (spec §4 Items): the checks in the order docs/economy.md gives.
    CREATE FUNCTION hearth_item_grant(p_environment_id bigint, p_player_id text, p_request jsonb, p_max_balance bigint) RETURNS jsonb
    LANGUAGE plpgsql AS $fn$
    DECLARE
      t item_types%ROWTYPE;
      v_quantity bigint := coalesce((p_request->>'quantity')::bigint, 1);
      v_grant_key text := p_request->>'grantKey';
      v_first jsonb;
      v_home record;
    BEGIN
      SELECT * INTO t FROM item_types WHERE environment_id = p_environment_id AND key = p_request->>'itemTypeKey' FOR SHARE;
      IF NOT FOUND THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', 'item-type-not-found'));
      END IF;
      IF t.ownership = 'counted' AND v_grant_key IS NOT NULL THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', 'grant-key-counted', 'itemTypeKey', t.key));
      END IF;
      IF t.ownership = 'counted' AND p_request->'data' IS NOT NULL THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', 'data-counted', 'itemTypeKey', t.key));
      END IF;
      IF v_grant_key IS NOT NULL AND v_quantity <> 1 THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', 'grant-key-quantity', 'itemTypeKey', t.key));
      END IF;
      PERFORM 1 FROM hearth_hold_player(p_environment_id, p_player_id);
      IF NOT FOUND THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', 'player-not-found'));
      END IF;
      -- Granted before under this key: the first grant is the answer, whatever has changed since.
      IF v_grant_key IS NOT NULL THEN
        v_first := hearth_first_grant(p_player_id, t.key, v_grant_key);
        IF v_first IS NOT NULL THEN
          RETURN v_first;
        END IF;
      END IF;
      IF NOT t.enabled THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', 'item-type-disabled', 'itemTypeKey', t.key));
      END IF;
      SELECT * INTO v_home FROM hearth_choose_inventory(p_environment_id, p_player_id, t.scope,
        p_request->>'inventoryId', p_request->'realmId' IS NOT NULL, p_request->>'realmId');
      IF v_home.outcome <> 'chosen' THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', v_home.outcome, 'itemTypeKey', t.key,
          'field', CASE WHEN p_request->'inventoryId' IS NOT NULL THEN 'inventoryId' ELSE 'realmId' END));
      END IF;
      RETURN hearth_grant_items(p_environment_id, p_player_id, v_home.inventory_id, t, v_quantity, v_grant_key, p_request->'data', p_max_balance);
    END
    $fn$;

    -- Takes p_quantity from a counted stack under its row lock; insufficient-balance when fewer are held.
    CREATE FUNCTION hearth_take_from_stack(p_inventory_id text, p_item_type_key text, p_quantity bigint) RETURNS jsonb
    LANGUAGE plpgsql AS $fn$
    DECLARE
      v_held bigint;
    BEGIN
      SELECT s.quantity INTO v_held FROM item_stacks s WHERE s.inventory_id = p_inventory_id AND s.item_type_key = p_item_type_key FOR UPDATE;
      v_held := coalesce(v_held, 0);
      IF v_held < p_quantity THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', 'insufficient-balance', 'itemTypeKey', p_item_type_key, 'held', v_held, 'requested', p_quantity));
      END IF;
      UPDATE item_stacks SET quantity = v_held - p_quantity WHERE inventory_id = p_inventory_id AND item_type_key = p_item_type_key;
      RETURN jsonb_build_object('itemTypeKey', p_item_type_key, 'quantity', v_held - p_quantity);
    END
    $fn$;

    -- locked when the player lacks an unlock the type requires (details.missing, in the type's order).
    CREATE FUNCTION hearth_check_unlocked(p_player_id text, t item_types) RETURNS void
    LANGUAGE plpgsql AS $fn$
    DECLARE
      v_missing jsonb;
    BEGIN
      SELECT jsonb_agg(r.key ORDER BY r.n) INTO v_missing
        FROM jsonb_array_elements_text(t.requires) WITH ORDINALITY AS r(key, n)
        WHERE NOT EXISTS (SELECT 1 FROM player_unlocks u WHERE u.player_id = p_player_id AND u.key = r.key);
      IF v_missing IS NOT NULL THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', 'locked', 'itemTypeKey', t.key, 'missing', v_missing));
      END IF;
    END
    $fn$;

    -- Use's rules: the type defined and usable (not-usable), switched on (disabled), its unlocks held (locked).
    CREATE FUNCTION hearth_check_usable(p_player_id text, p_item_type_key text, t item_types) RETURNS void
    LANGUAGE plpgsql AS $fn$
    BEGIN
      IF t.key IS NULL THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', 'no-longer-defined', 'itemTypeKey', p_item_type_key));
      END IF;
      IF NOT t.usable THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', 'not-usable', 'itemTypeKey', t.key));
      END IF;
      IF NOT t.enabled THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', 'item-type-disabled', 'itemTypeKey', t.key));
      END IF;
      PERFORM hearth_check_unlocked(p_player_id, t);
    END
    $fn$;

    -- The player's item by id, its row locked until the transaction ends (consumptions of one item run
    -- one after another); not-found, or already-consumed.
    CREATE FUNCTION hearth_lock_unconsumed_item(p_environment_id bigint, p_player_id text, p_item_id text) RETURNS items
    LANGUAGE plpgsql AS $fn$
    DECLARE
      i items%ROWTYPE;
    BEGIN
      SELECT * INTO i FROM items WHERE id = p_item_id AND player_id = p_player_id AND environment_id = p_environment_id FOR UPDATE;
      IF NOT FOUND THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', 'item-not-found'));
      END IF;
      IF i.consumed_at IS NOT NULL THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', 'already-consumed', 'itemTypeKey', i.item_type_key, 'consumedAt', hearth_item_json(i)->'consumedAt'));
      END IF;
      RETURN i;
    END
    $fn$;

    -- Consume or use one item by id (p_use: use's rules first); answers the item, consumed.
    CREATE FUNCTION hearth_item_consume(p_environment_id bigint, p_player_id text, p_request jsonb, p_use boolean) RETURNS jsonb
    LANGUAGE plpgsql AS $fn$
    DECLARE
      i items%ROWTYPE;
      t item_types%ROWTYPE;
    BEGIN
      PERFORM 1 FROM hearth_hold_player(p_environment_id, p_player_id);
      IF NOT FOUND THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', 'player-not-found'));
      END IF;
      i := hearth_lock_unconsumed_item(p_environment_id, p_player_id, p_request->>'itemId');
      IF p_use THEN
        SELECT * INTO t FROM item_types WHERE environment_id = p_environment_id AND key = i.item_type_key FOR SHARE;
        PERFORM hearth_check_usable(p_player_id, i.item_type_key, t);
      END IF;
      UPDATE items SET consumed_at = clock_timestamp() WHERE id = i.id RETURNING * INTO i;
      RETURN CASE WHEN p_use THEN jsonb_build_object('itemTypeKey', i.item_type_key, 'item', hearth_item_json(i))
        ELSE jsonb_build_object('item', hearth_item_json(i)) END;
    END
    $fn$;

    -- Consume p_request.quantity from a counted stack, or use one of it (p_use: use's rules first).
    CREATE FUNCTION hearth_stack_consume(p_environment_id bigint, p_player_id text, p_request jsonb, p_use boolean) RETURNS jsonb
    LANGUAGE plpgsql AS $fn$
    DECLARE
      t item_types%ROWTYPE;
      v_home record;
      v_stack jsonb;
    BEGIN
      SELECT * INTO t FROM item_types WHERE environment_id = p_environment_id AND key = p_request->>'itemTypeKey' FOR SHARE;
      IF NOT FOUND THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', 'item-type-not-found'));
      END IF;
      IF t.ownership <> 'counted' THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', 'held-one-by-one', 'itemTypeKey', t.key));
      END IF;
      PERFORM 1 FROM hearth_hold_player(p_environment_id, p_player_id);
      IF NOT FOUND THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', 'player-not-found'));
      END IF;
      IF p_use THEN
        PERFORM hearth_check_usable(p_player_id, t.key, t);
      END IF;
      SELECT * INTO v_home FROM hearth_choose_inventory(p_environment_id, p_player_id, t.scope,
        p_request->>'inventoryId', p_request->'realmId' IS NOT NULL, p_request->>'realmId');
      IF v_home.outcome <> 'chosen' THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', v_home.outcome, 'itemTypeKey', t.key,
          'field', CASE WHEN p_request->'inventoryId' IS NOT NULL THEN 'inventoryId' ELSE 'realmId' END));
      END IF;
      v_stack := hearth_take_from_stack(v_home.inventory_id, t.key, CASE WHEN p_use THEN 1 ELSE coalesce((p_request->>'quantity')::bigint, 1) END);
      RETURN CASE WHEN p_use THEN jsonb_build_object('itemTypeKey', t.key, 'item', NULL) ELSE jsonb_build_object('stack', v_stack) END;
    END
    $fn$;

    -- A uniform integer in [0, p_below) (p_below ≤ 2^48), by rejection over 48 random bits of a version 4 uuid.
    CREATE FUNCTION hearth_random_below(p_below bigint) RETURNS bigint
    LANGUAGE plpgsql VOLATILE AS $fn$
    DECLARE
      v_span constant bigint := 281474976710656; -- 2^48
      v_limit bigint := v_span - v_span % p_below;
      v_value bigint;
    BEGIN
      LOOP
        v_value := ('x' || substr(replace(gen_random_uuid()::text, '-', ''), 1, 12))::bit(48)::bigint;
        IF v_value < v_limit THEN
          RETURN v_value % p_below;
        END IF;
      END LOOP;
    END
    $fn$;

    -- POST /players/:playerId/items/:itemId/open: the container consumed and its contents granted in
    -- one statement (docs/economy.md "Using and opening"): every type the contents name is checked,
    -- drawn or not; the contents go in item-type-key order (the lock order of stacks and grant locks).
    CREATE FUNCTION hearth_item_open(p_environment_id bigint, p_player_id text, p_request jsonb, p_max_balance bigint) RETURNS jsonb
    LANGUAGE plpgsql AS $fn$
    DECLARE
      i items%ROWTYPE;
      c item_types%ROWTYPE;
      t item_types%ROWTYPE;
      v_key text;
      v_pick jsonb;
      v_entry jsonb;
      v_total bigint;
      v_ticket bigint;
      v_drawn jsonb := '{}'::jsonb;
      v_home_realm text;
      v_place record;
      v_inventory text;
      v_quantity bigint;
      v_granted jsonb := '[]'::jsonb;
    BEGIN
      PERFORM 1 FROM hearth_hold_player(p_environment_id, p_player_id);
      IF NOT FOUND THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', 'player-not-found'));
      END IF;
      i := hearth_lock_unconsumed_item(p_environment_id, p_player_id, p_request->>'itemId');
      SELECT * INTO c FROM item_types WHERE environment_id = p_environment_id AND key = i.item_type_key FOR SHARE;
      IF NOT FOUND OR c.category <> 'container' OR c.contents IS NULL OR jsonb_typeof(c.contents) <> 'object' THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', 'not-a-container', 'itemTypeKey', i.item_type_key));
      END IF;
      IF NOT c.enabled THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', 'item-type-disabled', 'itemTypeKey', c.key));
      END IF;
      PERFORM hearth_check_unlocked(p_player_id, c);
      -- Whether a container opens must not depend on the draw.
      FOR v_key IN
        SELECT k.key FROM (
          SELECT g->>'itemTypeKey' AS key FROM jsonb_array_elements(c.contents->'grants') g
          UNION SELECT e->>'itemTypeKey' FROM jsonb_array_elements(c.contents->'picks') p, jsonb_array_elements(p->'from') e
        ) k ORDER BY k.key COLLATE "C"
      LOOP
        SELECT * INTO t FROM item_types WHERE environment_id = p_environment_id AND key = v_key FOR SHARE;
        IF NOT FOUND OR NOT t.enabled THEN
          PERFORM hearth_refuse(jsonb_build_object('outcome', 'contents-unusable', 'container', c.key, 'itemTypeKey', v_key,
            'state', CASE WHEN FOUND THEN 'switched off' ELSE 'not defined' END));
        END IF;
      END LOOP;

      UPDATE items SET consumed_at = clock_timestamp() WHERE id = i.id RETURNING * INTO i;
      -- Every fixed grant, and each pick's count independent draws: an entry comes up with
      -- probability weight / the sum of the pick's weights. Quantities of one type add up.
      FOR v_entry IN SELECT g FROM jsonb_array_elements(c.contents->'grants') g LOOP
        v_drawn := jsonb_set(v_drawn, ARRAY[v_entry->>'itemTypeKey'], to_jsonb(coalesce((v_drawn->>(v_entry->>'itemTypeKey'))::bigint, 0) + (v_entry->>'quantity')::bigint));
      END LOOP;
      FOR v_pick IN SELECT p FROM jsonb_array_elements(c.contents->'picks') p LOOP
        SELECT sum((e->>'weight')::bigint) INTO v_total FROM jsonb_array_elements(v_pick->'from') e;
        FOR n IN 1..(v_pick->>'count')::int LOOP
          v_ticket := hearth_random_below(v_total);
          FOR v_entry IN SELECT e FROM jsonb_array_elements(v_pick->'from') e LOOP
            v_ticket := v_ticket - (v_entry->>'weight')::bigint;
            IF v_ticket < 0 THEN
              v_drawn := jsonb_set(v_drawn, ARRAY[v_entry->>'itemTypeKey'], to_jsonb(coalesce((v_drawn->>(v_entry->>'itemTypeKey'))::bigint, 0) + (v_entry->>'quantity')::bigint));
              EXIT;
            END IF;
          END LOOP;
        END LOOP;
      END LOOP;

      SELECT inv.realm_key INTO v_home_realm FROM inventories inv WHERE inv.id = i.inventory_id;
      FOR v_key, v_quantity IN SELECT d.key, d.value::bigint FROM jsonb_each_text(v_drawn) d ORDER BY d.key COLLATE "C" LOOP
        SELECT * INTO t FROM item_types WHERE environment_id = p_environment_id AND key = v_key;
        -- Into the container's inventory when the content's scope allows that place, else where its scope puts it.
        IF (v_home_realm IS NULL) = (t.scope = 'account') THEN
          v_inventory := i.inventory_id;
        ELSE
          SELECT * INTO v_place FROM hearth_choose_inventory(p_environment_id, p_player_id, t.scope, NULL, false, NULL);
          IF v_place.outcome <> 'chosen' THEN
            PERFORM hearth_refuse(jsonb_build_object('outcome', v_place.outcome, 'itemTypeKey', t.key));
          END IF;
          v_inventory := v_place.inventory_id;
        END IF;
        v_granted := v_granted || (hearth_grant_items(p_environment_id, p_player_id, v_inventory, t, v_quantity, NULL, NULL, p_max_balance) - 'alreadyGranted');
      END LOOP;
      RETURN jsonb_build_object('itemTypeKey', i.item_type_key, 'item', hearth_item_json(i), 'granted', v_granted);
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
      END CASE;
    END
    $fn$;
  `);
}

export async function down(): Promise<void> {
  throw new Error('20261126171000_item_moves cannot be undone: restore a backup taken before it');
}
