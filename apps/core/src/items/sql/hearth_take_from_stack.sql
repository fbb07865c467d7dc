CREATE OR REPLACE FUNCTION public.hearth_take_from_stack(p_inventory_id text, p_item_type_key text, p_quantity bigint)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
    DECLARE
      v_held bigint;
    BEGIN
      v_held := hearth_hold_stack(p_inventory_id, p_item_type_key);
      IF v_held < p_quantity THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', 'insufficient-balance', 'itemTypeKey', p_item_type_key, 'held', v_held, 'requested', p_quantity));
      END IF;
      UPDATE item_stacks SET quantity = v_held - p_quantity WHERE inventory_id = p_inventory_id AND item_type_key = p_item_type_key;
      RETURN jsonb_build_object('itemTypeKey', p_item_type_key, 'quantity', v_held - p_quantity);
    END
    $function$;
