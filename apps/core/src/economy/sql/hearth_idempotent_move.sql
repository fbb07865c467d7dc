CREATE OR REPLACE FUNCTION public.hearth_idempotent_move(p_scope text, p_key text, p_fingerprint text, p_environment_id bigint, p_player_id text, p_kind text, p_request jsonb, p_max_balance bigint)
 RETURNS TABLE(replayed boolean, answer jsonb)
 LANGUAGE plpgsql
AS $function$
    DECLARE
      c record;
      v_answer jsonb;
    BEGIN
      SELECT * INTO c FROM hearth_idempotency_claim(p_environment_id, p_scope, p_key, p_fingerprint);
      IF NOT c.claimed THEN
        IF c.conflict THEN
          PERFORM hearth_refuse('{"outcome":"idempotency-conflict"}'::jsonb);
        END IF;
        RETURN QUERY SELECT true, c.body;
        RETURN;
      END IF;
      v_answer := hearth_move(p_environment_id, p_player_id, p_kind, p_request, p_max_balance);
      PERFORM hearth_idempotency_answer(p_environment_id, p_scope, p_key, 200, v_answer);
      RETURN QUERY SELECT false, v_answer;
    END
    $function$;
