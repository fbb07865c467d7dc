CREATE OR REPLACE FUNCTION public.hearth_consume_item(p_item_id text)
 RETURNS items
 LANGUAGE plpgsql
AS $function$
    DECLARE
      i items%ROWTYPE;
    BEGIN
      -- An item held one by one marked consumed, as it answers after: the caller holds its row
      -- (FOR UPDATE) and found it not consumed.
      UPDATE items SET consumed_at = clock_timestamp() WHERE id = p_item_id RETURNING * INTO i;
      RETURN i;
    END
    $function$;
