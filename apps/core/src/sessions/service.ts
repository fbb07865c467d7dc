import type { Knex } from 'knex';
import type { Queryable, Tx } from '../db/knex';
import { afterCommit, inTransaction } from '../db/transaction';
import type { Coordination } from '../coord/coordination';
import type { Logger } from '../logger';
import type { EnvironmentContext } from '../tenancy/environments';
import { Refusal, refuse } from '../errors';
import { holdPlayer } from '../players/hold';
import { randomId } from '../ids';
import { filterWords } from '../players/word-filter';
import type { CreateSessionRequest, ReportedStatus, SeatRequest, StatusReport } from '../shapes/sessions';
import { type PlatformSession, SESSION_EVENTS_CHANNEL, type SessionEvent, type SessionStatus, type VersionedSession } from './events';

/** Spec §3: the moves a report may make from each status; every other move is a conflict. */
export const REPORTED_MOVES: Readonly<Record<SessionStatus, readonly ReportedStatus[]>> = {
  CONFIGURING: [],
  PREPARING_INSTANCE: ['AWAITING_PLAYERS', 'PLAYING', 'ERROR'],
  AWAITING_PLAYERS: ['PLAYING', 'ERROR'],
  PLAYING: ['COMPLETE', 'ERROR'],
  COMPLETE: [],
  ERROR: [],
};

/** The name a seat shows when neither the request nor the player's display name gives one. */
export const DEFAULT_PLAYER_NAME = 'Player';

interface SessionRow {
  id: string;
  environment_id: string;
  status: SessionStatus;
  game_mode: string;
  map: string;
  seats: number;
  conclusion: string | null;
  created_at: Date | string;
  /** bigint: pg answers it as a string. */
  version: string | number;
}

interface SeatRow {
  session_id: string;
  player_id: string;
  player_name: string;
  is_host: boolean;
  is_ready: boolean;
}

interface PlayerRow {
  display_name: string | null;
}

/** A change's event before it is published, stamped with the time, once committed. */
export type SessionChange = Omit<SessionEvent, 'committedAt'>;

/** What a seat change did, for its event. */
interface SeatOutcome {
  removed?: SessionEvent['removed'];
  added?: string[];
  /** The status the change moves the session to, written with the session's last statement. */
  status?: SessionStatus;
  /**
   * The seats after the change, in seat order, as the change wrote them: the session's answer and
   * event are made from these without reading the seats again.
   */
  seats: SeatRow[];
}

const SEAT_COLUMNS = ['session_id', 'player_id', 'player_name', 'is_host', 'is_ready'];

/** The version a change gives the session: its row's, as the change's statement answered it. */
const versionOf = (row: SessionRow) => Number(row.version);

function toSession(row: SessionRow, seats: SeatRow[]): PlatformSession {
  return {
    id: row.id,
    status: row.status,
    gameMode: row.game_mode,
    map: row.map,
    conclusion: row.conclusion,
    seats: Number(row.seats),
    players: seats.map((s) => ({ playerId: s.player_id, playerName: s.player_name, isHost: s.is_host, isReady: s.is_ready })),
    createdAt: new Date(row.created_at).toISOString(),
  };
}

/** The seat's name: the one asked for (through the word filter), else the player's display name, else `Player`. */
function seatName(env: EnvironmentContext, asked: string | undefined, displayName: string | null): string {
  if (asked !== undefined) return filterWords(asked, env.wordFilter);
  return displayName ?? DEFAULT_PLAYER_NAME;
}

const pastConfiguring = () => refuse.conflict('The session is past CONFIGURING: seats no longer change.');
const sessionNotFound = (sessionId: string) => refuse.notFound('The session', { key: sessionId, field: 'sessionId' });
const notSeated = () => new Refusal('not-found', 'You do not hold a seat in this session.');

/**
 * Sessions (spec §3, §4). Concurrency, as docs/sessions.md describes:
 * - every seat change runs in a transaction holding the session row's lock (SELECT ... FOR UPDATE),
 *   so capacity, host and ready checks see the seats as they are and nobody changes them meanwhile;
 * - locks are taken in one order, environment → player → session, the order player deletion takes
 *   them in: a change that adds a seat first takes a key-share lock on the player's row (creation one
 *   on the environment's before that), so the two never deadlock and a deleted player's seats all end
 *   with an event;
 * - status reports are compare-and-set on the status they read: a report that loses a race is a conflict.
 * Every method takes its database first (the pool, or the caller's transaction, which a change joins).
 * Once a change is committed (the caller's whole transaction, when it runs in one) one SessionEvent per
 * session goes out on SESSION_EVENTS_CHANNEL for the realtime processes; a rolled-back change sends none.
 */
/** The row a seat change is given: the joining player's when it adds one. */
type AddingPlayer<Adding extends string | undefined> = Adding extends string ? PlayerRow : null;

export class SessionService {
  constructor(
    private readonly coordination: Coordination,
    private readonly logger: Logger,
  ) {}

  async get(db: Queryable, env: EnvironmentContext, sessionId: string): Promise<PlatformSession> {
    return (await this.getVersioned(db, env, sessionId)).session;
  }

  /**
   * The session with its version, for the realtime process to compare with the events it gets. One
   * statement reads the row and its seats, so they are of one moment: the version is that of the
   * seats it comes with (two reads could pair a version with a later change's seats).
   */
  async getVersioned(db: Queryable, env: EnvironmentContext, sessionId: string): Promise<VersionedSession> {
    const [read] = await this.readWithSeats(db, env, (q) => q.where('s.id', sessionId));
    if (!read) throw sessionNotFound(sessionId);
    return read;
  }

  /** The sessions in which the player holds a seat (any status), newest first, with their versions (one statement, as getVersioned). */
  async listForPlayer(db: Queryable, env: EnvironmentContext, playerId: string): Promise<VersionedSession[]> {
    const held = db('session_players').where({ environment_id: env.id, player_id: playerId }).select('session_id');
    return this.readWithSeats(db, env, (q) => q.whereIn('s.id', held));
  }

  /** The environment's sessions that `which` picks, with all their seats, newest first, in one statement. */
  private async readWithSeats(db: Queryable, env: EnvironmentContext, which: (q: Knex.QueryBuilder) => Knex.QueryBuilder): Promise<VersionedSession[]> {
    const rows = (await which(db('sessions as s').leftJoin('session_players as sp', 'sp.session_id', 's.id').where('s.environment_id', env.id))
      .orderBy([
        { column: 's.created_at', order: 'desc' },
        { column: 's.id', order: 'asc' },
        { column: 'sp.seat_order', order: 'asc' },
      ])
      .select('s.*', ...SEAT_COLUMNS.map((column) => `sp.${column}`))) as (SessionRow & SeatRow)[];
    // A session's rows are together (ordered by session first): one per seat, or one whose seat columns
    // are null (no seat). Each seat's row carries the seat's columns.
    const read: { row: SessionRow; seats: SeatRow[] }[] = [];
    for (const row of rows) {
      if (read.at(-1)?.row.id !== row.id) read.push({ row, seats: [] });
      if (row.player_id !== null) read[read.length - 1].seats.push(row);
    }
    return read.map(({ row, seats }) => ({ session: toSession(row, seats), version: versionOf(row) }));
  }

  /** POST /sessions: a lobby in CONFIGURING with the caller seated as host. */
  async create(db: Queryable, env: EnvironmentContext, playerId: string, input: CreateSessionRequest): Promise<PlatformSession> {
    return inTransaction(db, async (trx) => {
      // Lock order environment → player → session, as player deletion takes them: the new row's
      // foreign key would take the environment's key-share lock anyway, only later.
      await trx.raw('SELECT id FROM environments WHERE id = ? FOR KEY SHARE', [env.id]);
      const player = await this.lockPlayer(trx, env, playerId);
      const [row] = (await trx('sessions')
        .insert({
          id: randomId(22),
          environment_id: env.id,
          status: 'CONFIGURING',
          game_mode: input.gameMode,
          map: input.map,
          seats: env.project.sessionSeats,
        })
        .returning('*')) as SessionRow[];
      const session = toSession(row, [await this.insertSeat(trx, env, row.id, playerId, input, player, true)]);
      await this.publishAfterCommit(trx, [{ environmentId: env.id, session, removed: [], added: [playerId], version: versionOf(row) }]);
      return session;
    });
  }

  async join(db: Queryable, env: EnvironmentContext, sessionId: string, playerId: string, input: SeatRequest): Promise<PlatformSession> {
    return this.seatChange(db, env, sessionId, { addingPlayer: playerId }, async (trx, session, seats, player) => {
      if (session.status !== 'CONFIGURING') throw pastConfiguring();
      if (seats.some((s) => s.player_id === playerId)) throw refuse.conflict('You already hold a seat in this session.');
      if (seats.length >= session.seats) {
        throw refuse.conflict(`The session is full: it seats ${session.seats}.`, { limit: Number(session.seats) });
      }
      // A new seat's seat_order is the highest yet (an identity column): it goes last.
      return { added: [playerId], seats: [...seats, await this.insertSeat(trx, env, sessionId, playerId, input, player, false)] };
    });
  }

  /** Gives up the caller's seat in any status; the host role is not passed on. */
  async leave(db: Queryable, env: EnvironmentContext, sessionId: string, playerId: string): Promise<void> {
    await this.seatChange(db, env, sessionId, {}, async (trx, _session, seats) => {
      if (!seats.some((s) => s.player_id === playerId)) throw notSeated();
      await trx('session_players').where({ session_id: sessionId, player_id: playerId }).delete();
      return { removed: [{ playerId, reason: 'left' }], seats: seats.filter((s) => s.player_id !== playerId) };
    });
  }

  /** Sets the caller's ready flag; the caller readying with everybody else ready starts the match. */
  async setReady(db: Queryable, env: EnvironmentContext, sessionId: string, playerId: string, isReady: boolean): Promise<PlatformSession> {
    return this.seatChange(db, env, sessionId, {}, async (trx, session, seats) => {
      if (!seats.some((s) => s.player_id === playerId)) throw notSeated();
      if (session.status !== 'CONFIGURING') throw pastConfiguring();
      await trx('session_players').where({ session_id: sessionId, player_id: playerId }).update({ is_ready: isReady });
      const after = seats.map((s) => (s.player_id === playerId ? { ...s, is_ready: isReady } : s));
      return after.every((s) => s.is_ready) ? { status: 'PREPARING_INSTANCE', seats: after } : { seats: after };
    });
  }

  /** The host takes another seat away (or their own: then they are out like anybody kicked). */
  async kick(db: Queryable, env: EnvironmentContext, sessionId: string, callerId: string, targetId: string): Promise<PlatformSession> {
    return this.seatChange(db, env, sessionId, {}, async (trx, session, seats) => {
      this.hostAction(session, seats, callerId, targetId);
      await trx('session_players').where({ session_id: sessionId, player_id: targetId }).delete();
      return { removed: [{ playerId: targetId, reason: 'kicked' }], seats: seats.filter((s) => s.player_id !== targetId) };
    });
  }

  /** The host hands the host role to another seated player; promoting oneself changes nothing. */
  async promote(db: Queryable, env: EnvironmentContext, sessionId: string, callerId: string, targetId: string): Promise<PlatformSession> {
    return this.seatChange(db, env, sessionId, {}, async (trx, session, seats) => {
      this.hostAction(session, seats, callerId, targetId);
      if (targetId !== callerId) {
        // In this order: the one-host index is checked after each statement.
        await trx('session_players').where({ session_id: sessionId, player_id: callerId }).update({ is_host: false });
        await trx('session_players').where({ session_id: sessionId, player_id: targetId }).update({ is_host: true });
      }
      return { seats: seats.map((s) => (s.player_id === callerId || s.player_id === targetId ? { ...s, is_host: s.player_id === targetId } : s)) };
    });
  }

  /**
   * A game server's report. Compare-and-set: the move is checked against the status read, and the
   * update applies only while the session still has that status, so of two racing reports the one
   * that finds the status already changed is refused, even when its move would be allowed afterwards.
   */
  async reportStatus(db: Queryable, env: EnvironmentContext, sessionId: string, report: StatusReport): Promise<PlatformSession> {
    return inTransaction(db, async (trx) => {
      const current = (await trx('sessions').where({ id: sessionId, environment_id: env.id }).first('status')) as { status: SessionStatus } | undefined;
      if (!current) throw sessionNotFound(sessionId);
      if (!REPORTED_MOVES[current.status].includes(report.status)) {
        throw refuse.conflict(`A session in ${current.status} cannot move to ${report.status}.`);
      }
      const [row] = (await trx('sessions')
        .where({ id: sessionId, environment_id: env.id, status: current.status })
        .update({
          status: report.status,
          // COMPLETE and ERROR are final, so these are null in every other status.
          conclusion: report.status === 'COMPLETE' ? (report.conclusion ?? null) : null,
          error: report.status === 'ERROR' ? (report.error ?? null) : null,
          updated_at: trx.fn.now(),
          version: trx.raw('version + 1'),
        })
        .returning('*')) as SessionRow[];
      if (!row) throw refuse.conflict('The session changed while this report was made; read it and report again if still right.');
      const session = toSession(row, await this.seatsOf(trx, sessionId));
      if (report.status === 'ERROR') {
        // Kept for staff: the error text is stored and logged (once it stands), never answered.
        await afterCommit(trx, () => this.logger.warn({ environmentId: env.id, sessionId, error: report.error ?? null }, 'session reported ERROR'));
      }
      await this.publishAfterCommit(trx, [{ environmentId: env.id, session, removed: [], added: [], version: versionOf(row) }]);
      return session;
    });
  }

  /**
   * Ends every seat of a player being deleted: a step of `deletePlayer`, in its transaction, with one
   * event per session once that commits. Locks the player's row first, so no seat can be taken
   * meanwhile, then the sessions in id order.
   */
  async endSeatsOfDeletedPlayer(db: Queryable, env: EnvironmentContext, playerId: string): Promise<void> {
    await inTransaction(db, async (trx) => {
      const player = await trx.raw('SELECT id FROM players WHERE id = ? AND environment_id = ? FOR UPDATE', [playerId, env.id]);
      if (player.rows.length === 0) return;
      const held = (await trx('session_players').where({ environment_id: env.id, player_id: playerId }).pluck('session_id')) as string[];
      const events: SessionChange[] = [];
      for (const sessionId of [...held].sort()) {
        const locked = await this.lockSession(trx, env, sessionId);
        if (!locked) continue;
        const n = await trx('session_players').where({ session_id: sessionId, player_id: playerId }).delete();
        if (n === 0) continue;
        const { session, version } = await this.afterSeatChange(trx, locked, await this.seatsOf(trx, sessionId));
        events.push({ environmentId: env.id, session, removed: [{ playerId, reason: 'deleted' }], added: [], version });
      }
      await this.publishAfterCommit(trx, events);
    });
  }

  /** Queues a change's events to go out once the transaction that made it has committed. */
  private publishAfterCommit(trx: Tx, changes: SessionChange[]): Promise<void> {
    return changes.length === 0 ? Promise.resolve() : afterCommit(trx, () => this.publish(changes));
  }

  /**
   * Publishes the events of a change that has committed, stamped with the time; the change stands
   * whether or not the publish reaches Redis, so a failure is logged, never thrown.
   */
  private async publish(changes: SessionChange[]): Promise<void> {
    const committedAt = Date.now();
    for (const change of changes) {
      const event: SessionEvent = { ...change, committedAt };
      try {
        await this.coordination.publish(SESSION_EVENTS_CHANNEL, JSON.stringify(event));
      } catch (err) {
        this.logger.warn({ err: (err as Error).message, sessionId: change.session.id }, 'session event not published');
      }
    }
  }

  /**
   * One seat change: locks the session (after the joining player's row, when a seat is added), runs
   * the change against the seats as they are, applies the last-player rule; its event goes out on commit.
   */
  private async seatChange<Adding extends string | undefined = undefined>(
    db: Queryable,
    env: EnvironmentContext,
    sessionId: string,
    options: { addingPlayer?: Adding },
    change: (trx: Tx, session: SessionRow, seats: SeatRow[], adding: AddingPlayer<Adding>) => Promise<SeatOutcome>,
  ): Promise<PlatformSession> {
    return inTransaction(db, async (trx) => {
      // The joining player's row when one is added (lockPlayer refuses a missing player), else null.
      const adding = (options.addingPlayer ? await this.lockPlayer(trx, env, options.addingPlayer) : null) as AddingPlayer<Adding>;
      const locked = await this.lockSession(trx, env, sessionId);
      if (!locked) throw sessionNotFound(sessionId);
      const outcome = await change(trx, locked, await this.seatsOf(trx, sessionId), adding);
      const { session, version } = await this.afterSeatChange(trx, locked, outcome.seats, outcome.status);
      await this.publishAfterCommit(trx, [{ environmentId: env.id, session, removed: outcome.removed ?? [], added: outcome.added ?? [], version }]);
      return session;
    });
  }

  /**
   * The session after a seat change, inside its transaction. The last-player rule: a lobby still in
   * CONFIGURING that nobody holds a seat in any more is closed (deleted); a session past CONFIGURING
   * stays, for its game server to report how it ended. The change raises the session's version; a
   * deleted lobby's last version is the one after its row's.
   */
  private async afterSeatChange(trx: Tx, locked: SessionRow, seats: SeatRow[], status?: SessionStatus): Promise<VersionedSession> {
    // One statement writes the session and answers it (a seat change is a round trip shorter). A change
    // that empties the session moves no status, so the locked row's status is still the session's.
    const sessions = trx('sessions').where({ id: locked.id });
    if (seats.length === 0 && locked.status === 'CONFIGURING') {
      const [deleted] = (await sessions.delete().returning('*')) as SessionRow[];
      return { session: toSession(deleted, seats), version: versionOf(deleted) + 1 };
    }
    const [row] = (await sessions
      .update({ updated_at: trx.fn.now(), version: trx.raw('version + 1'), ...(status ? { status } : {}) })
      .returning('*')) as SessionRow[];
    return { session: toSession(row, seats), version: versionOf(row) };
  }

  /** kick and promote: the caller must be seated (else not-found) and host (else forbidden); the target seated, in CONFIGURING. */
  private hostAction(session: SessionRow, seats: SeatRow[], callerId: string, targetId: string): void {
    const caller = seats.find((s) => s.player_id === callerId);
    if (!caller) throw notSeated();
    if (!caller.is_host) throw refuse.forbidden('Only the host of the session may do that.');
    if (session.status !== 'CONFIGURING') throw pastConfiguring();
    if (!seats.some((s) => s.player_id === targetId)) throw refuse.conflict('That player does not hold a seat in this session.');
  }

  /** A seat: its name as asked (filtered) or the player's; `uniqueNetId` is stored, never answered. */
  private async insertSeat(
    trx: Tx,
    env: EnvironmentContext,
    sessionId: string,
    playerId: string,
    input: SeatRequest,
    player: PlayerRow,
    isHost: boolean,
  ): Promise<SeatRow> {
    const [seat] = (await trx('session_players')
      .insert({
        session_id: sessionId,
        player_id: playerId,
        environment_id: env.id,
        player_name: seatName(env, input.playerName, player.display_name),
        unique_net_id: input.uniqueNetId ?? null,
        is_host: isHost,
      })
      .returning(SEAT_COLUMNS)) as SeatRow[];
    return seat;
  }

  private async lockSession(trx: Tx, env: EnvironmentContext, sessionId: string): Promise<SessionRow | null> {
    const result = await trx.raw('SELECT * FROM sessions WHERE id = ? AND environment_id = ? FOR UPDATE', [sessionId, env.id]);
    return (result.rows[0] as SessionRow | undefined) ?? null;
  }

  /**
   * A key-share lock on a player taking a seat, taken before any session lock: player deletion locks
   * the player's row (FOR UPDATE) and then their sessions, so the two wait for each other in one order.
   */
  private async lockPlayer(trx: Tx, env: EnvironmentContext, playerId: string): Promise<PlayerRow> {
    const player = await holdPlayer(trx, env.id, playerId);
    if (!player) throw refuse.unauthorized('The player no longer exists.');
    return { display_name: player.displayName };
  }

  private async seatsOf(db: Queryable, sessionId: string): Promise<SeatRow[]> {
    return (await db('session_players').where({ session_id: sessionId }).orderBy('seat_order').select(SEAT_COLUMNS)) as SeatRow[];
  }
}
