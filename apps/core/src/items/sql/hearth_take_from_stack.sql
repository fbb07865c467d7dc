CREATE OR REPLACE FUNCTION public.hearth_take_from_stack(p_inventory_id text, p_item_type_key text, p_quantity bigint)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
    -- An item stack's taking (hearth_stack_take, as a card stack's), answered as an ItemStack.
    BEGIN
      RETURN jsonb_build_object('itemTypeKey', p_item_type_key, 'quantity', hearth_stack_take('item', p_inventory_id, p_item_type_key, p_quantity));
    END
    $function$;
