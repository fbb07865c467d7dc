CREATE OR REPLACE FUNCTION public.hearth_idempotency_claim(p_environment_id bigint, p_scope text, p_key text, p_fingerprint text)
 RETURNS TABLE(claimed boolean, conflict boolean, status integer, body jsonb)
 LANGUAGE plpgsql
AS $function$
    DECLARE
      v_claimed text;
      r idempotency_records%ROWTYPE;
    BEGIN
      INSERT INTO idempotency_records (environment_id, scope, key, fingerprint)
        VALUES (p_environment_id, p_scope, p_key, p_fingerprint)
        ON CONFLICT (environment_id, scope, key) DO NOTHING
        RETURNING idempotency_records.key INTO v_claimed;
      IF v_claimed IS NOT NULL THEN
        RETURN QUERY SELECT true, false, NULL::integer, NULL::jsonb;
        RETURN;
      END IF;
      SELECT * INTO r FROM idempotency_records
        WHERE idempotency_records.environment_id = p_environment_id AND idempotency_records.scope = p_scope AND idempotency_records.key = p_key;
      RETURN QUERY SELECT false, r.fingerprint IS DISTINCT FROM p_fingerprint, r.status, r.body;
    END
    $function$;
