CREATE OR REPLACE FUNCTION public.hearth_card_json(c cards)
 RETURNS jsonb
 LANGUAGE sql
 STABLE
AS $function$
      SELECT jsonb_build_object('id', c.id, 'inventoryId', c.inventory_id, 'cardTypeKey', c.card_type_key, 'cardTemplateKey', c.card_template_key,
        'grantKey', c.grant_key, 'consumedAt', hearth_iso_time(c.consumed_at), 'data', c.data)
    $function$;
