import type { Knex } from 'knex';

/**
 * The kernel's tables. Every runtime row carries its environment and every query filters by it.
 * Names and keys compare in byte order (COLLATE "C") so listings are stable across machines.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE plans (
      name text PRIMARY KEY,
      spec jsonb NOT NULL,
      updated_at timestamptz NOT NULL DEFAULT now()
    );

    CREATE TABLE projects (
      id bigserial PRIMARY KEY,
      namespace text NOT NULL,
      name text NOT NULL,
      plan_name text NOT NULL REFERENCES plans(name),
      spec jsonb NOT NULL,
      updated_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (namespace, name)
    );

    CREATE TABLE environments (
      id bigserial PRIMARY KEY,
      project_id bigint NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
      namespace text NOT NULL,
      name text NOT NULL,
      app_key text NOT NULL UNIQUE,
      -- kept in step with players (under this row's lock) so the plan's player cap is checked in O(1)
      player_count bigint NOT NULL DEFAULT 0,
      updated_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (namespace, name)
    );

    -- Only the hash of a key's secret is stored; secret_hint is the few characters the console shows.
    CREATE TABLE server_keys (
      key_id text PRIMARY KEY,
      environment_id bigint NOT NULL REFERENCES environments(id) ON DELETE CASCADE,
      name text NOT NULL,
      secret_hash bytea NOT NULL,
      secret_hint text NOT NULL,
      manifest_namespace text,
      manifest_name text,
      created_at timestamptz NOT NULL DEFAULT now(),
      last_used_at timestamptz,
      revoked_at timestamptz
    );
    CREATE INDEX server_keys_live ON server_keys (environment_id) WHERE revoked_at IS NULL;
    CREATE UNIQUE INDEX server_keys_manifest ON server_keys (manifest_namespace, manifest_name) WHERE revoked_at IS NULL AND manifest_name IS NOT NULL;

    -- Token signing keys; the private half is encrypted with the master key (AES-256-GCM).
    CREATE TABLE signing_keys (
      kid text PRIMARY KEY,
      public_jwk jsonb NOT NULL,
      private_key_encrypted text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      retired_at timestamptz
    );

    CREATE TABLE players (
      id text COLLATE "C" PRIMARY KEY,
      environment_id bigint NOT NULL REFERENCES environments(id) ON DELETE CASCADE,
      display_name text,
      created_at timestamptz NOT NULL DEFAULT now(),
      -- sign out everywhere: tokens whose iat (whole seconds) is before this are refused
      tokens_valid_after bigint NOT NULL DEFAULT 0
    );
    CREATE INDEX players_environment ON players (environment_id, created_at DESC, id);

    CREATE TABLE player_identities (
      environment_id bigint NOT NULL REFERENCES environments(id) ON DELETE CASCADE,
      provider text NOT NULL,
      subject text NOT NULL,
      player_id text COLLATE "C" NOT NULL REFERENCES players(id) ON DELETE CASCADE,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (environment_id, provider, subject)
    );
    CREATE INDEX player_identities_player ON player_identities (player_id);

    -- A refresh token works once; its answer is kept (encrypted) for 60 s so a client that lost it can retry.
    CREATE TABLE refresh_tokens_used (
      jti text PRIMARY KEY,
      player_id text COLLATE "C" NOT NULL REFERENCES players(id) ON DELETE CASCADE,
      used_at timestamptz NOT NULL DEFAULT now(),
      answer_encrypted text NOT NULL
    );
    CREATE INDEX refresh_tokens_used_at ON refresh_tokens_used (used_at);

    -- Idempotency records live in the same transaction as the effect they guard.
    CREATE TABLE idempotency_records (
      environment_id bigint NOT NULL REFERENCES environments(id) ON DELETE CASCADE,
      scope text NOT NULL,
      key text NOT NULL,
      fingerprint text NOT NULL,
      status integer,
      body jsonb,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (environment_id, scope, key)
    );
    CREATE INDEX idempotency_records_created ON idempotency_records (created_at);

    -- Content (GameConfig): rows are owned by the manifest that wrote them.
    CREATE TABLE config_values (
      environment_id bigint NOT NULL REFERENCES environments(id) ON DELETE CASCADE,
      key text COLLATE "C" NOT NULL,
      owner text NOT NULL,
      group_name text,
      type text NOT NULL,
      value jsonb,
      PRIMARY KEY (environment_id, key)
    );
    CREATE INDEX config_values_group ON config_values (environment_id, group_name, key);

    CREATE TABLE config_tables (
      environment_id bigint NOT NULL REFERENCES environments(id) ON DELETE CASCADE,
      key text COLLATE "C" NOT NULL,
      owner text NOT NULL,
      name text NOT NULL,
      description text,
      group_name text,
      columns jsonb NOT NULL,
      rows jsonb NOT NULL,
      PRIMARY KEY (environment_id, key)
    );

    CREATE TABLE flags (
      environment_id bigint NOT NULL REFERENCES environments(id) ON DELETE CASCADE,
      name text COLLATE "C" NOT NULL,
      owner text NOT NULL,
      enabled boolean NOT NULL,
      PRIMARY KEY (environment_id, name)
    );

    -- Bumped whenever an environment's content of a kind changes; ETags derive from it.
    CREATE TABLE content_versions (
      environment_id bigint NOT NULL REFERENCES environments(id) ON DELETE CASCADE,
      kind text NOT NULL,
      version bigint NOT NULL,
      PRIMARY KEY (environment_id, kind)
    );
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TABLE content_versions, flags, config_tables, config_values, idempotency_records,
      refresh_tokens_used, player_identities, players, signing_keys, server_keys, environments,
      projects, plans;
  `);
}
