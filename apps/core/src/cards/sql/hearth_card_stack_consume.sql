CREATE OR REPLACE FUNCTION public.hearth_card_stack_consume(p_environment_id bigint, p_player_id text, p_request jsonb)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
    DECLARE
      t card_types%ROWTYPE;
      v_home record;
      v_held bigint;
      v_quantity bigint := (p_request->>'quantity')::bigint;
    BEGIN
      t := hearth_card_type_on(p_environment_id, p_request->>'cardTypeKey');
      PERFORM hearth_hold_card_player(p_environment_id, p_player_id);
      v_home := hearth_choose_card_inventory(p_environment_id, p_player_id, p_request, t.key);
      SELECT s.quantity INTO v_held FROM card_stacks s WHERE s.inventory_id = v_home.inventory_id AND s.card_type_key = t.key FOR UPDATE;
      v_held := coalesce(v_held, 0);
      IF v_held < v_quantity THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', 'insufficient-balance', 'cardTypeKey', t.key, 'held', v_held, 'requested', v_quantity));
      END IF;
      UPDATE card_stacks SET quantity = v_held - v_quantity WHERE inventory_id = v_home.inventory_id AND card_type_key = t.key;
      RETURN jsonb_build_object('inventoryId', v_home.inventory_id, 'cardTypeKey', t.key, 'quantity', v_held - v_quantity);
    END
    $function$;
