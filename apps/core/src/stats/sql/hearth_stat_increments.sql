CREATE OR REPLACE FUNCTION public.hearth_stat_increments(p_environment_id bigint, p_player_id text, p_key text, p_realm_key text, p_steps bigint[])
 RETURNS TABLE(step integer, step_value text, held text)
 LANGUAGE plpgsql
AS $function$
    DECLARE
      v_min constant bigint := -9223372036854775808;
      v_max constant bigint := 9223372036854775807;
      v_value bigint;
      v_by bigint;
      v_changed boolean := false;
    BEGIN
      IF p_realm_key <> '' AND NOT EXISTS (SELECT 1 FROM realms r WHERE r.environment_id = p_environment_id AND r.key = p_realm_key) THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', 'realm-not-found'));
      END IF;
      -- The counter's row, locked until the commit (made at 0 by its first increment; made by another
      -- transaction at the same moment, the insert waits for it and the second read finds it).
      IF p_player_id IS NOT NULL THEN
        PERFORM hearth_hold_known_player(p_environment_id, p_player_id);
        SELECT s.value INTO v_value FROM player_stats s WHERE s.player_id = p_player_id AND s.key = p_key AND s.realm_key = p_realm_key FOR UPDATE;
        IF NOT FOUND THEN
          INSERT INTO player_stats (player_id, environment_id, key, realm_key, value) VALUES (p_player_id, p_environment_id, p_key, p_realm_key, 0) ON CONFLICT DO NOTHING;
          SELECT s.value INTO STRICT v_value FROM player_stats s WHERE s.player_id = p_player_id AND s.key = p_key AND s.realm_key = p_realm_key FOR UPDATE;
        END IF;
      ELSE
        SELECT e.value INTO v_value FROM environment_stats e WHERE e.environment_id = p_environment_id AND e.key = p_key AND e.realm_key = p_realm_key FOR UPDATE;
        IF NOT FOUND THEN
          INSERT INTO environment_stats (environment_id, key, realm_key, value) VALUES (p_environment_id, p_key, p_realm_key, 0) ON CONFLICT DO NOTHING;
          SELECT e.value INTO STRICT v_value FROM environment_stats e WHERE e.environment_id = p_environment_id AND e.key = p_key AND e.realm_key = p_realm_key FOR UPDATE;
        END IF;
      END IF;

      -- Each step in order; one past the range is refused alone (nothing wraps) and leaves the value as it was.
      FOR i IN 1 .. coalesce(array_length(p_steps, 1), 0) LOOP
        v_by := p_steps[i];
        step := i;
        IF (v_by > 0 AND v_value > v_max - v_by) OR (v_by < 0 AND v_value < v_min - v_by) THEN
          step_value := NULL;
          held := v_value::text;
        ELSE
          v_value := v_value + v_by;
          v_changed := true;
          step_value := v_value::text;
          held := NULL;
        END IF;
        RETURN NEXT;
      END LOOP;

      IF v_changed THEN
        IF p_player_id IS NOT NULL THEN
          UPDATE player_stats s SET value = v_value WHERE s.player_id = p_player_id AND s.key = p_key AND s.realm_key = p_realm_key;
        ELSE
          UPDATE environment_stats e SET value = v_value WHERE e.environment_id = p_environment_id AND e.key = p_key AND e.realm_key = p_realm_key;
        END IF;
      END IF;
    END
    $function$;
