import type { Knex } from 'knex';

/**
 * Symbol files (docs/crashes.md, "Symbol files"): one row per environment, label, version and file
 * name, stored under `symbols/<environmentId>/<label>/<version>/<name>`.
 *
 * A row pins what the last upload request promised (`size_bytes`, `sha256`, until `expires_at`); it
 * is listed only once `completed_at` is set, i.e. once the stored object was seen to have exactly
 * that size and digest (on disk by the API's own PUT; on S3 by HeadObject when the list is read,
 * `checked_at` remembering when a pending row was last looked at). A new request for the same name
 * replaces the pending one; one for other content also unlists the file until that content lands.
 * Names compare bytewise (COLLATE "C") so the keyset order is the same everywhere.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE symbol_files (
      id bigserial PRIMARY KEY,
      environment_id bigint NOT NULL REFERENCES environments(id) ON DELETE CASCADE,
      label text COLLATE "C" NOT NULL,
      version text COLLATE "C" NOT NULL,
      name text COLLATE "C" NOT NULL,
      size_bytes bigint NOT NULL CHECK (size_bytes > 0),
      sha256 text NOT NULL CHECK (sha256 ~ '^[0-9a-f]{64}$'),
      requested_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL,
      checked_at timestamptz,
      completed_at timestamptz,
      updated_at timestamptz NOT NULL,
      UNIQUE (environment_id, label, version, name)
    );
    CREATE INDEX symbol_files_pending ON symbol_files (environment_id, checked_at NULLS FIRST) WHERE completed_at IS NULL;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE IF EXISTS symbol_files');
}
