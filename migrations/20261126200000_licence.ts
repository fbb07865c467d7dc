import type { Knex } from 'knex';

/**
 * Licences for client plugins (docs/licence.md): an organisation (a project) holds licence keys, and
 * each machine that activates takes one of its plan's `licenceSeats`. Licence tokens are signed by a
 * key set of their own, kept in `signing_keys` beside the player tokens' set.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE signing_keys ADD COLUMN key_set text NOT NULL DEFAULT 'player';
    CREATE INDEX signing_keys_by_set ON signing_keys (key_set, retired_at);

    CREATE TABLE licence_keys (
      key_id text PRIMARY KEY,
      project_id bigint NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
      name text NOT NULL,
      secret_hash bytea NOT NULL,
      secret_hint text NOT NULL,
      manifest_namespace text,
      manifest_name text,
      created_at timestamptz NOT NULL DEFAULT now(),
      last_used_at timestamptz,
      revoked_at timestamptz
    );
    CREATE INDEX licence_keys_of_project ON licence_keys (project_id);
    CREATE UNIQUE INDEX licence_keys_manifest ON licence_keys (manifest_namespace, manifest_name) WHERE revoked_at IS NULL AND manifest_name IS NOT NULL;

    -- One row per machine holding a seat; the project row is locked while seats are counted.
    CREATE TABLE licence_seats (
      project_id bigint NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
      machine_id text COLLATE "C" NOT NULL,
      product text NOT NULL,
      version text NOT NULL,
      activated_at timestamptz NOT NULL DEFAULT now(),
      checked_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (project_id, machine_id)
    );
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TABLE licence_seats;
    DROP TABLE licence_keys;
    DELETE FROM signing_keys WHERE key_set <> 'player';
    DROP INDEX signing_keys_by_set;
    ALTER TABLE signing_keys DROP COLUMN key_set;
  `);
}
