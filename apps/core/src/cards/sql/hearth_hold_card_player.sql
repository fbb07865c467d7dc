-- Kept for the previous release's database (nothing calls it now): a later release's migration drops it.
CREATE OR REPLACE FUNCTION public.hearth_hold_card_player(p_environment_id bigint, p_player_id text)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
    BEGIN
      PERFORM hearth_hold_known_player(p_environment_id, p_player_id);
    END
    $function$;
