import type { Knex } from 'knex';

/**
 * A session's version (docs/realtime.md "Fan-out"): raised by one by every change to the session,
 * under the lock the change holds on its row, and carried in the change's SessionEvent. Events are
 * published after commit, so two changes' events can reach a realtime process in the other order;
 * the version tells it which state is newer. Existing sessions start at 1, as a new one does. Expand
 * only: the previous release neither reads nor writes the column, and its inserts take the default.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE sessions ADD COLUMN version bigint NOT NULL DEFAULT 1');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE sessions DROP COLUMN version');
}
