CREATE OR REPLACE FUNCTION public.hearth_stack_add(p_held text, p_inventory_id text, p_type_key text, p_quantity bigint, p_limit bigint)
 RETURNS bigint
 LANGUAGE plpgsql
AS $function$
    -- A counted stack of held goods grows by p_quantity up to p_limit; answers the quantity after, or
    -- refuses `owned-limit`. Items and cards (p_held: 'item', 'card') keep their stacks alike, in
    -- <held>_stacks (inventory_id, <held>_type_key, quantity), and a refusal names the type as <held>TypeKey.
    -- Each table in a statement of its own, planned once per session (hearth_stack_take says why).
    DECLARE
      v_after bigint;
      v_held bigint;
    BEGIN
      -- The upsert takes the row's lock whether it makes or finds the row, and adds only within the limit.
      IF p_held = 'item' THEN
        INSERT INTO item_stacks AS s (inventory_id, item_type_key, quantity) VALUES (p_inventory_id, p_type_key, p_quantity)
          ON CONFLICT (inventory_id, item_type_key) DO UPDATE SET quantity = s.quantity + EXCLUDED.quantity
          WHERE s.quantity + EXCLUDED.quantity <= p_limit
          RETURNING s.quantity INTO v_after;
        IF v_after IS NULL THEN
          SELECT s.quantity INTO v_held FROM item_stacks s WHERE s.inventory_id = p_inventory_id AND s.item_type_key = p_type_key;
        END IF;
      ELSIF p_held = 'card' THEN
        INSERT INTO card_stacks AS s (inventory_id, card_type_key, quantity) VALUES (p_inventory_id, p_type_key, p_quantity)
          ON CONFLICT (inventory_id, card_type_key) DO UPDATE SET quantity = s.quantity + EXCLUDED.quantity
          WHERE s.quantity + EXCLUDED.quantity <= p_limit
          RETURNING s.quantity INTO v_after;
        IF v_after IS NULL THEN
          SELECT s.quantity INTO v_held FROM card_stacks s WHERE s.inventory_id = p_inventory_id AND s.card_type_key = p_type_key;
        END IF;
      ELSE
        RAISE EXCEPTION 'hearth_stack_add: no stacks of %', p_held;
      END IF;
      IF v_after IS NULL THEN
        NULL; -- the stack held too many to grow: v_held is what it holds
      ELSIF v_after > p_limit THEN
        -- A new stack made with more than it may hold: the refusal rolls it back.
        v_held := v_after - p_quantity;
      ELSE
        RETURN v_after;
      END IF;
      PERFORM hearth_refuse(jsonb_build_object('outcome', 'owned-limit', p_held || 'TypeKey', p_type_key, 'held', v_held, 'requested', p_quantity, 'limit', p_limit));
    END
    $function$;
