import type { Knex } from 'knex';

/**
 * A deleted Plan document retires its plan (docs/kubernetes.md "Deleting resources"): the row stays,
 * because retired projects still name it, but no project can be put on it until the Plan is applied
 * again. Before this, a deleted Plan's row stayed live and new Projects naming it became Ready while
 * the cluster showed no such Plan.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE plans ADD COLUMN retired_at timestamptz');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE plans DROP COLUMN retired_at');
}
