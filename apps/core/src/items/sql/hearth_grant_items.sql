CREATE OR REPLACE FUNCTION public.hearth_grant_items(p_environment_id bigint, p_player_id text, p_inventory_id text, t item_types, p_quantity bigint, p_grant_key text, p_data jsonb, p_max_balance bigint)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
    DECLARE
      v_limit bigint := coalesce(t.max_owned, p_max_balance);
      v_held bigint;
      v_items jsonb;
      v_first jsonb;
    BEGIN
      IF t.ownership = 'counted' THEN
        -- Up to the most it may hold (maxOwned, and never past 2^53-1), as a card stack grows.
        RETURN jsonb_build_object('inventoryId', p_inventory_id, 'itemTypeKey', t.key,
          'stack', jsonb_build_object('itemTypeKey', t.key, 'quantity', hearth_stack_add('item', p_inventory_id, t.key, p_quantity, v_limit)),
          'items', '[]'::jsonb, 'alreadyGranted', false);
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
    $function$;
