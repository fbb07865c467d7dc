import type { Knex } from 'knex';

/**
 * A currency move under an Idempotency-Key as ONE statement (docs/economy.md "Performance"): the
 * key's record is claimed, the move made (`hearth_currency_move`) and the record answered by one
 * function, so a credit is one round trip in autocommit instead of five (BEGIN, claim, move, answer,
 * COMMIT). The record's rules are those of runIdempotent (apps/core/src/idempotency.ts):
 *
 * - The claim is the same INSERT … ON CONFLICT DO NOTHING: a concurrent duplicate waits on the first's
 *   row until it commits, then finds the record (each statement of the function reads a new snapshot)
 *   and answers `replayed` with what the first kept, or `idempotency-conflict` when the key was used
 *   for another request (another fingerprint).
 * - A refusal raises SQLSTATE HM001 with the move's outcome row as JSON in DETAIL, so the statement,
 *   and with it the claim and whatever the move made, rolls back: the key is free again, as when
 *   runIdempotent's transaction rolls back. The service turns the outcome into the same refusal.
 * - The record keeps the move's outcome row (status 200): the service maps it to the Movement for a
 *   first answer and a replay alike (one mapping, apps/core/src/economy/service.ts movementOf).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE FUNCTION hearth_idempotent_currency_move(
      p_scope text,
      p_key text,
      p_fingerprint text,
      p_environment_id bigint,
      p_player_id text,
      p_currency_key text,
      p_kind text,
      p_amount bigint,
      p_allowance bigint,
      p_reason text,
      p_reference text,
      p_inventory_id text,
      p_realm_given boolean,
      p_realm_key text,
      p_new_inventory_id text,
      p_max_balance bigint
    ) RETURNS TABLE (replayed boolean, answer jsonb)
    LANGUAGE plpgsql AS $fn$
    DECLARE
      v_claimed text;
      v_fingerprint text;
      v_answer jsonb;
      v_move jsonb;
    BEGIN
      INSERT INTO idempotency_records (environment_id, scope, key, fingerprint)
        VALUES (p_environment_id, p_scope, p_key, p_fingerprint)
        ON CONFLICT (environment_id, scope, key) DO NOTHING
        RETURNING key INTO v_claimed;
      IF v_claimed IS NULL THEN
        SELECT r.fingerprint, r.body INTO v_fingerprint, v_answer FROM idempotency_records r
          WHERE r.environment_id = p_environment_id AND r.scope = p_scope AND r.key = p_key;
        IF v_fingerprint IS DISTINCT FROM p_fingerprint THEN
          RAISE EXCEPTION USING ERRCODE = 'HM001', MESSAGE = 'idempotency-conflict', DETAIL = '{"outcome":"idempotency-conflict"}';
        END IF;
        RETURN QUERY SELECT true, v_answer;
        RETURN;
      END IF;

      SELECT to_jsonb(m) INTO v_move FROM hearth_currency_move(
        p_environment_id, p_player_id, p_currency_key, p_kind, p_amount, p_allowance, p_reason, p_reference,
        p_inventory_id, p_realm_given, p_realm_key, p_new_inventory_id, p_max_balance) m;
      IF v_move->>'outcome' <> 'moved' THEN
        RAISE EXCEPTION USING ERRCODE = 'HM001', MESSAGE = v_move->>'outcome', DETAIL = v_move::text;
      END IF;

      UPDATE idempotency_records SET status = 200, body = v_move
        WHERE environment_id = p_environment_id AND scope = p_scope AND key = p_key;
      RETURN QUERY SELECT false, v_move;
    END
    $fn$;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP FUNCTION IF EXISTS hearth_idempotent_currency_move');
}
