CREATE OR REPLACE FUNCTION public.hearth_stack_take(p_held text, p_inventory_id text, p_type_key text, p_quantity bigint)
 RETURNS bigint
 LANGUAGE plpgsql
AS $function$
    -- Takes p_quantity from a counted stack of held goods under its row lock; answers the quantity after,
    -- or refuses `insufficient-balance` when it holds fewer. Items and cards (p_held: 'item', 'card') keep
    -- their stacks alike (hearth_stack_add). Each table is named in a statement of its own, not built
    -- with EXECUTE: PL/pgSQL then plans each statement once per session (EXECUTE plans on every call,
    -- about four times slower on this hot path).
    DECLARE
      v_held bigint;
    BEGIN
      v_held := hearth_hold_stack(p_held, p_inventory_id, p_type_key);
      IF v_held < p_quantity THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', 'insufficient-balance', p_held || 'TypeKey', p_type_key, 'held', v_held, 'requested', p_quantity));
      END IF;
      IF p_held = 'item' THEN
        UPDATE item_stacks SET quantity = v_held - p_quantity WHERE inventory_id = p_inventory_id AND item_type_key = p_type_key;
      ELSE
        UPDATE card_stacks SET quantity = v_held - p_quantity WHERE inventory_id = p_inventory_id AND card_type_key = p_type_key;
      END IF;
      RETURN v_held - p_quantity;
    END
    $function$;
