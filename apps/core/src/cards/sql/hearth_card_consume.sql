CREATE OR REPLACE FUNCTION public.hearth_card_consume(p_environment_id bigint, p_player_id text, p_request jsonb)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
    DECLARE
      c cards%ROWTYPE;
    BEGIN
      PERFORM hearth_hold_known_player(p_environment_id, p_player_id);
      SELECT * INTO c FROM cards WHERE id = p_request->>'cardId' AND player_id = p_player_id AND environment_id = p_environment_id FOR UPDATE;
      IF NOT FOUND THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', 'card-not-found'));
      END IF;
      IF c.consumed_at IS NOT NULL THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', 'card-already-consumed', 'cardTypeKey', c.card_type_key, 'consumedAt', hearth_card_json(c)->'consumedAt'));
      END IF;
      UPDATE cards SET consumed_at = clock_timestamp() WHERE id = c.id RETURNING * INTO c;
      DELETE FROM deck_entries WHERE card_id = c.id;
      RETURN hearth_card_json(c);
    END
    $function$;
