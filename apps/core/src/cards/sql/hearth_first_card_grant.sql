CREATE OR REPLACE FUNCTION public.hearth_first_card_grant(p_player_id text, p_card_type_key text, p_grant_key text)
 RETURNS jsonb
 LANGUAGE sql
 STABLE
AS $function$
      SELECT jsonb_build_object('card', hearth_card_json(c), 'alreadyGranted', true)
      FROM cards c WHERE c.player_id = p_player_id AND c.card_type_key = p_card_type_key AND c.grant_key = p_grant_key
    $function$;
