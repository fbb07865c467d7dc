import type { Knex } from 'knex';

/**
 * The environment's stat counter back to ONE row per (environment, key, realm), and one function for
 * every increment (docs/progression.md "The environment-wide counter").
 *
 * The 16 shard rows of 20261126195700_stats.ts let increments from many connections pass one
 * another, but an increment could then only answer the total it read plus its own step, and two
 * increments in flight at once answered values the counter never held. An increment must answer the
 * counter's value right after it in one order of all increments, so the counter is one row again,
 * increments of it are serialized by its row lock, and throughput comes from the service instead:
 * the increments of one counter that arrive while a statement for it is in flight are sent together
 * as one statement (apps/core/src/stats/service.ts), which applies them in order under one row lock.
 *
 * The shards are merged by adding them up (their sum was kept within the 64-bit range by the old
 * function) and the shard column goes. `hearth_stat_increment`, the previous release's call, stays
 * with its signature as one step of the new function, so that release's code keeps working on this
 * schema (a rolling upgrade, a rollback).
 *
 * `hearth_stat_increments(environment, player or NULL, key, realm key, steps)` applies each step of
 * `steps` in order to one counter (a player's when a player is named, else the environment's),
 * creating it at 0 if it has none, and answers one row per step: its ordinal, the counter's value
 * right after it, or, for a step that would take the counter past the 64-bit range, no value and the
 * value it left untouched (`held`; the step is refused alone, the others go on). The counter is
 * written once. An unknown realm (`realm-not-found`) or player (`player-not-found`) refuses the whole
 * call (HM001), as before.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    LOCK TABLE environment_stats IN ACCESS EXCLUSIVE MODE;
    -- Each counter's sum into its lowest shard, the other shards gone.
    UPDATE environment_stats e SET value = m.total
      FROM (SELECT environment_id, key, realm_key, min(shard) AS shard, sum(value)::bigint AS total
              FROM environment_stats GROUP BY environment_id, key, realm_key) m
      WHERE e.environment_id = m.environment_id AND e.key = m.key AND e.realm_key = m.realm_key AND e.shard = m.shard;
    DELETE FROM environment_stats e WHERE EXISTS (
      SELECT 1 FROM environment_stats o
        WHERE o.environment_id = e.environment_id AND o.key = e.key AND o.realm_key = e.realm_key AND o.shard < e.shard);
    ALTER TABLE environment_stats DROP CONSTRAINT environment_stats_pkey;
    ALTER TABLE environment_stats DROP COLUMN shard;
    ALTER TABLE environment_stats ADD PRIMARY KEY (environment_id, key, realm_key);

    CREATE FUNCTION hearth_stat_increments(p_environment_id bigint, p_player_id text, p_key text, p_realm_key text, p_steps bigint[])
      RETURNS TABLE (step integer, step_value text, held text)
    LANGUAGE plpgsql AS $fn$
    DECLARE
      v_min constant bigint := -9223372036854775808;
      v_max constant bigint := 9223372036854775807;
      v_value bigint;
      v_by bigint;
      v_changed boolean := false;
    BEGIN
      IF p_realm_key <> '' AND NOT EXISTS (SELECT 1 FROM realms r WHERE r.environment_id = p_environment_id AND r.key = p_realm_key) THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', 'realm-not-found'));
      END IF;
      -- The counter's row, locked until the commit (made at 0 by its first increment; made by another
      -- transaction at the same moment, the insert waits for it and the second read finds it).
      IF p_player_id IS NOT NULL THEN
        PERFORM 1 FROM hearth_hold_player(p_environment_id, p_player_id);
        IF NOT FOUND THEN
          PERFORM hearth_refuse(jsonb_build_object('outcome', 'player-not-found'));
        END IF;
        SELECT s.value INTO v_value FROM player_stats s WHERE s.player_id = p_player_id AND s.key = p_key AND s.realm_key = p_realm_key FOR UPDATE;
        IF NOT FOUND THEN
          INSERT INTO player_stats (player_id, environment_id, key, realm_key, value) VALUES (p_player_id, p_environment_id, p_key, p_realm_key, 0) ON CONFLICT DO NOTHING;
          SELECT s.value INTO STRICT v_value FROM player_stats s WHERE s.player_id = p_player_id AND s.key = p_key AND s.realm_key = p_realm_key FOR UPDATE;
        END IF;
      ELSE
        SELECT e.value INTO v_value FROM environment_stats e WHERE e.environment_id = p_environment_id AND e.key = p_key AND e.realm_key = p_realm_key FOR UPDATE;
        IF NOT FOUND THEN
          INSERT INTO environment_stats (environment_id, key, realm_key, value) VALUES (p_environment_id, p_key, p_realm_key, 0) ON CONFLICT DO NOTHING;
          SELECT e.value INTO STRICT v_value FROM environment_stats e WHERE e.environment_id = p_environment_id AND e.key = p_key AND e.realm_key = p_realm_key FOR UPDATE;
        END IF;
      END IF;

      -- Each step in order; one past the range is refused alone (nothing wraps) and leaves the value as it was.
      FOR i IN 1 .. coalesce(array_length(p_steps, 1), 0) LOOP
        v_by := p_steps[i];
        step := i;
        IF (v_by > 0 AND v_value > v_max - v_by) OR (v_by < 0 AND v_value < v_min - v_by) THEN
          step_value := NULL;
          held := v_value::text;
        ELSE
          v_value := v_value + v_by;
          v_changed := true;
          step_value := v_value::text;
          held := NULL;
        END IF;
        RETURN NEXT;
      END LOOP;

      IF v_changed THEN
        IF p_player_id IS NOT NULL THEN
          UPDATE player_stats s SET value = v_value WHERE s.player_id = p_player_id AND s.key = p_key AND s.realm_key = p_realm_key;
        ELSE
          UPDATE environment_stats e SET value = v_value WHERE e.environment_id = p_environment_id AND e.key = p_key AND e.realm_key = p_realm_key;
        END IF;
      END IF;
    END
    $fn$;

    -- The previous release's call, kept for a rolling upgrade and a rollback (expand/contract,
    -- docs/operations.md): one step through the one-row function; p_shards no longer means anything.
    CREATE OR REPLACE FUNCTION hearth_stat_increment(p_environment_id bigint, p_player_id text, p_key text, p_realm_key text, p_by bigint, p_shards integer)
      RETURNS text
    LANGUAGE plpgsql AS $fn$
    DECLARE
      r record;
    BEGIN
      SELECT * INTO r FROM hearth_stat_increments(p_environment_id, p_player_id, p_key, p_realm_key, ARRAY[p_by]);
      IF r.step_value IS NULL THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', 'stat-out-of-range', 'held', r.held, 'requested', p_by::text));
      END IF;
      RETURN r.step_value;
    END
    $fn$;
  `);
}

/** Back to the shard design: the merged row becomes shard 0, and 20261126195700_stats.ts's function as it was. */
export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP FUNCTION hearth_stat_increments(bigint, text, text, text, bigint[]);
    ALTER TABLE environment_stats DROP CONSTRAINT environment_stats_pkey;
    ALTER TABLE environment_stats ADD COLUMN shard smallint NOT NULL DEFAULT 0;
    ALTER TABLE environment_stats ALTER COLUMN shard DROP DEFAULT;
    ALTER TABLE environment_stats ADD PRIMARY KEY (environment_id, key, realm_key, shard);

    CREATE OR REPLACE FUNCTION hearth_stat_increment(p_environment_id bigint, p_player_id text, p_key text, p_realm_key text, p_by bigint, p_shards integer)
      RETURNS text
    LANGUAGE plpgsql AS $fn$
    DECLARE
      v_min constant numeric := -9223372036854775808;
      v_max constant numeric := 9223372036854775807;
      v_safe constant numeric := 4611686018427387904; -- 2^62
      v_lock bigint;
      v_value bigint;
      v_total numeric;
    BEGIN
      IF p_realm_key <> '' AND NOT EXISTS (SELECT 1 FROM realms r WHERE r.environment_id = p_environment_id AND r.key = p_realm_key) THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', 'realm-not-found'));
      END IF;
      IF p_player_id IS NOT NULL THEN
        PERFORM 1 FROM hearth_hold_player(p_environment_id, p_player_id);
        IF NOT FOUND THEN
          PERFORM hearth_refuse(jsonb_build_object('outcome', 'player-not-found'));
        END IF;
        INSERT INTO player_stats AS s (player_id, environment_id, key, realm_key, value) VALUES (p_player_id, p_environment_id, p_key, p_realm_key, p_by)
          ON CONFLICT (player_id, key, realm_key) DO UPDATE SET value = s.value + EXCLUDED.value
          WHERE s.value::numeric + EXCLUDED.value BETWEEN v_min AND v_max
          RETURNING s.value INTO v_value;
        IF v_value IS NULL THEN
          SELECT s.value INTO v_value FROM player_stats s WHERE s.player_id = p_player_id AND s.key = p_key AND s.realm_key = p_realm_key;
          PERFORM hearth_refuse(jsonb_build_object('outcome', 'stat-out-of-range', 'held', v_value::text, 'requested', p_by::text));
        END IF;
        RETURN v_value::text;
      END IF;

      v_lock := hashtextextended(p_environment_id::text || '|' || p_key || '|' || p_realm_key, 0);
      PERFORM pg_advisory_xact_lock_shared(v_lock);
      SELECT coalesce(sum(e.value), 0) INTO v_total FROM environment_stats e
        WHERE e.environment_id = p_environment_id AND e.key = p_key AND e.realm_key = p_realm_key;
      IF abs(v_total) + abs(p_by) > v_safe THEN
        PERFORM pg_advisory_xact_lock(v_lock);
        SELECT coalesce(sum(e.value), 0) INTO v_total FROM environment_stats e
          WHERE e.environment_id = p_environment_id AND e.key = p_key AND e.realm_key = p_realm_key;
        IF v_total + p_by NOT BETWEEN v_min AND v_max THEN
          PERFORM hearth_refuse(jsonb_build_object('outcome', 'stat-out-of-range', 'held', v_total::text, 'requested', p_by::text));
        END IF;
      END IF;
      INSERT INTO environment_stats AS e (environment_id, key, realm_key, shard, value)
        VALUES (p_environment_id, p_key, p_realm_key, pg_backend_pid() % p_shards, p_by)
        ON CONFLICT (environment_id, key, realm_key, shard) DO UPDATE SET value = e.value + EXCLUDED.value
        WHERE e.value::numeric + EXCLUDED.value BETWEEN v_min AND v_max
        RETURNING e.value INTO v_value;
      IF v_value IS NULL THEN
        PERFORM hearth_refuse(jsonb_build_object('outcome', 'stat-out-of-range', 'held', v_total::text, 'requested', p_by::text));
      END IF;
      RETURN (v_total + p_by)::text;
    END
    $fn$;
  `);
}
