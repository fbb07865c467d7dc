CREATE OR REPLACE FUNCTION public.hearth_item_grant(p_environment_id bigint, p_player_id text, p_request jsonb, p_max_balance bigint)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
    DECLARE
      t item_types%ROWTYPE;
      v_quantity bigint := coalesce((p_request->>'quantity')::bigint, 1);
      v_grant_key text := p_request->>'grantKey';
      v_first jsonb;
      v_home record;
    BEGIN
      t := hearth_item_type_on(p_environment_id, p_request->>'itemTypeKey');
      IF t.ownership = 'counted' AND v_grant_key IS NOT NULL THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', 'grant-key-counted', 'itemTypeKey', t.key));
      END IF;
      IF t.ownership = 'counted' AND p_request->'data' IS NOT NULL THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', 'data-counted', 'itemTypeKey', t.key));
      END IF;
      IF v_grant_key IS NOT NULL AND v_quantity <> 1 THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', 'grant-key-quantity', 'itemTypeKey', t.key));
      END IF;
      PERFORM hearth_hold_known_player(p_environment_id, p_player_id);
      -- Granted before under this key: the first grant is the answer, whatever has changed since.
      IF v_grant_key IS NOT NULL THEN
        v_first := hearth_first_grant(p_player_id, t.key, v_grant_key);
        IF v_first IS NOT NULL THEN
          RETURN v_first;
        END IF;
      END IF;
      PERFORM hearth_check_held_type('item', t.key, t.enabled);
      v_home := hearth_choose_held_inventory(p_environment_id, p_player_id, p_request, t.scope, 'item', t.key);
      RETURN hearth_grant_items(p_environment_id, p_player_id, v_home.inventory_id, t, v_quantity, v_grant_key, p_request->'data', p_max_balance);
    END
    $function$;
