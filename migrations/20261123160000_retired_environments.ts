import type { Knex } from 'knex';

/**
 * Deleting a GameEnvironment or Project document retires its row instead of deleting it
 * (docs/manifests.md "Deletion", docs/kubernetes.md "Deleting resources"): a deleted custom resource,
 * perhaps a GitOps mistake, must never take players' saves, currencies or purchases with it. A
 * retired environment resolves by no app key, id or name, so every credential of it is refused; its
 * rows stay, and its app key stays reserved for it (the UNIQUE on app_key already holds it), so
 * applying the same GameEnvironment again brings everything back.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE environments ADD COLUMN retired_at timestamptz;
    ALTER TABLE projects ADD COLUMN retired_at timestamptz;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE environments DROP COLUMN retired_at;
    ALTER TABLE projects DROP COLUMN retired_at;
  `);
}
