CREATE OR REPLACE FUNCTION public.hearth_check_card_template(p_environment_id bigint, p_key text)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
    DECLARE
      v_enabled boolean;
    BEGIN
      IF p_key IS NULL THEN
        RETURN;
      END IF;
      SELECT enabled INTO v_enabled FROM card_templates WHERE environment_id = p_environment_id AND key = p_key FOR SHARE;
      IF NOT FOUND THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', 'card-template-not-found', 'cardTemplateKey', p_key));
      END IF;
      IF NOT v_enabled THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', 'card-template-disabled', 'cardTemplateKey', p_key));
      END IF;
    END
    $function$;
