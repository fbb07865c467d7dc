CREATE OR REPLACE FUNCTION public.hearth_add_card_stack(p_inventory_id text, p_card_type_key text, p_quantity bigint, p_max_balance bigint)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
    DECLARE
      v_after bigint;
      v_held bigint;
    BEGIN
      INSERT INTO card_stacks AS s (inventory_id, card_type_key, quantity) VALUES (p_inventory_id, p_card_type_key, p_quantity)
        ON CONFLICT (inventory_id, card_type_key) DO UPDATE SET quantity = s.quantity + EXCLUDED.quantity
        WHERE s.quantity + EXCLUDED.quantity <= p_max_balance
        RETURNING s.quantity INTO v_after;
      IF v_after IS NULL THEN
        SELECT s.quantity INTO v_held FROM card_stacks s WHERE s.inventory_id = p_inventory_id AND s.card_type_key = p_card_type_key;
        PERFORM hearth_refuse(jsonb_build_object('outcome', 'owned-limit', 'cardTypeKey', p_card_type_key, 'held', v_held, 'requested', p_quantity, 'limit', p_max_balance));
      END IF;
      RETURN jsonb_build_object('inventoryId', p_inventory_id, 'cardTypeKey', p_card_type_key, 'quantity', v_after);
    END
    $function$;
