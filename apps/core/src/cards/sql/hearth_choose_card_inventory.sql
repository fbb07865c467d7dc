CREATE OR REPLACE FUNCTION public.hearth_choose_card_inventory(p_environment_id bigint, p_player_id text, p_request jsonb, p_card_type_key text, OUT inventory_id text, OUT realm_key text)
 RETURNS record
 LANGUAGE plpgsql
AS $function$
    DECLARE
      v_home record;
    BEGIN
      SELECT * INTO v_home FROM hearth_choose_inventory(p_environment_id, p_player_id, 'realm',
        p_request->>'inventoryId', p_request->'realmId' IS NOT NULL, p_request->>'realmId');
      -- held-per-realm only says the place named is the account's, which holds cards too.
      IF v_home.outcome NOT IN ('chosen', 'held-per-realm') THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', v_home.outcome, 'cardTypeKey', p_card_type_key,
          'field', CASE WHEN p_request->'inventoryId' IS NOT NULL THEN 'inventoryId' ELSE 'realmId' END));
      END IF;
      inventory_id := v_home.inventory_id;
      realm_key := v_home.realm_key;
    END
    $function$;
