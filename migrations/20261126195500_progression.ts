import type { Knex } from 'knex';

/**
 * Progression (docs/progression.md): skill tree definitions (written by SkillTree manifests, owner =
 * `namespace/name` of the document), the skill nodes players unlocked, and players' XP per track.
 *
 * A node's key is its primary key within the environment: the unlock route names a node without its
 * tree, so two trees cannot claim one key (the reconciler says which tree holds it; the key makes it
 * so under any race). Nodes go with their tree (ON DELETE CASCADE) and are rewritten whole when the
 * tree changes. What players unlocked refers to no definition by a foreign key: a tree deleted and
 * applied again finds its players' nodes where they were. Players' rows go with the player.
 *
 * XP is a figure like a balance: never past 2^53-1, so every JSON reader keeps it exactly.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE skill_trees (
      environment_id bigint NOT NULL REFERENCES environments(id) ON DELETE CASCADE,
      key text COLLATE "C" NOT NULL,
      owner text NOT NULL UNIQUE,
      name text NOT NULL,
      description text NOT NULL,
      hidden boolean NOT NULL,
      updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
      PRIMARY KEY (environment_id, key)
    );

    CREATE TABLE skill_nodes (
      environment_id bigint NOT NULL,
      key text COLLATE "C" NOT NULL,
      tree_key text COLLATE "C" NOT NULL,
      position integer NOT NULL,
      name text NOT NULL,
      description text NOT NULL,
      icon text,
      price_rule text NOT NULL CHECK (price_rule IN ('all', 'any')),
      parents jsonb NOT NULL,
      prices jsonb NOT NULL,
      requires jsonb NOT NULL,
      PRIMARY KEY (environment_id, key),
      FOREIGN KEY (environment_id, tree_key) REFERENCES skill_trees (environment_id, key) ON DELETE CASCADE ON UPDATE CASCADE
    );
    CREATE INDEX skill_nodes_of_tree ON skill_nodes (environment_id, tree_key, position);

    CREATE TABLE player_skill_nodes (
      player_id text COLLATE "C" NOT NULL REFERENCES players(id) ON DELETE CASCADE,
      environment_id bigint NOT NULL,
      node_key text COLLATE "C" NOT NULL,
      unlocked_at timestamptz NOT NULL DEFAULT clock_timestamp(),
      PRIMARY KEY (player_id, node_key)
    );

    CREATE TABLE player_xp (
      player_id text COLLATE "C" NOT NULL REFERENCES players(id) ON DELETE CASCADE,
      environment_id bigint NOT NULL,
      track text COLLATE "C" NOT NULL,
      xp bigint NOT NULL CHECK (xp BETWEEN 0 AND 9007199254740991),
      PRIMARY KEY (player_id, track)
    );
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE player_xp, player_skill_nodes, skill_nodes, skill_trees');
}
