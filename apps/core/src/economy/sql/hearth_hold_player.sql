CREATE OR REPLACE FUNCTION public.hearth_hold_player(p_environment_id bigint, p_player_id text)
 RETURNS SETOF players
 LANGUAGE plpgsql
AS $function$
    -- The player's row held FOR KEY SHARE (a deletion waits), answered rather than refused when there
    -- is none: a move refuses through hearth_hold_known_player, hearth_currency_move answers an outcome
    -- row, and TypeScript reads the row (apps/core/src/players/hold.ts).
    BEGIN
      RETURN QUERY SELECT * FROM players WHERE id = p_player_id AND environment_id = p_environment_id FOR KEY SHARE;
    END
    $function$;
