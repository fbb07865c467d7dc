/**
 * GET /players for custom dashboards: an environment's players, newest first, and the search `q`.
 * `q` finds a player by part of the display name (any position, without case), or by the player's
 * id or an identity's subject exactly. It never finds anybody by e-mail: Hearth keeps no player's
 * e-mail, and a `q` shaped like an e-mail address matches nothing, even where a game server used
 * e-mail addresses as its subjects. Names are matched through a trigram index (pg_trgm), so a `q` of
 * 3 characters or more is found without reading the environment's players one by one.
 */
import type { Knex } from 'knex';
import type { Queryable } from '../db/knex';
import { type CursorCodec, keysetPage, type Page } from '../pagination';
import type { DashboardPlayer, PlayerSearchQuery } from '../shapes/dashboards';
import type { EnvironmentContext } from '../tenancy/environments';

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

/** The columns of a PlayerRow, read from `prefix` (a table or subquery alias). */
const COLUMNS = (db: Queryable, prefix = 'p.') => [
  `${prefix}id`,
  `${prefix}display_name`,
  `${prefix}created_at`,
  db.raw(`${prefix}created_at::text AS created_key`),
  `${prefix}last_seen_at`,
];

/** A player `q` finds: part of the display name, the id, or an identity's subject. */
function matching(where: Knex.QueryBuilder, prefix: string, env: EnvironmentContext, q: string): void {
  // id = ANY(ARRAY(...)) rather than IN (subquery): the planner can OR the three lookups' indexes.
  where
    .whereRaw(`${prefix}display_name ILIKE ?`, [likePattern(q)])
    .orWhere(`${prefix}id`, q)
    .orWhereRaw(`${prefix}id = ANY(ARRAY(SELECT i.player_id FROM player_identities i WHERE i.environment_id = ? AND i.provider = ANY(?) AND i.subject = ?))`, [
      env.id,
      IDENTITY_PROVIDERS,
      q,
    ]);
}

/**
 * How many of the newest players a search reads first. A `q` that matches often (a common part of
 * names) fills its page from them; one that matches rarely is then looked up through the indexes.
 */
export const RECENT_WINDOW = 10_000;

export async function listPlayers(db: Queryable, cursors: CursorCodec, env: EnvironmentContext, search: PlayerSearchQuery): Promise<Page<DashboardPlayer>> {
  const q = search.q;
  const listId = `dashboard-players|${env.id}|${JSON.stringify(q ?? null)}`;
  const page = await keysetPage(
    cursors,
    listId,
    search,
    async (after: [string, string] | undefined, take): Promise<PlayerRow[]> => {
      const newestFirst = (query: Knex.QueryBuilder, prefix: string) => {
        query.orderBy([
          { column: `${prefix}created_at`, order: 'desc' },
          { column: `${prefix}id`, order: 'asc' },
        ]);
        if (after !== undefined) {
          query.where((older) => {
            older
              .whereRaw(`${prefix}created_at < ?::timestamptz`, [after[0]])
              .orWhereRaw(`${prefix}created_at = ?::timestamptz AND ${prefix}id > ?`, [after[0], after[1]]);
          });
        }
        return query;
      };
      const players = () => newestFirst(db('players as p').where('p.environment_id', env.id), 'p.');
      if (q === undefined) return (await players().limit(take).select(COLUMNS(db))) as PlayerRow[];
      if (E_MAIL.test(q)) return [];
      // PostgreSQL's estimate of how often a part of a name matches is rough, and either plan it
      // picks on it is slow when the estimate is wrong (walking every player newest first for a rare
      // match; sorting tens of thousands of matches for a common one). So both, bounded: the newest
      // players first; only when they hold fewer than a page, every match through the indexes.
      const recent = db.queryBuilder().from(players().limit(RECENT_WINDOW).select('p.*').as('recent'));
      const fromRecent = (await newestFirst(
        recent.where((w) => matching(w, 'recent.', env, q)),
        'recent.',
      )
        .limit(take)
        .select(COLUMNS(db, 'recent.'))) as PlayerRow[];
      if (fromRecent.length === take) return fromRecent;
      // MATERIALIZED: every match first (a bitmap OR of the trigram index, the primary key and the
      // identities' key), then the newest of them, so the planner cannot walk the players instead.
      const everyMatch = db('players as p')
        .where('p.environment_id', env.id)
        .where((w) => matching(w, 'p.', env, q))
        .select('p.*');
      return (await newestFirst(db.queryBuilder().withMaterialized('matched', everyMatch).from('matched'), 'matched.')
        .limit(take)
        .select(COLUMNS(db, 'matched.'))) as PlayerRow[];
    },
    (row): [string, string] => [row.created_key, row.id],
    (row) => row,
  );
  const identities = new Map<string, { provider: string; subject: string }[]>();
  if (page.items.length > 0) {
    const rows = await db('player_identities')
      .where('environment_id', env.id)
      .whereIn(
        'player_id',
        page.items.map((row) => row.id),
      )
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
