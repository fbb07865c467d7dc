/**
 * Who to tell: the authorized sockets by player and by the sessions they follow. A socket's own list
 * of followed sessions is in its fields (`seated`, `watched`); this index is the reverse map, and the
 * two are only changed together, here.
 */
import type { IdentifiedSocket } from './socket';

function removeFrom(list: string[] | null, id: string): boolean {
  if (!list) return false;
  const i = list.indexOf(id);
  if (i < 0) return false;
  list.splice(i, 1);
  return true;
}

export class SocketIndex {
  /** A player's sockets: the socket itself when it is the only one (the usual case), else a list. */
  private readonly byPlayer = new Map<string, IdentifiedSocket | IdentifiedSocket[]>();
  private readonly bySession = new Map<string, Set<IdentifiedSocket>>();

  /** How many sessions at least one socket follows. */
  get sessionsFollowed(): number {
    return this.bySession.size;
  }

  /** Indexes an authorized socket under its player (its `playerId` is set). */
  add(ws: IdentifiedSocket): void {
    const playerId = ws.playerId;
    const mine = this.byPlayer.get(playerId);
    if (mine === undefined) this.byPlayer.set(playerId, ws);
    else if (Array.isArray(mine)) mine.push(ws);
    else this.byPlayer.set(playerId, [mine, ws]);
  }

  /** Drops the socket from the index: its player and every session it followed (which it no longer follows). */
  remove(ws: IdentifiedSocket): void {
    const playerId = ws.playerId;
    const mine = this.byPlayer.get(playerId);
    if (mine === ws) this.byPlayer.delete(playerId);
    else if (Array.isArray(mine)) {
      const i = mine.indexOf(ws);
      if (i >= 0) mine.splice(i, 1);
      if (mine.length === 1) this.byPlayer.set(playerId, mine[0]);
    }
    for (const id of ws.seated ?? []) this.unindexSession(ws, id);
    for (const id of ws.watched ?? []) this.unindexSession(ws, id);
    ws.seated = ws.watched = null;
  }

  /** The player's sockets, as a list of their own (the caller may close them while it walks it). */
  socketsOf(playerId: string): IdentifiedSocket[] {
    const mine = this.byPlayer.get(playerId);
    return mine === undefined ? [] : Array.isArray(mine) ? [...mine] : [mine];
  }

  /** The authorized sockets of an environment, as a list of their own; walks every socket (for rare events: a retired environment). */
  socketsIn(environmentId: number): IdentifiedSocket[] {
    const found: IdentifiedSocket[] = [];
    for (const mine of this.byPlayer.values()) {
      for (const ws of Array.isArray(mine) ? mine : [mine]) if (ws.env?.id === environmentId) found.push(ws);
    }
    return found;
  }

  /** The ids of every session some socket follows, as a list of their own. */
  followedSessions(): string[] {
    return [...this.bySession.keys()];
  }

  /** The sockets following the session (the live set: copy it before closing sockets while walking it). */
  followersOf(sessionId: string): ReadonlySet<IdentifiedSocket> | undefined {
    return this.bySession.get(sessionId);
  }

  follows(ws: IdentifiedSocket, sessionId: string): boolean {
    return (ws.seated?.includes(sessionId) ?? false) || (ws.watched?.includes(sessionId) ?? false);
  }

  /** How many sessions the socket follows through `subscribe` (what maxSubscriptions counts). */
  watchedCount(ws: IdentifiedSocket): number {
    return ws.watched?.length ?? 0;
  }

  /** Follows a session as seated (free) or watched (counted); a watched session the player is seated in becomes seated. */
  follow(ws: IdentifiedSocket, sessionId: string, seated: boolean): void {
    if (seated) {
      if (ws.seated?.includes(sessionId)) return;
      removeFrom(ws.watched, sessionId);
      (ws.seated ??= []).push(sessionId);
    } else {
      if (this.follows(ws, sessionId)) return;
      (ws.watched ??= []).push(sessionId);
    }
    let set = this.bySession.get(sessionId);
    if (!set) this.bySession.set(sessionId, (set = new Set()));
    set.add(ws);
  }

  /** Stops following the session, seated or watched; answers whether the socket followed it. */
  unfollow(ws: IdentifiedSocket, sessionId: string): boolean {
    const was = removeFrom(ws.seated, sessionId) || removeFrom(ws.watched, sessionId);
    if (was) this.unindexSession(ws, sessionId);
    return was;
  }

  private unindexSession(ws: IdentifiedSocket, sessionId: string): void {
    const set = this.bySession.get(sessionId);
    if (!set) return;
    set.delete(ws);
    if (set.size === 0) this.bySession.delete(sessionId);
  }
}
