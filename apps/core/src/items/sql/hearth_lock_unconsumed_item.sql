CREATE OR REPLACE FUNCTION public.hearth_lock_unconsumed_item(p_environment_id bigint, p_player_id text, p_item_id text)
 RETURNS items
 LANGUAGE plpgsql
AS $function$
    DECLARE
      i items%ROWTYPE;
    BEGIN
      SELECT * INTO i FROM items WHERE id = p_item_id AND player_id = p_player_id AND environment_id = p_environment_id FOR UPDATE;
      IF NOT FOUND THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', 'item-not-found'));
      END IF;
      IF i.consumed_at IS NOT NULL THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', 'already-consumed', 'itemTypeKey', i.item_type_key, 'consumedAt', hearth_item_json(i)->'consumedAt'));
      END IF;
      RETURN i;
    END
    $function$;
