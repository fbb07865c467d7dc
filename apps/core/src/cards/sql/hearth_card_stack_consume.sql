CREATE OR REPLACE FUNCTION public.hearth_card_stack_consume(p_environment_id bigint, p_player_id text, p_request jsonb)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
    DECLARE
      t card_types%ROWTYPE;
      v_home record;
    BEGIN
      t := hearth_card_type_on(p_environment_id, p_request->>'cardTypeKey');
      PERFORM hearth_hold_known_player(p_environment_id, p_player_id);
      v_home := hearth_choose_card_inventory(p_environment_id, p_player_id, p_request, t.key);
      RETURN jsonb_build_object('inventoryId', v_home.inventory_id, 'cardTypeKey', t.key,
        'quantity', hearth_stack_take('card', v_home.inventory_id, t.key, (p_request->>'quantity')::bigint));
    END
    $function$;
