/**
 * GET /players for custom dashboards: an environment's players, newest first, and the search `q`.
 * `q` finds a player by part of the display name (any position, without case), or by the player's
 * id or an identity's subject exactly. It never finds anybody by e-mail: Hearth keeps no player's
 * e-mail, and a `q` shaped like an e-mail address matches nothing, even where a game server used
 * e-mail addresses as its subjects. Names are matched through a trigram index (pg_trgm), so a `q` of
 * 3 characters or more is found without reading the environment's players one by one.
 */
import type { Queryable } from '../db/knex';
import { type CursorCodec, keysetPage, type Page } from '../pagination';
import type { DashboardPlayer } from '../shapes';
import type { EnvironmentContext } from '../tenancy/environments';

export interface PlayerSearch {
  q?: string;
  limit?: number;
  cursor?: string;
}

interface PlayerRow {
  id: string;
  display_name: string | null;
  created_at: Date;
  /** created_at as PostgreSQL writes it: exact to the microsecond, for the cursor. */
  created_key: string;
  last_seen_at: Date | null;
}

/** The providers of player identities (players/service.ts IdentityProvider), named so the subject lookup uses its index. */
const IDENTITY_PROVIDERS = ['server', 'idp'];
const E_MAIL = /^[^@\s]+@[^@\s]+\.[^@\s]+$/;

function likePattern(q: string): string {
  return `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

export async function listPlayers(db: Queryable, cursors: CursorCodec, env: EnvironmentContext, search: PlayerSearch): Promise<Page<DashboardPlayer>> {
  const q = search.q;
  const listId = `dashboard-players|${env.id}|${JSON.stringify(q ?? null)}`;
  const page = await keysetPage(
    cursors,
    listId,
    search,
    async (after: [string, string] | undefined, take): Promise<PlayerRow[]> => {
      if (q !== undefined && E_MAIL.test(q)) return [];
      const query = db('players as p')
        .where('p.environment_id', env.id)
        .orderBy([{ column: 'p.created_at', order: 'desc' }, { column: 'p.id', order: 'asc' }])
        .limit(take)
        .select('p.id', 'p.display_name', 'p.created_at', db.raw('p.created_at::text AS created_key'), 'p.last_seen_at');
      if (q !== undefined) {
        // id = ANY(ARRAY(...)) rather than IN (subquery): the planner can then OR the three lookups'
        // indexes (trigram, primary key, identity) instead of filtering every player with a subplan.
        query.where((match) => {
          match
            .whereRaw('p.display_name ILIKE ?', [likePattern(q)])
            .orWhere('p.id', q)
            .orWhereRaw('p.id = ANY(ARRAY(SELECT i.player_id FROM player_identities i WHERE i.environment_id = ? AND i.provider = ANY(?) AND i.subject = ?))', [
              env.id,
              IDENTITY_PROVIDERS,
              q,
            ]);
        });
      }
      if (after !== undefined) {
        query.where((older) => {
          older.whereRaw('p.created_at < ?::timestamptz', [after[0]]).orWhereRaw('p.created_at = ?::timestamptz AND p.id > ?', [after[0], after[1]]);
        });
      }
      return (await query) as PlayerRow[];
    },
    (row): [string, string] => [row.created_key, row.id],
    (row) => row,
  );
  const identities = new Map<string, { provider: string; subject: string }[]>();
  if (page.items.length > 0) {
    const rows = await db('player_identities')
      .where('environment_id', env.id)
      .whereIn('player_id', page.items.map((row) => row.id))
      .orderBy(['player_id', 'provider', 'subject'])
      .select('player_id', 'provider', 'subject');
    for (const row of rows as { player_id: string; provider: string; subject: string }[]) {
      const list = identities.get(row.player_id) ?? [];
      list.push({ provider: row.provider, subject: row.subject });
      identities.set(row.player_id, list);
    }
  }
  return {
    next: page.next,
    items: page.items.map((row) => {
      const held = identities.get(row.id) ?? [];
      return {
        id: row.id,
        displayName: row.display_name,
        identities: held,
        // The service's own accounts are the identity provider's product users (docs/dashboards.md).
        hasGreenMindAccount: held.some((identity) => identity.provider === 'idp'),
        createdAt: new Date(row.created_at).toISOString(),
        lastSeenAt: row.last_seen_at ? new Date(row.last_seen_at).toISOString() : null,
      };
    }),
  };
}
