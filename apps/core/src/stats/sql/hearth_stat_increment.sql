CREATE OR REPLACE FUNCTION public.hearth_stat_increment(p_environment_id bigint, p_player_id text, p_key text, p_realm_key text, p_by bigint, p_shards integer)
 RETURNS text
 LANGUAGE plpgsql
AS $function$
    DECLARE
      r record;
    BEGIN
      SELECT * INTO r FROM hearth_stat_increments(p_environment_id, p_player_id, p_key, p_realm_key, ARRAY[p_by]);
      IF r.step_value IS NULL THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', 'stat-out-of-range', 'held', r.held, 'requested', p_by::text));
      END IF;
      RETURN r.step_value;
    END
    $function$;
