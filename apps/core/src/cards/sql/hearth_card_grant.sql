CREATE OR REPLACE FUNCTION public.hearth_card_grant(p_environment_id bigint, p_player_id text, p_request jsonb)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
    DECLARE
      t card_types%ROWTYPE;
      v_grant_key text := p_request->>'grantKey';
      v_first jsonb;
      v_home record;
    BEGIN
      t := hearth_card_type_on(p_environment_id, p_request->>'cardTypeKey');
      PERFORM hearth_hold_known_player(p_environment_id, p_player_id);
      IF v_grant_key IS NOT NULL THEN
        v_first := hearth_first_card_grant(p_player_id, t.key, v_grant_key);
        IF v_first IS NOT NULL THEN
          RETURN v_first;
        END IF;
      END IF;
      PERFORM hearth_check_held_type('card', t.key, t.enabled);
      PERFORM hearth_check_card_template(p_environment_id, p_request->>'cardTemplateKey');
      v_home := hearth_choose_card_inventory(p_environment_id, p_player_id, p_request, t.key);
      RETURN hearth_grant_card(p_environment_id, p_player_id, v_home.inventory_id, t.key, p_request->>'cardTemplateKey', v_grant_key, p_request->'data');
    END
    $function$;
