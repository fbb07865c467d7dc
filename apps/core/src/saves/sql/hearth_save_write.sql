CREATE OR REPLACE FUNCTION public.hearth_save_write(p_environment_id bigint, p_player_id text, p_key text, p_size_bytes integer, p_data json, p_expected_version bigint, p_player_limit bigint, p_environment_limit bigint)
 RETURNS TABLE(outcome text, version bigint, size_bytes integer, updated_at timestamp with time zone)
 LANGUAGE plpgsql
AS $function$
    DECLARE
      environment_bytes bigint;
      player_bytes bigint;
      slot_version bigint;
      slot_size integer;
      growth integer;
    BEGIN
      SELECT e.player_save_bytes INTO environment_bytes FROM environments e WHERE e.id = p_environment_id FOR NO KEY UPDATE;
      SELECT p.save_bytes INTO player_bytes FROM players p
        WHERE p.id = p_player_id AND p.environment_id = p_environment_id FOR NO KEY UPDATE;
      IF NOT FOUND THEN
        RETURN QUERY SELECT 'player-not-found'::text, NULL::bigint, NULL::integer, NULL::timestamptz;
        RETURN;
      END IF;
      SELECT s.version, s.size_bytes INTO slot_version, slot_size FROM player_saves s
        WHERE s.player_id = p_player_id AND s.key = p_key FOR UPDATE;
      IF p_expected_version IS NOT NULL AND p_expected_version <> coalesce(slot_version, 0) THEN
        RETURN QUERY SELECT 'version-conflict'::text, coalesce(slot_version, 0), NULL::integer, NULL::timestamptz;
        RETURN;
      END IF;
      growth := p_size_bytes - coalesce(slot_size, 0);
      -- Only growth is held to the quotas: a write that shrinks or keeps its size always goes through,
      -- even if a lowered plan left the environment over its limit.
      IF growth > 0 AND player_bytes + growth > p_player_limit THEN
        RETURN QUERY SELECT 'player-quota'::text, NULL::bigint, NULL::integer, NULL::timestamptz;
        RETURN;
      END IF;
      IF growth > 0 AND environment_bytes + growth > p_environment_limit THEN
        RETURN QUERY SELECT 'environment-quota'::text, NULL::bigint, NULL::integer, NULL::timestamptz;
        RETURN;
      END IF;
      IF growth <> 0 THEN
        UPDATE players SET save_bytes = save_bytes + growth WHERE id = p_player_id;
        UPDATE environments SET player_save_bytes = player_save_bytes + growth WHERE id = p_environment_id;
      END IF;
      -- The player's row lock serializes this player's writers, so the slot cannot appear or change between its lock and here.
      IF slot_version IS NULL THEN
        RETURN QUERY
          INSERT INTO player_saves AS s (player_id, key, environment_id, version, size_bytes, data)
          VALUES (p_player_id, p_key, p_environment_id, 1, p_size_bytes, p_data)
          RETURNING 'created'::text, s.version, s.size_bytes, s.updated_at;
      ELSE
        RETURN QUERY
          UPDATE player_saves AS s SET version = s.version + 1, size_bytes = p_size_bytes, data = p_data, updated_at = now()
          WHERE s.player_id = p_player_id AND s.key = p_key
          RETURNING 'replaced'::text, s.version, s.size_bytes, s.updated_at;
      END IF;
    END
    $function$;
