import type { Knex } from 'knex';

/**
 * Sessions (spec §2, §3, §4): a lobby with seats, a host and ready flags, then a match status a game
 * server reports. Seat changes lock the session row; the constraints below hold even if a code path
 * forgets to: one seat per player per session, at most one host per session.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE sessions (
      id text COLLATE "C" PRIMARY KEY,
      environment_id bigint NOT NULL REFERENCES environments(id) ON DELETE CASCADE,
      status text NOT NULL CHECK (status IN ('CONFIGURING', 'PREPARING_INSTANCE', 'AWAITING_PLAYERS', 'PLAYING', 'COMPLETE', 'ERROR')),
      game_mode text NOT NULL,
      map text NOT NULL,
      -- the project's seats held to the plan, fixed when the session is made
      seats integer NOT NULL CHECK (seats > 0),
      conclusion text,
      -- the game server's error text of a session in ERROR: for staff, never answered
      error text,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX sessions_environment ON sessions (environment_id, created_at);

    CREATE TABLE session_players (
      session_id text COLLATE "C" NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
      player_id text COLLATE "C" NOT NULL REFERENCES players(id) ON DELETE CASCADE,
      -- no foreign key: the session's own cascades it, and taking a seat then locks no environment row
      environment_id bigint NOT NULL,
      -- seats are listed in the order they were taken
      seat_order bigint GENERATED ALWAYS AS IDENTITY,
      player_name text NOT NULL,
      unique_net_id text,
      is_host boolean NOT NULL DEFAULT false,
      is_ready boolean NOT NULL DEFAULT false,
      joined_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (session_id, player_id)
    );
    CREATE UNIQUE INDEX session_players_one_host ON session_players (session_id) WHERE is_host;
    CREATE INDEX session_players_player ON session_players (environment_id, player_id);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE session_players, sessions;');
}
