/**
 * Support filings (spec §4 Support): a player's support requests and their reports of other players,
 * stored for staff, who read them with `hearth support list`.
 *
 * The filing limit (spec §8: ten filings an hour per player, requests and reports together) is counted
 * from the filings themselves, in the transaction that stores one, under the filer's row lock: exact
 * under concurrency, only what was stored counts (a refused or invalid filing counts nothing), and it
 * holds while Redis is down. Windows are clock hours, like every other limit (windowOf).
 */
import type { Queryable, Tx } from '../db/knex';
import { inTransaction } from '../db/transaction';
import { RouteLimitReached, refuse } from '../errors';
import { holdPlayer } from '../players/hold';
import { randomId } from '../ids';
import type { RateOutcome } from '../coord/coordination';
import { type AttemptLimit, countAttempt } from '../players/attempt-limit';
import type { EnvironmentContext } from '../tenancy/environments';
import type { PlayerReport, SupportFiled, SupportRequest } from '../shapes/support';

/** The one definition of the filing limit: the routes' documentation and the count both read it. */
export const SUPPORT_FILING_LIMIT = { name: 'support-filings-hour', limit: 10, windowSeconds: 3600 } as const;

/** Where a player stands against the filing limit, in the shape of the other limits (X-RateLimit-*). */
export type FilingStanding = RateOutcome['nearest'];

/** The eleventh filing of an hour: 429 with Retry-After, carrying the standing for the headers. */
export class FilingLimitReached extends RouteLimitReached {
  constructor(standing: FilingStanding) {
    super(standing, `At most ${standing.limit} support requests and reports an hour`);
  }
}

/** A filing stored: what the route answers, and the filer's standing for its headers. */
export interface Filed extends SupportFiled {
  /** The filer's standing after this filing. */
  standing: FilingStanding;
}

export type SupportKind = 'request' | 'report';

export interface SupportFiling {
  id: string;
  kind: SupportKind;
  /** Who filed it. */
  playerId: string;
  createdAt: string;
  subject?: string;
  message?: string;
  contactEmail?: string | null;
  /** null once the reported player was deleted. */
  reportedPlayerId?: string | null;
  reason?: string;
  details?: string | null;
}

async function fileSupportRequest(db: Queryable, env: EnvironmentContext, playerId: string, input: SupportRequest): Promise<Filed> {
  return storeFiling(db, env, playerId, { kind: 'request', subject: input.subject, message: input.message, contact_email: input.contactEmail ?? null });
}

async function filePlayerReport(db: Queryable, env: EnvironmentContext, playerId: string, input: PlayerReport): Promise<Filed> {
  if (input.playerId === playerId) throw refuse.invalid('playerId', 'playerId names the caller: a player cannot report themselves.');
  const filing = { kind: 'report' as const, reported_player_id: input.playerId, reason: input.reason, details: input.details ?? null };
  // The filer's lock first (every area's order: environment, then player), then the reported player's
  // row, held until commit so it cannot be deleted in between. Another environment's player is not-found.
  return storeFiling(db, env, playerId, filing, async (trx) => {
    if ((await holdPlayer(trx, env.id, input.playerId)) === null) throw refuse.notFound('The reported player', { key: input.playerId, field: 'playerId' });
  });
}

/** Stores one filing of the player's, counted against the filing limit (claimFiling, with its `checks`) in the same transaction. */
async function storeFiling(
  db: Queryable,
  env: EnvironmentContext,
  playerId: string,
  filing: { kind: 'request' | 'report' } & Record<string, unknown>,
  checks?: (trx: Tx) => Promise<void>,
): Promise<Filed> {
  return inTransaction(db, async (trx) => {
    const standing = await claimFiling(trx, env, playerId, checks && (() => checks(trx)));
    const id = randomId();
    await trx('support_filings').insert({ id, environment_id: env.id, player_id: playerId, ...filing });
    return { id, standing };
  });
}

const FILING_ATTEMPTS: AttemptLimit = {
  ...SUPPORT_FILING_LIMIT,
  attempts: { table: 'support_filings', at: 'created_at' },
  refused: (standing) => new FilingLimitReached(standing),
};

/**
 * Locks the filer's row (filings of one player then take turns), runs the filing's own checks, and
 * counts this hour's filings: refuses the one past the limit, otherwise answers the standing once this
 * filing is stored. The clock is the database's, so every API process agrees on the window.
 */
async function claimFiling(trx: Tx, env: EnvironmentContext, playerId: string, checks?: () => Promise<void>): Promise<FilingStanding> {
  return (await countAttempt(trx, env, playerId, FILING_ATTEMPTS, checks)).standing;
}

/** Players' support requests and reports (POST /support/*) and staff's list of them (`hearth support list`). */
export class SupportService {
  fileRequest(db: Queryable, env: EnvironmentContext, playerId: string, input: SupportRequest): Promise<Filed> {
    return fileSupportRequest(db, env, playerId, input);
  }

  fileReport(db: Queryable, env: EnvironmentContext, playerId: string, input: PlayerReport): Promise<Filed> {
    return filePlayerReport(db, env, playerId, input);
  }

  list(db: Queryable, environmentId: number, options: { kind?: SupportKind; limit?: number } = {}): Promise<SupportFiling[]> {
    return listSupportFilings(db, environmentId, options);
  }
}

/** Staff's list: an environment's filings, newest first. */
async function listSupportFilings(db: Queryable, environmentId: number, options: { kind?: SupportKind; limit?: number } = {}): Promise<SupportFiling[]> {
  const query = db('support_filings')
    .where({ environment_id: environmentId })
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .limit(options.limit ?? 100);
  if (options.kind) query.andWhere({ kind: options.kind });
  const rows = await query;
  return rows.map((row: Record<string, any>): SupportFiling => {
    const common = { id: row.id, kind: row.kind, playerId: row.player_id, createdAt: new Date(row.created_at).toISOString() };
    return row.kind === 'request'
      ? { ...common, subject: row.subject, message: row.message, contactEmail: row.contact_email }
      : { ...common, reportedPlayerId: row.reported_player_id, reason: row.reason, details: row.details };
  });
}
