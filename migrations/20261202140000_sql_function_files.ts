import type { Knex } from 'knex';

/**
 * The database functions live in source files now, one per function beside the area that owns it
 * (apps/core/src/<area>/sql/<name>.sql), and are applied after the migrations by a repeatable step
 * (apps/core/src/db/sql-functions.ts), as Flyway's repeatable migrations are: a file whose content
 * changed is run again. This table remembers what each file held when it was last applied. Migrations
 * up to this one keep the functions' history; after it, no migration defines a function
 * (test/core/sql-functions.test.ts). Expand only: the previous release neither reads nor writes it.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE hearth_sql_functions (
      file text PRIMARY KEY,
      sha256 text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE hearth_sql_functions');
}
