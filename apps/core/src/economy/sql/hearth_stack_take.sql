CREATE OR REPLACE FUNCTION public.hearth_stack_take(p_held text, p_inventory_id text, p_type_key text, p_quantity bigint)
 RETURNS bigint
 LANGUAGE plpgsql
AS $function$
    -- Takes p_quantity from a counted stack of held goods under its row lock; answers the quantity after,
    -- or refuses `insufficient-balance` when it holds fewer. Items and cards (p_held: 'item', 'card') keep
    -- their stacks alike (hearth_stack_add).
    DECLARE
      v_held bigint;
    BEGIN
      IF p_held NOT IN ('item', 'card') THEN
        RAISE EXCEPTION 'hearth_stack_take: no stacks of %', p_held;
      END IF;
      EXECUTE format('SELECT s.quantity FROM %I s WHERE s.inventory_id = $1 AND s.%I = $2 FOR UPDATE', p_held || '_stacks', p_held || '_type_key')
        INTO v_held USING p_inventory_id, p_type_key;
      v_held := coalesce(v_held, 0);
      IF v_held < p_quantity THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', 'insufficient-balance', p_held || 'TypeKey', p_type_key, 'held', v_held, 'requested', p_quantity));
      END IF;
      EXECUTE format('UPDATE %I SET quantity = $3 WHERE inventory_id = $1 AND %I = $2', p_held || '_stacks', p_held || '_type_key')
        USING p_inventory_id, p_type_key, v_held - p_quantity;
      RETURN v_held - p_quantity;
    END
    $function$;
