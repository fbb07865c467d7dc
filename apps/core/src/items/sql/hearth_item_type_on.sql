CREATE OR REPLACE FUNCTION public.hearth_item_type_on(p_environment_id bigint, p_key text)
 RETURNS item_types
 LANGUAGE plpgsql
AS $function$
    -- The item type a move acts on, held FOR SHARE until the move's transaction ends (a definition's
    -- writer waits for it); `item-type-not-found` when the environment has none of that key.
    DECLARE
      t item_types%ROWTYPE;
    BEGIN
      SELECT * INTO t FROM item_types WHERE environment_id = p_environment_id AND key = p_key FOR SHARE;
      IF NOT FOUND THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', 'item-type-not-found'));
      END IF;
      RETURN t;
    END
    $function$;
