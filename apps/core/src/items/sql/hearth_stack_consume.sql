CREATE OR REPLACE FUNCTION public.hearth_stack_consume(p_environment_id bigint, p_player_id text, p_request jsonb, p_use boolean)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
    DECLARE
      t item_types%ROWTYPE;
      v_home record;
      v_stack jsonb;
    BEGIN
      t := hearth_item_type_on(p_environment_id, p_request->>'itemTypeKey');
      IF t.ownership <> 'counted' THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', 'held-one-by-one', 'itemTypeKey', t.key));
      END IF;
      PERFORM hearth_hold_known_player(p_environment_id, p_player_id);
      IF p_use THEN
        PERFORM hearth_check_usable(p_player_id, t.key, t);
      END IF;
      v_home := hearth_choose_held_inventory(p_environment_id, p_player_id, p_request, t.scope, 'item', t.key);
      v_stack := hearth_take_from_stack(v_home.inventory_id, t.key, CASE WHEN p_use THEN 1 ELSE coalesce((p_request->>'quantity')::bigint, 1) END);
      RETURN CASE WHEN p_use THEN jsonb_build_object('itemTypeKey', t.key, 'item', NULL) ELSE jsonb_build_object('stack', v_stack) END;
    END
    $function$;
