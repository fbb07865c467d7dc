import type { Knex } from 'knex';

/**
 * Stats (docs/progression.md "Stats"): 64-bit signed counters, a player's and the environment's,
 * each kept apart per realm (`realm_key` '' for increments that name no realm: realm keys are never
 * empty). A read without a realm adds up every realm's counter of the key.
 *
 * A stat needs no definition: its key names it, and it counts from 0 at its first increment.
 *
 * The environment's counter is the hottest row a game has (every server of every match adds to it),
 * so it is kept in `shards` rows: an increment adds to one shard (the connection's own, by backend
 * pid), so increments from many connections rarely wait on one another, and a read sums the shards.
 *
 * `hearth_stat_increment` refuses (HM001, `stat-out-of-range`) a move that would take the counter
 * past the 64-bit range; nothing wraps. A player's counter is one row, checked under its row lock. The
 * environment's total is the sum of shards no transaction locks whole, so while the total and the
 * step stay within 2^62 an increment only takes a shared advisory lock of the counter and checks the
 * total it reads; beyond that, it takes the lock exclusively (waiting for every increment in flight),
 * reads the exact total and checks it. Increments in flight each add at most 2^53 (JSON's exact
 * integers), so fewer than 512 at one instant cannot carry a total from 2^62 past 2^63.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE player_stats (
      player_id text COLLATE "C" NOT NULL REFERENCES players(id) ON DELETE CASCADE,
      environment_id bigint NOT NULL,
      key text COLLATE "C" NOT NULL,
      realm_key text COLLATE "C" NOT NULL,
      value bigint NOT NULL,
      PRIMARY KEY (player_id, key, realm_key)
    );

    CREATE TABLE environment_stats (
      environment_id bigint NOT NULL REFERENCES environments(id) ON DELETE CASCADE,
      key text COLLATE "C" NOT NULL,
      realm_key text COLLATE "C" NOT NULL,
      shard smallint NOT NULL,
      value bigint NOT NULL,
      PRIMARY KEY (environment_id, key, realm_key, shard)
    );

    CREATE FUNCTION hearth_stat_increment(p_environment_id bigint, p_player_id text, p_key text, p_realm_key text, p_by bigint, p_shards integer)
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
        -- Under the row's lock: an increment that would leave the range updates nothing and answers no row.
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
        -- Near the edge: every increment in flight finishes first, so the total read is exact.
        PERFORM pg_advisory_xact_lock(v_lock);
        SELECT coalesce(sum(e.value), 0) INTO v_total FROM environment_stats e
          WHERE e.environment_id = p_environment_id AND e.key = p_key AND e.realm_key = p_realm_key;
        IF v_total + p_by NOT BETWEEN v_min AND v_max THEN
          PERFORM hearth_refuse(jsonb_build_object('outcome', 'stat-out-of-range', 'held', v_total::text, 'requested', p_by::text));
        END IF;
      END IF;
      -- One shard, by connection: two connections share one only when their pids meet modulo p_shards.
      -- A shard is a bigint too: one that would leave the range (only when other shards hold the
      -- opposite sign near the edge) refuses rather than wraps.
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

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP FUNCTION hearth_stat_increment(bigint, text, text, text, bigint, integer); DROP TABLE environment_stats, player_stats');
}
