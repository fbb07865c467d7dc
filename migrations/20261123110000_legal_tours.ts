import type { Knex } from 'knex';

/**
 * Legal documents and tours (spec §2 LegalDocument, LegalStanding, Tour; §4 Legal, Tours). Documents
 * and tours are content: written by their manifests (owner = `namespace/name` of the document that
 * wrote the row), read by players. A player's acceptances and completions go with the player
 * (ON DELETE CASCADE is the whole deletion step). Keys compare in byte order (COLLATE "C").
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE legal_documents (
      environment_id bigint NOT NULL REFERENCES environments(id) ON DELETE CASCADE,
      document text COLLATE "C" NOT NULL,
      owner text NOT NULL UNIQUE,
      title text NOT NULL,
      url text NOT NULL,
      version text NOT NULL,
      required boolean NOT NULL,
      PRIMARY KEY (environment_id, document)
    );

    -- Every version a player accepted, with when it was first accepted. No foreign key to the
    -- document: a version bump keeps the old acceptance (history), and a document taken away and
    -- put back finds its acceptances again.
    CREATE TABLE legal_acceptances (
      player_id text COLLATE "C" NOT NULL REFERENCES players(id) ON DELETE CASCADE,
      environment_id bigint NOT NULL,
      document text COLLATE "C" NOT NULL,
      version text NOT NULL,
      accepted_at timestamptz NOT NULL DEFAULT clock_timestamp(),
      PRIMARY KEY (player_id, document, version)
    );

    CREATE TABLE tours (
      environment_id bigint NOT NULL REFERENCES environments(id) ON DELETE CASCADE,
      id text COLLATE "C" NOT NULL,
      owner text NOT NULL UNIQUE,
      name text COLLATE "C" NOT NULL,
      enabled boolean NOT NULL,
      PRIMARY KEY (environment_id, id)
    );
    CREATE INDEX tours_listed ON tours (environment_id, name, id) WHERE enabled;

    CREATE TABLE tour_completions (
      player_id text COLLATE "C" NOT NULL REFERENCES players(id) ON DELETE CASCADE,
      environment_id bigint NOT NULL,
      tour_id text COLLATE "C" NOT NULL,
      completed_at timestamptz NOT NULL DEFAULT clock_timestamp(),
      PRIMARY KEY (player_id, tour_id)
    );
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE tour_completions, tours, legal_acceptances, legal_documents');
}
