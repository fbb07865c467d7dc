CREATE OR REPLACE FUNCTION public.hearth_save_delete(p_environment_id bigint, p_player_id text, p_key text)
 RETURNS boolean
 LANGUAGE plpgsql
AS $function$
    DECLARE
      freed integer;
    BEGIN
      PERFORM 1 FROM environments e WHERE e.id = p_environment_id FOR NO KEY UPDATE;
      PERFORM 1 FROM players p WHERE p.id = p_player_id AND p.environment_id = p_environment_id FOR NO KEY UPDATE;
      IF NOT FOUND THEN
        RETURN false;
      END IF;
      DELETE FROM player_saves s WHERE s.player_id = p_player_id AND s.key = p_key RETURNING s.size_bytes INTO freed;
      IF FOUND THEN
        UPDATE players SET save_bytes = save_bytes - freed WHERE id = p_player_id;
        UPDATE environments SET player_save_bytes = player_save_bytes - freed WHERE id = p_environment_id;
      END IF;
      RETURN true;
    END
    $function$;
