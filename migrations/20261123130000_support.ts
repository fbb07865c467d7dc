import type { Knex } from 'knex';

/**
 * Support filings (spec §4 Support): a player's support requests and their reports of other players,
 * kept for staff (`hearth support list`). One table for both kinds, because both count against one
 * limit (ten filings an hour per player, counted from these rows: docs/support.md).
 *
 * Deleting a player deletes what they filed (their words and contact address are theirs), and detaches
 * the reports others filed about them (`reported_player_id` becomes null; the report stays for staff).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE support_filings (
      id text COLLATE "C" PRIMARY KEY,
      environment_id bigint NOT NULL REFERENCES environments(id) ON DELETE CASCADE,
      kind text NOT NULL CHECK (kind IN ('request', 'report')),
      -- who filed it
      player_id text COLLATE "C" NOT NULL REFERENCES players(id) ON DELETE CASCADE,
      created_at timestamptz NOT NULL DEFAULT now(),
      -- a request
      subject text,
      message text,
      contact_email text,
      -- a report: the player reported (null once that player was deleted), why, and what happened
      reported_player_id text COLLATE "C" REFERENCES players(id) ON DELETE SET NULL,
      reason text,
      details text,
      CHECK (
        (kind = 'request' AND subject IS NOT NULL AND message IS NOT NULL AND reason IS NULL AND details IS NULL AND reported_player_id IS NULL)
        OR (kind = 'report' AND reason IS NOT NULL AND subject IS NULL AND message IS NULL AND contact_email IS NULL)
      )
    );
    -- the filing limit counts one player's filings of the current hour
    CREATE INDEX support_filings_player ON support_filings (player_id, created_at);
    -- staff lists: newest first, per environment and kind
    CREATE INDEX support_filings_environment ON support_filings (environment_id, kind, created_at DESC, id);
    -- deleting a player detaches the reports about them
    CREATE INDEX support_filings_reported ON support_filings (reported_player_id) WHERE reported_player_id IS NOT NULL;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE support_filings;');
}
