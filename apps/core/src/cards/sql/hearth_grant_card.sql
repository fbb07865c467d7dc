CREATE OR REPLACE FUNCTION public.hearth_grant_card(p_environment_id bigint, p_player_id text, p_inventory_id text, p_card_type_key text, p_template_key text, p_grant_key text, p_data jsonb)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
    DECLARE
      v_card jsonb;
    BEGIN
      WITH made AS (
        INSERT INTO cards (id, environment_id, player_id, inventory_id, card_type_key, card_template_key, grant_key, data)
          VALUES (hearth_random_id(), p_environment_id, p_player_id, p_inventory_id, p_card_type_key, p_template_key, p_grant_key, coalesce(p_data, '{}'::jsonb))
          ON CONFLICT (player_id, card_type_key, grant_key) DO NOTHING
          RETURNING *
      )
      SELECT hearth_card_json(made) INTO v_card FROM made;
      IF v_card IS NULL THEN
        RETURN hearth_first_card_grant(p_player_id, p_card_type_key, p_grant_key);
      END IF;
      RETURN jsonb_build_object('card', v_card, 'alreadyGranted', false);
    END
    $function$;
