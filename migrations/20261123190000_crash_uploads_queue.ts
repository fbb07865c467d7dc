import type { Knex } from 'knex';
import { CRASH_QUEUE_SCHEMA, CRASH_UPLOAD_QUEUE, CRASH_UPLOAD_QUEUE_OPTIONS, crashQueueSchemaSql } from '../apps/core/src/crashes/queue';

/**
 * Crash uploads and their job queue (docs/crashes.md).
 *
 * - `crash_uploads`: one row per accepted upload, written in the same transaction as its job, so an
 *   upload is either recorded and queued or neither. The body itself is in object storage under
 *   `storage_key` (written before the row). The reporter's query parameters are kept as sent (cut to
 *   256 characters; they are not trusted). `state` moves once: `queued` → `recorded` (a crash was
 *   recorded from it, `crash_id`) or `poison` (`poison_reason`; never retried again).
 * - pg-boss's own schema (`pgboss`), installed here rather than by the processes, so `hearth migrate`
 *   is the one step that changes the database and the API can queue without starting a boss, and the
 *   `crash-upload` queue with its retry policy.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE crash_uploads (
      id text COLLATE "C" PRIMARY KEY,
      seq bigserial NOT NULL UNIQUE,
      environment_id bigint NOT NULL REFERENCES environments(id) ON DELETE CASCADE,
      storage_key text NOT NULL,
      size_bytes bigint NOT NULL CHECK (size_bytes > 0),
      sha256 text NOT NULL CHECK (sha256 ~ '^[0-9a-f]{64}$'),
      app_id text,
      app_version text,
      app_environment text,
      upload_type text,
      user_id text,
      client_address text NOT NULL,
      received_at timestamptz NOT NULL DEFAULT clock_timestamp(),
      state text NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'recorded', 'poison')),
      poison_reason text,
      finished_at timestamptz,
      crash_id text COLLATE "C",
      CHECK ((state = 'poison') = (poison_reason IS NOT NULL)),
      CHECK ((state = 'queued') = (finished_at IS NULL))
    );
    CREATE INDEX crash_uploads_environment ON crash_uploads (environment_id, seq);
  `);
  await knex.raw(crashQueueSchemaSql());
  await knex.raw(`SELECT ${CRASH_QUEUE_SCHEMA}.create_queue(?, ?::json)`, [CRASH_UPLOAD_QUEUE, JSON.stringify(CRASH_UPLOAD_QUEUE_OPTIONS)]);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`DROP SCHEMA IF EXISTS ${CRASH_QUEUE_SCHEMA} CASCADE`);
  await knex.raw('DROP TABLE IF EXISTS crash_uploads');
}
