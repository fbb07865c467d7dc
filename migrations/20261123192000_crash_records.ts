import type { Knex } from 'knex';

/**
 * Recorded crashes and the issues they are grouped into (docs/crashes.md, "Grouping").
 *
 * - `crash_issues`: one per environment and fingerprint (sha256 of the callstack's first normalised
 *   frames); `crash_count`, `first_seen` and `last_seen` (by when Hearth received the crashes) kept
 *   in step by the transaction that records each crash. `crash_issue_versions`: the build versions
 *   an issue was seen in, with their own counts.
 * - `crashes`: one per upload (`upload_id` UNIQUE: an upload is never recorded twice, whatever the
 *   retries); the context's fields as columns, the files' object keys in `files`. `player_id` only
 *   when the game wrote an existing player's id in GameData; a deleted player's crashes stay, unlinked.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE crash_issues (
      id bigserial PRIMARY KEY,
      environment_id bigint NOT NULL REFERENCES environments(id) ON DELETE CASCADE,
      fingerprint text NOT NULL CHECK (fingerprint ~ '^[0-9a-f]{64}$'),
      title text NOT NULL,
      frames text[] NOT NULL,
      crash_count bigint NOT NULL CHECK (crash_count > 0),
      first_seen timestamptz NOT NULL,
      last_seen timestamptz NOT NULL,
      UNIQUE (environment_id, fingerprint)
    );
    CREATE INDEX crash_issues_recent ON crash_issues (environment_id, last_seen DESC, id DESC);

    CREATE TABLE crash_issue_versions (
      issue_id bigint NOT NULL REFERENCES crash_issues(id) ON DELETE CASCADE,
      version text NOT NULL,
      crash_count bigint NOT NULL CHECK (crash_count > 0),
      first_seen timestamptz NOT NULL,
      last_seen timestamptz NOT NULL,
      PRIMARY KEY (issue_id, version)
    );

    CREATE TABLE crashes (
      id text COLLATE "C" PRIMARY KEY,
      environment_id bigint NOT NULL REFERENCES environments(id) ON DELETE CASCADE,
      upload_id text COLLATE "C" NOT NULL UNIQUE REFERENCES crash_uploads(id) ON DELETE CASCADE,
      issue_id bigint NOT NULL REFERENCES crash_issues(id) ON DELETE CASCADE,
      layout text NOT NULL CHECK (layout IN ('ue5', 'ue4')),
      crash_guid text,
      type text NOT NULL,
      error_message text,
      callstack text,
      portable_callstack text,
      engine_version text,
      build_version text,
      build_configuration text,
      platform text,
      game_name text,
      executable_name text,
      user_id text,
      user_name text,
      epic_account_id text,
      player_id text COLLATE "C" REFERENCES players(id) ON DELETE SET NULL,
      game_data jsonb NOT NULL DEFAULT '{}',
      crashed_at timestamptz,
      received_at timestamptz NOT NULL,
      recorded_at timestamptz NOT NULL DEFAULT clock_timestamp(),
      files jsonb NOT NULL
    );
    CREATE INDEX crashes_issue ON crashes (issue_id, received_at DESC, id);
    CREATE INDEX crashes_player ON crashes (player_id) WHERE player_id IS NOT NULL;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE IF EXISTS crashes; DROP TABLE IF EXISTS crash_issue_versions; DROP TABLE IF EXISTS crash_issues;');
}
