CREATE OR REPLACE FUNCTION public.hearth_choose_held_inventory(p_environment_id bigint, p_player_id text, p_request jsonb, p_scope text, p_held text, p_type_key text, OUT inventory_id text, OUT realm_key text)
 RETURNS record
 LANGUAGE plpgsql
AS $function$
    -- The inventory a move of held goods acts in: the one the request names (inventoryId, or realmId: null
    -- for the account's), else where p_scope puts it (hearth_choose_inventory). An item type's scope,
    -- `account` or `realm`, is also the only kind of place its items may be named in; cards go `anywhere`:
    -- the current realm's inventory unless the request names another, the account's included. Refused,
    -- it names the type (<held>TypeKey, p_held: 'item', 'card') and the field that named the place.
    DECLARE
      v_home record;
    BEGIN
      SELECT * INTO v_home FROM hearth_choose_inventory(p_environment_id, p_player_id, CASE WHEN p_scope = 'anywhere' THEN 'realm' ELSE p_scope END,
        p_request->>'inventoryId', p_request->'realmId' IS NOT NULL, p_request->>'realmId');
      -- held-per-realm only says the place named is the account's, which is a place for what goes anywhere.
      IF v_home.outcome <> 'chosen' AND NOT (p_scope = 'anywhere' AND v_home.outcome = 'held-per-realm') THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', v_home.outcome, p_held || 'TypeKey', p_type_key,
          'field', CASE WHEN p_request->'inventoryId' IS NOT NULL THEN 'inventoryId' ELSE 'realmId' END));
      END IF;
      inventory_id := v_home.inventory_id;
      realm_key := v_home.realm_key;
    END
    $function$;
