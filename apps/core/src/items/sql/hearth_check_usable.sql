CREATE OR REPLACE FUNCTION public.hearth_check_usable(p_player_id text, p_item_type_key text, t item_types)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
    BEGIN
      IF t.key IS NULL THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', 'no-longer-defined', 'itemTypeKey', p_item_type_key));
      END IF;
      IF NOT t.usable THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', 'not-usable', 'itemTypeKey', t.key));
      END IF;
      PERFORM hearth_check_held_type('item', t.key, t.enabled);
      PERFORM hearth_check_unlocked(p_player_id, t);
    END
    $function$;
