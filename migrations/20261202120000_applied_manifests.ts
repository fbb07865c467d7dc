import type { Knex } from 'knex';

/**
 * The documents as applied (docs/cli.md "hearth get and describe"): every document `hearth apply` or
 * the operator reconciled, as it was last reconciled, so `hearth get` and `hearth describe` list what
 * is applied without a cluster. Written in the reconcile's own transaction (a refused document leaves
 * the previous one in place); `generation` counts the changes of its spec, as Kubernetes' does; a
 * document deleted (its clean-up run) keeps its row with `removed_at`, so what still names it can be
 * told that it is gone. `namespace` is '' for a cluster-scoped kind (Plan).
 *
 * Documents reconciled before this migration have no row until they are reconciled again (the next
 * `hearth apply` of them; the operator reconciles every object when it starts).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE manifest_documents (
      kind text COLLATE "C" NOT NULL,
      namespace text COLLATE "C" NOT NULL,
      name text COLLATE "C" NOT NULL,
      labels jsonb NOT NULL DEFAULT '{}',
      annotations jsonb NOT NULL DEFAULT '{}',
      spec jsonb NOT NULL,
      generation bigint NOT NULL DEFAULT 1 CHECK (generation >= 1),
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      removed_at timestamptz,
      PRIMARY KEY (kind, namespace, name)
    );
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE manifest_documents');
}
