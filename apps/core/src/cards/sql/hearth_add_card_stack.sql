CREATE OR REPLACE FUNCTION public.hearth_add_card_stack(p_inventory_id text, p_card_type_key text, p_quantity bigint, p_max_balance bigint)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
    -- A card stack's growth (hearth_stack_add, as an item stack's), never past 2^53-1, answered as a CardStack.
    BEGIN
      RETURN jsonb_build_object('inventoryId', p_inventory_id, 'cardTypeKey', p_card_type_key,
        'quantity', hearth_stack_add('card', p_inventory_id, p_card_type_key, p_quantity, p_max_balance));
    END
    $function$;
