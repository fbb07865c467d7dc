import type { Knex } from 'knex';

/**
 * One idempotency protocol (docs/api-conventions.md "Idempotency", docs/architecture.md "Money
 * engine"): the rules of an Idempotency-Key's record are written once, here, and both ways a record
 * is kept use them: the money engine's one statement (`hearth_idempotent_move`) and the pipeline's
 * transaction around a handler that keeps no record of its own (`runIdempotent`).
 *
 * - `hearth_idempotency_claim`: claims the key for this request (INSERT … ON CONFLICT DO NOTHING: a
 *   concurrent duplicate waits on the first's row until it commits or rolls back), or answers what the
 *   key's record holds and whether it was kept for another request (another fingerprint). Each
 *   statement of a PL/pgSQL function reads a new snapshot, so a duplicate that waited sees the record
 *   the first committed; a first that rolled back left no row, and the duplicate claims the key.
 * - `hearth_idempotency_answer`: keeps the answer in the claimed record, in the claim's transaction.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE FUNCTION hearth_idempotency_claim(p_environment_id bigint, p_scope text, p_key text, p_fingerprint text)
      RETURNS TABLE (claimed boolean, conflict boolean, status integer, body jsonb)
    LANGUAGE plpgsql AS $fn$
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
    $fn$;

    CREATE FUNCTION hearth_idempotency_answer(p_environment_id bigint, p_scope text, p_key text, p_status integer, p_body jsonb) RETURNS void
    LANGUAGE plpgsql AS $fn$
    BEGIN
      UPDATE idempotency_records SET status = p_status, body = p_body
        WHERE environment_id = p_environment_id AND scope = p_scope AND key = p_key;
    END
    $fn$;

    CREATE OR REPLACE FUNCTION hearth_idempotent_move(
      p_scope text, p_key text, p_fingerprint text,
      p_environment_id bigint, p_player_id text, p_kind text, p_request jsonb, p_max_balance bigint
    ) RETURNS TABLE (replayed boolean, answer jsonb)
    LANGUAGE plpgsql AS $fn$
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
    $fn$;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE OR REPLACE FUNCTION hearth_idempotent_move(
      p_scope text, p_key text, p_fingerprint text,
      p_environment_id bigint, p_player_id text, p_kind text, p_request jsonb, p_max_balance bigint
    ) RETURNS TABLE (replayed boolean, answer jsonb)
    LANGUAGE plpgsql AS $fn$
    DECLARE
      v_claimed text;
      v_fingerprint text;
      v_answer jsonb;
    BEGIN
      INSERT INTO idempotency_records (environment_id, scope, key, fingerprint)
        VALUES (p_environment_id, p_scope, p_key, p_fingerprint)
        ON CONFLICT (environment_id, scope, key) DO NOTHING
        RETURNING key INTO v_claimed;
      IF v_claimed IS NULL THEN
        SELECT r.fingerprint, r.body INTO v_fingerprint, v_answer FROM idempotency_records r
          WHERE r.environment_id = p_environment_id AND r.scope = p_scope AND r.key = p_key;
        IF v_fingerprint IS DISTINCT FROM p_fingerprint THEN
          PERFORM hearth_refuse('{"outcome":"idempotency-conflict"}'::jsonb);
        END IF;
        RETURN QUERY SELECT true, v_answer;
        RETURN;
      END IF;
      v_answer := hearth_move(p_environment_id, p_player_id, p_kind, p_request, p_max_balance);
      UPDATE idempotency_records SET status = 200, body = v_answer
        WHERE environment_id = p_environment_id AND scope = p_scope AND key = p_key;
      RETURN QUERY SELECT false, v_answer;
    END
    $fn$;
    DROP FUNCTION hearth_idempotency_answer(bigint, text, text, integer, jsonb);
    DROP FUNCTION hearth_idempotency_claim(bigint, text, text, text);
  `);
}
