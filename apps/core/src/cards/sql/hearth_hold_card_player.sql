CREATE OR REPLACE FUNCTION public.hearth_hold_card_player(p_environment_id bigint, p_player_id text)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
    BEGIN
      PERFORM 1 FROM hearth_hold_player(p_environment_id, p_player_id);
      IF NOT FOUND THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', 'player-not-found'));
      END IF;
    END
    $function$;
