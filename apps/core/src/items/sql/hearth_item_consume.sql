CREATE OR REPLACE FUNCTION public.hearth_item_consume(p_environment_id bigint, p_player_id text, p_request jsonb, p_use boolean)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
    DECLARE
      i items%ROWTYPE;
      t item_types%ROWTYPE;
    BEGIN
      PERFORM hearth_hold_known_player(p_environment_id, p_player_id);
      i := hearth_lock_unconsumed_item(p_environment_id, p_player_id, p_request->>'itemId');
      IF p_use THEN
        SELECT * INTO t FROM item_types WHERE environment_id = p_environment_id AND key = i.item_type_key FOR SHARE;
        PERFORM hearth_check_usable(p_player_id, i.item_type_key, t);
      END IF;
      i := hearth_consume_item(i.id);
      RETURN CASE WHEN p_use THEN jsonb_build_object('itemTypeKey', i.item_type_key, 'item', hearth_item_json(i))
        ELSE jsonb_build_object('item', hearth_item_json(i)) END;
    END
    $function$;
