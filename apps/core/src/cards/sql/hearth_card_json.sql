CREATE OR REPLACE FUNCTION public.hearth_card_json(c cards)
 RETURNS jsonb
 LANGUAGE sql
 STABLE
AS $function$
      SELECT jsonb_build_object('id', c.id, 'inventoryId', c.inventory_id, 'cardTypeKey', c.card_type_key, 'cardTemplateKey', c.card_template_key,
        'grantKey', c.grant_key, 'consumedAt', to_char(c.consumed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'data', c.data)
    $function$;
