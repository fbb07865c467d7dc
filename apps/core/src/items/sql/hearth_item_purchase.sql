CREATE OR REPLACE FUNCTION public.hearth_item_purchase(p_environment_id bigint, p_player_id text, p_request jsonb, p_max_balance bigint)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
    DECLARE
      t item_types%ROWTYPE;
      v_home record;
      v_quantity bigint := coalesce((p_request->>'quantity')::bigint, 1);
      v_charges jsonb;
      v_movements jsonb;
    BEGIN
      t := hearth_item_type_on(p_environment_id, p_request->>'itemTypeKey');
      PERFORM hearth_check_held_type('item', t.key, t.enabled, p_purchasable => t.purchasable);
      v_charges := hearth_price_charges(p_environment_id, jsonb_build_object('itemTypeKey', t.key), t.price_rule, t.prices, v_quantity, p_request);

      PERFORM hearth_hold_known_player(p_environment_id, p_player_id);
      -- Inventories are made account first, then a realm's: two purchases making both cannot wait on each other.
      IF t.scope = 'account' OR hearth_charges_on_account(v_charges) THEN
        PERFORM 1 FROM hearth_choose_inventory(p_environment_id, p_player_id, 'account', NULL, false, NULL);
      END IF;
      v_home := hearth_choose_held_inventory(p_environment_id, p_player_id, p_request, t.scope, 'item', t.key);
      v_movements := hearth_pay_charges(p_environment_id, p_player_id, v_charges, v_home.inventory_id, v_home.realm_key, NULL, 'purchase', 'item:' || t.key, p_max_balance);
      -- Same statement: an owned-limit here rolls the charges back with it.
      RETURN jsonb_build_object('replayed', false, 'charges', v_movements,
        'granted', hearth_grant_items(p_environment_id, p_player_id, v_home.inventory_id, t, v_quantity, NULL, NULL, p_max_balance));
    END
    $function$;
