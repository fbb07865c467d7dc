CREATE OR REPLACE FUNCTION public.hearth_check_unlocked(p_player_id text, t item_types)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
    DECLARE
      v_missing jsonb;
    BEGIN
      SELECT jsonb_agg(r.key ORDER BY r.n) INTO v_missing
        FROM jsonb_array_elements_text(t.requires) WITH ORDINALITY AS r(key, n)
        WHERE NOT EXISTS (SELECT 1 FROM player_unlocks u WHERE u.player_id = p_player_id AND u.key = r.key)
          AND NOT EXISTS (SELECT 1 FROM player_skill_nodes s WHERE s.player_id = p_player_id AND s.node_key = r.key);
      IF v_missing IS NOT NULL THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', 'locked', 'itemTypeKey', t.key, 'missing', v_missing));
      END IF;
    END
    $function$;
