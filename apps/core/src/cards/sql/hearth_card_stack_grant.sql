CREATE OR REPLACE FUNCTION public.hearth_card_stack_grant(p_environment_id bigint, p_player_id text, p_request jsonb, p_max_balance bigint)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
    DECLARE
      t card_types%ROWTYPE;
      v_home record;
    BEGIN
      t := hearth_card_type_on(p_environment_id, p_request->>'cardTypeKey');
      PERFORM hearth_hold_known_player(p_environment_id, p_player_id);
      PERFORM hearth_check_held_type('card', t.key, t.enabled);
      v_home := hearth_choose_card_inventory(p_environment_id, p_player_id, p_request, t.key);
      RETURN hearth_add_card_stack(v_home.inventory_id, t.key, (p_request->>'quantity')::bigint, p_max_balance);
    END
    $function$;
