CREATE OR REPLACE FUNCTION public.hearth_choose_card_inventory(p_environment_id bigint, p_player_id text, p_request jsonb, p_card_type_key text, OUT inventory_id text, OUT realm_key text)
 RETURNS record
 LANGUAGE plpgsql
AS $function$
    -- Where cards go: anywhere (hearth_choose_held_inventory), the current realm's inventory by default.
    BEGIN
      SELECT h.inventory_id, h.realm_key INTO inventory_id, realm_key
        FROM hearth_choose_held_inventory(p_environment_id, p_player_id, p_request, 'anywhere', 'card', p_card_type_key) h;
    END
    $function$;
