import type { Knex } from 'knex';

/**
 * Browsers (docs/api-conventions.md "Browsers (CORS)"): the origins of the web pages a
 * GameEnvironment allows (`spec.cors.allowedOrigins`), kept on its row so that the environment's
 * cached context carries them with everything else a request reads. Empty for every environment made
 * before, as for one whose document names none: no browser page is allowed. Expand only: the previous
 * release neither reads nor writes the column, and its inserts take the default.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE environments ADD COLUMN allowed_origins text[] NOT NULL DEFAULT '{}'`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE environments DROP COLUMN allowed_origins');
}
