import type { Clock } from '@hearth/core';
import type { PlatformSession } from '@hearth/core/shapes';

/**
 * How long a session's newest state is kept after it last changed. Events reach a process out of order
 * by the time between two commits' publishes: milliseconds, a second under load. Later than this, an
 * older event is taken as new (docs/realtime.md "Fan-out").
 */
export const STATE_RETAIN_MS = 10_000;

interface Known {
  environmentId: number;
  /** The newest state known: from an event, or from a read of the database. */
  session: PlatformSession;
  version: number;
  /** The newest version handed to every follower (an event's, or the catch-up's read). */
  sent: number;
  /** When it last changed (the clock's), for the sweep. */
  at: number;
  /** Where it last changed in the sequence of changes, for the reads in flight. */
  seq: number;
}

/**
 * The newest state this process knows of each session, by the version every change raises
 * (SessionEvent.version). The API publishes a change's event after its commit, outside the session's
 * lock, so the events of two changes can arrive in the other order (two API processes; or one whose
 * commit was answered late while the next change already committed and published). Arrival order is
 * not freshness: the version is.
 *
 * It also closes the gap between reading sessions from the database and following them (authorize,
 * subscribe, the catch-up after Redis): a read `begin`s and `end`s, and whatever changed meanwhile is
 * kept until the read is done, so the read's answer is put beside every state that arrived during it.
 *
 * A state is kept STATE_RETAIN_MS after it last changed, and longer while a read that began before
 * that change is in flight: dropped by the server's tick (`sweep`), and at a change once the retention
 * has passed since the last sweep.
 */
export class SessionStates {
  /** By session id, in the order they last changed (a change moves an entry to the end). */
  private readonly known = new Map<string, Known>();
  private seq = 0;
  /** The sessions that changed while reads were in flight, with where in the sequence. */
  private log: { seq: number; sessionId: string }[] = [];
  /** Start sequence of every read in flight → how many reads started there. */
  private readonly open = new Map<number, number>();
  private sweptAt: number;

  constructor(
    private readonly clock: Pick<Clock, 'now'>,
    private readonly retainMs = STATE_RETAIN_MS,
  ) {
    this.sweptAt = clock.now();
  }

  /** The newest state known of a session of that environment. */
  newest(environmentId: number, sessionId: string): PlatformSession | undefined {
    return this.entry(environmentId, sessionId)?.session;
  }

  /**
   * A state about to be handed to every follower of its session (an event's, or what the catch-up
   * read): true when it may be, that is when it is newer than every state sent to them and no older
   * than any known (a socket that read a newer one must not be told this one afterwards; the newer
   * one's event is on its way). It is then the newest, and counted as sent.
   */
  toFollowers(environmentId: number, session: PlatformSession, version: number): boolean {
    const known = this.entry(environmentId, session.id);
    if (known && (version <= known.sent || version < known.version)) return false;
    this.keep(environmentId, session, version, version);
    return true;
  }

  /** What a read of the database answered (authorize, subscribe): kept if newer than what is known; answers the newest. */
  read(environmentId: number, session: PlatformSession, version: number): PlatformSession {
    const known = this.entry(environmentId, session.id);
    if (known && known.version >= version) return known.session;
    this.keep(environmentId, session, version, known?.sent ?? 0);
    return session;
  }

  /** Marks a read as started; pass what it answers to `changedSince`, then to `end`. */
  begin(): number {
    this.open.set(this.seq, (this.open.get(this.seq) ?? 0) + 1);
    return this.seq;
  }

  end(start: number): void {
    const n = (this.open.get(start) ?? 1) - 1;
    if (n > 0) this.open.set(start, n);
    else this.open.delete(start);
    if (this.open.size === 0) {
      this.log = [];
      return;
    }
    // Reads begin at the current sequence, which only grows: the map's first key is the oldest.
    const oldest = this.oldestRead() ?? this.seq;
    let drop = 0;
    while (drop < this.log.length && this.log[drop].seq <= oldest) drop++;
    if (drop > 0) this.log.splice(0, drop);
  }

  /** The newest states of the environment's sessions that changed since `start` (each once). */
  changedSince(start: number, environmentId: number): PlatformSession[] {
    const ids = new Set<string>();
    for (let i = this.log.length - 1; i >= 0 && this.log[i].seq > start; i--) ids.add(this.log[i].sessionId);
    const out: PlatformSession[] = [];
    for (const id of ids) {
      const session = this.newest(environmentId, id);
      if (session) out.push(session);
    }
    return out;
  }

  /** How many sessions are kept (for tests and figures). */
  get size(): number {
    return this.known.size;
  }

  private entry(environmentId: number, sessionId: string): Known | undefined {
    const known = this.known.get(sessionId);
    return known?.environmentId === environmentId ? known : undefined;
  }

  private keep(environmentId: number, session: PlatformSession, version: number, sent: number): void {
    const seq = ++this.seq;
    const at = this.clock.now();
    this.known.delete(session.id);
    this.known.set(session.id, { environmentId, session, version, sent, at, seq });
    if (this.open.size > 0) this.log.push({ seq, sessionId: session.id });
    if (at - this.sweptAt >= this.retainMs) this.sweep();
  }

  /** Drops the states that last changed more than retainMs ago and no read in flight may still need. */
  sweep(): void {
    const now = this.clock.now();
    this.sweptAt = now;
    const needed = this.oldestRead() ?? Infinity;
    for (const [id, known] of this.known) {
      if (now - known.at < this.retainMs || known.seq > needed) break;
      this.known.delete(id);
    }
  }

  private oldestRead(): number | undefined {
    return this.open.keys().next().value;
  }
}
