CREATE OR REPLACE FUNCTION public.hearth_hold_stack(p_inventory_id text, p_item_type_key text)
 RETURNS bigint
 LANGUAGE plpgsql
AS $function$
    DECLARE
      v_held bigint;
    BEGIN
      -- A counted stack's row locked until the transaction ends, and what it holds (0 when there is
      -- none): what every taking from a stack reads before it decides how much to take.
      SELECT s.quantity INTO v_held FROM item_stacks s WHERE s.inventory_id = p_inventory_id AND s.item_type_key = p_item_type_key FOR UPDATE;
      RETURN coalesce(v_held, 0);
    END
    $function$;
