CREATE OR REPLACE FUNCTION public.hearth_stack_add(p_held text, p_inventory_id text, p_type_key text, p_quantity bigint, p_limit bigint)
 RETURNS bigint
 LANGUAGE plpgsql
AS $function$
    -- A counted stack of held goods grows by p_quantity up to p_limit; answers the quantity after, or
    -- refuses `owned-limit`. Items and cards (p_held: 'item', 'card') keep their stacks alike, in
    -- <held>_stacks (inventory_id, <held>_type_key, quantity), and a refusal names the type as <held>TypeKey.
    DECLARE
      v_after bigint;
      v_held bigint;
    BEGIN
      IF p_held NOT IN ('item', 'card') THEN
        RAISE EXCEPTION 'hearth_stack_add: no stacks of %', p_held;
      END IF;
      -- The upsert takes the row's lock whether it makes or finds the row, and adds only within the limit.
      EXECUTE format('INSERT INTO %1$I AS s (inventory_id, %2$I, quantity) VALUES ($1, $2, $3)
          ON CONFLICT (inventory_id, %2$I) DO UPDATE SET quantity = s.quantity + EXCLUDED.quantity
          WHERE s.quantity + EXCLUDED.quantity <= $4
          RETURNING s.quantity', p_held || '_stacks', p_held || '_type_key')
        INTO v_after USING p_inventory_id, p_type_key, p_quantity, p_limit;
      IF v_after IS NULL THEN
        EXECUTE format('SELECT s.quantity FROM %I s WHERE s.inventory_id = $1 AND s.%I = $2', p_held || '_stacks', p_held || '_type_key')
          INTO v_held USING p_inventory_id, p_type_key;
      ELSIF v_after > p_limit THEN
        -- A new stack made with more than it may hold: the refusal rolls it back.
        v_held := v_after - p_quantity;
      ELSE
        RETURN v_after;
      END IF;
      PERFORM hearth_refuse(jsonb_build_object('outcome', 'owned-limit', p_held || 'TypeKey', p_type_key, 'held', v_held, 'requested', p_quantity, 'limit', p_limit));
    END
    $function$;
