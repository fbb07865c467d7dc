CREATE OR REPLACE FUNCTION public.hearth_hold_stack(p_held text, p_inventory_id text, p_type_key text)
 RETURNS bigint
 LANGUAGE plpgsql
AS $function$
    DECLARE
      v_held bigint;
    BEGIN
      -- A counted stack's row of held goods (p_held: 'item', 'card') locked until the transaction
      -- ends, and what it holds (0 when there is none): what every taking from a stack reads before it
      -- decides how much to take. Each table in a statement of its own (hearth_stack_take says why).
      IF p_held = 'item' THEN
        SELECT s.quantity INTO v_held FROM item_stacks s WHERE s.inventory_id = p_inventory_id AND s.item_type_key = p_type_key FOR UPDATE;
      ELSIF p_held = 'card' THEN
        SELECT s.quantity INTO v_held FROM card_stacks s WHERE s.inventory_id = p_inventory_id AND s.card_type_key = p_type_key FOR UPDATE;
      ELSE
        RAISE EXCEPTION 'hearth_hold_stack: no stacks of %', p_held;
      END IF;
      RETURN coalesce(v_held, 0);
    END
    $function$;
