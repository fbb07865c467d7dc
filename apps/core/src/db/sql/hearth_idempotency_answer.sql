CREATE OR REPLACE FUNCTION public.hearth_idempotency_answer(p_environment_id bigint, p_scope text, p_key text, p_status integer, p_body jsonb)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
    BEGIN
      UPDATE idempotency_records SET status = p_status, body = p_body
        WHERE environment_id = p_environment_id AND scope = p_scope AND key = p_key;
    END
    $function$;
