import type { Db, Queryable, Tx } from '../db/knex';
import { refuse } from '../errors';
import { randomId } from '../ids';
import { TtlCache } from '../cache';
import type { InvalidationBus } from '../invalidation';
import type { EnvironmentContext } from '../tenancy/environments';
import { filterWords } from './word-filter';

/** PlatformPlayer (spec §2). */
export interface PlatformPlayer {
  id: string;
  displayName: string | null;
  createdAt: string;
}

/** What token checks need about a player; cached per process, dropped on sign-out or deletion. */
export interface PlayerState {
  environmentId: number;
  /** Tokens with `iat` before this (seconds) are refused: sign out everywhere. */
  tokensValidAfter: number;
}

export type IdentityProvider = 'server' | 'idp';

/** One `players` row as requests need it: token checks and the PlatformPlayer answer. */
interface PlayerRecord extends PlayerState {
  player: PlatformPlayer;
}

const RECORD_COLUMNS = ['id', 'environment_id', 'tokens_valid_after', 'display_name', 'created_at'];

function toPlayer(row: Record<string, unknown>): PlatformPlayer {
  return {
    id: row.id as string,
    displayName: (row.display_name as string | null) ?? null,
    createdAt: new Date(row.created_at as string).toISOString(),
  };
}

/**
 * Players. What requests read on every call (token checks, `GET /players/me`) is cached per process
 * and dropped when any process announces a rename, sign-out or deletion of the player.
 */
export class PlayerService {
  private records = new TtlCache<string, PlayerRecord | null>(30_000, 500_000);
  /** Bumped on every drop: a load that began before a drop must not keep what it read. */
  private drops = 0;

  constructor(private readonly db: Db, private readonly bus: InvalidationBus) {
    bus.on((event) => {
      if (event.kind === 'player') {
        this.drops++;
        this.records.delete(event.playerId);
      }
    });
  }

  /** Served from memory after the first look; `rememberMissing` caches that no such player exists too. */
  private async record(playerId: string, rememberMissing: boolean): Promise<PlayerRecord | null> {
    const hit = this.records.get(playerId);
    if (hit !== undefined) return hit;
    const dropsBefore = this.drops;
    const row = await this.db('players').where({ id: playerId }).first(RECORD_COLUMNS);
    const record: PlayerRecord | null = row
      ? { environmentId: Number(row.environment_id), tokensValidAfter: Number(row.tokens_valid_after), player: Object.freeze(toPlayer(row)) }
      : null;
    if (this.drops === dropsBefore && (record || rememberMissing)) this.records.set(playerId, record);
    return record;
  }

  /** What `state` answers when it is cached, without waiting; undefined when it is not. */
  peekState(playerId: string): PlayerState | null | undefined {
    return this.records.get(playerId);
  }

  /** For token checks on every request. */
  async state(playerId: string): Promise<PlayerState | null> {
    return this.record(playerId, true);
  }

  /** A player of the environment; inside a transaction (`db`) it is read there, not from the cache. */
  async get(env: EnvironmentContext, playerId: string, db: Queryable = this.db): Promise<PlatformPlayer> {
    if (db === this.db) {
      const record = await this.record(playerId, false);
      if (!record || record.environmentId !== env.id) throw refuse.notFound('The player');
      return record.player;
    }
    const row = await db('players').where({ id: playerId, environment_id: env.id }).first();
    if (!row) throw refuse.notFound('The player');
    return toPlayer(row);
  }

  /**
   * Finds the player behind a provider's subject, or makes one (201) while the environment is below
   * its plan's player cap. The environment row is locked while a player is made, so concurrent
   * first sign-ins neither pass the cap nor make two players for one subject.
   */
  async signIn(
    env: EnvironmentContext,
    provider: IdentityProvider,
    subject: string,
    displayName?: string,
  ): Promise<{ player: PlatformPlayer; created: boolean; tokensValidAfter: number }> {
    const name = displayName === undefined ? undefined : filterWords(displayName, env.wordFilter);
    const existing = await this.findByIdentity(this.db, env, provider, subject, name);
    if (existing) return this.announcedIfRenamed(existing);

    const outcome = await this.db.transaction(async (trx) => {
      const [lockedEnv] = (await trx.raw('SELECT player_count FROM environments WHERE id = ? FOR NO KEY UPDATE', [env.id])).rows;
      const again = await this.findByIdentity(trx, env, provider, subject, name);
      if (again) return again;
      const cap = env.plan.playersPerEnvironment;
      if (Number(lockedEnv.player_count) >= cap) {
        throw refuse.conflict(`This environment is full: its plan allows ${cap} players.`, { limit: cap });
      }
      const [row] = await trx('players')
        .insert({ id: randomId(22), environment_id: env.id, display_name: name ?? null })
        .returning('*');
      await trx('player_identities').insert({ environment_id: env.id, provider, subject, player_id: row.id });
      await trx('environments').where({ id: env.id }).increment('player_count', 1);
      return { player: toPlayer(row), created: true, tokensValidAfter: 0, renamed: false };
    });
    return this.announcedIfRenamed(outcome);
  }

  /** A sign-in that changed the display name tells every process, once the change is committed. */
  private async announcedIfRenamed(outcome: { player: PlatformPlayer; created: boolean; tokensValidAfter: number; renamed: boolean }) {
    const { renamed, ...answer } = outcome;
    if (renamed) await this.announceRename(answer.player.id);
    return answer;
  }

  /** Other processes drop their copy of the name; with Redis unreachable theirs expires within 30 s. */
  private async announceRename(playerId: string): Promise<void> {
    await this.bus.announce({ kind: 'player', playerId, reason: 'renamed' }).catch(() => undefined);
  }

  private async findByIdentity(
    db: Queryable,
    env: EnvironmentContext,
    provider: IdentityProvider,
    subject: string,
    displayName: string | undefined,
  ): Promise<{ player: PlatformPlayer; created: false; tokensValidAfter: number; renamed: boolean } | null> {
    const found = await db('player_identities as i')
      .join('players as p', 'p.id', 'i.player_id')
      .where({ 'i.environment_id': env.id, 'i.provider': provider, 'i.subject': subject })
      .first('p.*');
    if (!found) return null;
    let row = found;
    const renamed = displayName !== undefined && displayName !== found.display_name;
    if (renamed) {
      [row] = await db('players').where({ id: found.id }).update({ display_name: displayName }).returning('*');
    }
    return { player: toPlayer(row), created: false, tokensValidAfter: Number(found.tokens_valid_after), renamed };
  }

  async rename(env: EnvironmentContext, playerId: string, displayName: string): Promise<PlatformPlayer> {
    const [row] = await this.db('players')
      .where({ id: playerId, environment_id: env.id })
      .update({ display_name: filterWords(displayName, env.wordFilter) })
      .returning('*');
    if (!row) throw refuse.notFound('The player');
    await this.announceRename(playerId);
    return toPlayer(row);
  }

  /** Ends every token the player holds: tokens issued before the next whole second are refused. */
  async signOutEverywhere(env: EnvironmentContext, playerId: string): Promise<void> {
    const cutoff = Math.floor(Date.now() / 1000) + 1;
    const updated = await this.db('players')
      .where({ id: playerId, environment_id: env.id })
      .update({ tokens_valid_after: this.db.raw('GREATEST(tokens_valid_after, ?)', [cutoff]) });
    if (updated === 0) throw refuse.notFound('The player');
    await this.bus.announce({ kind: 'player', playerId, reason: 'signed-out' });
  }

  /**
   * Deletes the player and, by cascade, everything they hold; their tokens stop working. `endHoldings`
   * runs first in the same transaction, for what must end with more than a cascade (seats: events).
   */
  async delete(env: EnvironmentContext, playerId: string, endHoldings?: (trx: Tx) => Promise<void>): Promise<void> {
    const deleted = await this.db.transaction(async (trx) => {
      await trx.raw('SELECT id FROM environments WHERE id = ? FOR NO KEY UPDATE', [env.id]);
      if (endHoldings) await endHoldings(trx);
      const n = await trx('players').where({ id: playerId, environment_id: env.id }).delete();
      if (n > 0) await trx('environments').where({ id: env.id }).decrement('player_count', n);
      return n;
    });
    if (deleted === 0) throw refuse.notFound('The player');
    await this.bus.announce({ kind: 'player', playerId, reason: 'deleted' });
  }
}
