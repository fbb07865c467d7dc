CREATE OR REPLACE FUNCTION public.hearth_card_type_on(p_environment_id bigint, p_key text)
 RETURNS card_types
 LANGUAGE plpgsql
AS $function$
    DECLARE
      t card_types%ROWTYPE;
    BEGIN
      SELECT * INTO t FROM card_types WHERE environment_id = p_environment_id AND key = p_key FOR SHARE;
      IF NOT FOUND THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', 'card-type-not-found', 'cardTypeKey', p_key));
      END IF;
      RETURN t;
    END
    $function$;
