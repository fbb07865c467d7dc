CREATE OR REPLACE FUNCTION public.hearth_hold_player(p_environment_id bigint, p_player_id text)
 RETURNS SETOF players
 LANGUAGE plpgsql
AS $function$
    BEGIN
      RETURN QUERY SELECT * FROM players WHERE id = p_player_id AND environment_id = p_environment_id FOR KEY SHARE;
    END
    $function$;
