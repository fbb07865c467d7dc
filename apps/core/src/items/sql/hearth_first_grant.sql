CREATE OR REPLACE FUNCTION public.hearth_first_grant(p_player_id text, p_item_type_key text, p_grant_key text)
 RETURNS jsonb
 LANGUAGE sql
 STABLE
AS $function$
      SELECT jsonb_build_object('inventoryId', i.inventory_id, 'itemTypeKey', i.item_type_key, 'stack', NULL,
        'items', jsonb_build_array(hearth_item_json(i)), 'alreadyGranted', true)
      FROM items i WHERE i.player_id = p_player_id AND i.item_type_key = p_item_type_key AND i.grant_key = p_grant_key
    $function$;
