CREATE OR REPLACE FUNCTION public.hearth_item_json(i items)
 RETURNS jsonb
 LANGUAGE sql
 STABLE
AS $function$
      SELECT jsonb_build_object('id', i.id, 'inventoryId', i.inventory_id, 'itemTypeKey', i.item_type_key, 'grantKey', i.grant_key,
        'consumedAt', hearth_iso_time(i.consumed_at), 'data', i.data)
    $function$;
