import type { Knex } from 'knex';

/**
 * Custom dashboards (docs/dashboards.md): the people a project's DashboardMember documents let in,
 * with their permissions per environment; when a player was last seen (set by every sign-in and
 * refresh); and a trigram index so GET /players?q= finds part of a display name without a scan.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE EXTENSION IF NOT EXISTS pg_trgm;

    -- One row per DashboardMember document. id is the account id a dashboard token names: a member
    -- deleted and made again is another account, so tokens of the first are refused.
    CREATE TABLE dashboard_members (
      id text COLLATE "C" PRIMARY KEY,
      project_id bigint NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
      manifest_namespace text NOT NULL,
      manifest_name text NOT NULL,
      subject text,
      email text,
      disabled boolean NOT NULL DEFAULT false,
      updated_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (manifest_namespace, manifest_name),
      CHECK (subject IS NOT NULL OR email IS NOT NULL)
    );
    CREATE INDEX dashboard_members_subject ON dashboard_members (project_id, subject) WHERE subject IS NOT NULL;
    CREATE INDEX dashboard_members_email ON dashboard_members (project_id, lower(email)) WHERE email IS NOT NULL;

    CREATE TABLE dashboard_member_access (
      member_id text COLLATE "C" NOT NULL REFERENCES dashboard_members(id) ON DELETE CASCADE,
      environment_id bigint NOT NULL REFERENCES environments(id) ON DELETE CASCADE,
      permissions text[] NOT NULL,
      PRIMARY KEY (member_id, environment_id)
    );

    -- A project's dashboard client secret, as the operator carries it from the Kubernetes Secret the
    -- Project names: sealed to the API processes' public key (tenancy/project-secrets.ts), with
    -- where it came from (the Secret's uid, resourceVersion and key, and the key it was sealed to).
    ALTER TABLE projects ADD COLUMN dashboard_client_secret text, ADD COLUMN dashboard_client_secret_origin text;
    CREATE TABLE dashboard_secret_key (
      id integer PRIMARY KEY CHECK (id = 1),
      public_key text NOT NULL,
      updated_at timestamptz NOT NULL DEFAULT now()
    );

    ALTER TABLE players ADD COLUMN last_seen_at timestamptz;
    CREATE INDEX players_display_name_trgm ON players USING gin (display_name gin_trgm_ops);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP INDEX players_display_name_trgm;
    ALTER TABLE players DROP COLUMN last_seen_at;
    DROP TABLE dashboard_secret_key;
    ALTER TABLE projects DROP COLUMN dashboard_client_secret, DROP COLUMN dashboard_client_secret_origin;
    DROP TABLE dashboard_member_access;
    DROP TABLE dashboard_members;
  `);
}
