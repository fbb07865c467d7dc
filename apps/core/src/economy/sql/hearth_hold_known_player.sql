CREATE OR REPLACE FUNCTION public.hearth_hold_known_player(p_environment_id bigint, p_player_id text)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
    -- How a move holds its player: the row held as hearth_hold_player holds it, `player-not-found`
    -- refused when there is none. (hearth_currency_move answers that outcome as a row instead.)
    BEGIN
      PERFORM 1 FROM hearth_hold_player(p_environment_id, p_player_id);
      IF NOT FOUND THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', 'player-not-found'));
      END IF;
    END
    $function$;
