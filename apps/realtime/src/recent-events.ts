import type { SessionEvent } from '@hearth/core/sessions';

interface Logged {
  seq: number;
  event: SessionEvent;
}

/**
 * Closes the gap between reading a session from the database and following it: events that arrive
 * while a read is in flight are kept (only then) and replayed onto what the read answered, so a change
 * committed around the read is never missed. Events are published after commit, so whatever arrived
 * since the read began is at least as new as the read.
 */
export class RecentEvents {
  private seq = 0;
  private log: Logged[] = [];
  /** Start sequence of every read in flight → how many reads started there. */
  private open = new Map<number, number>();

  record(event: SessionEvent): void {
    this.seq++;
    if (this.open.size > 0) this.log.push({ seq: this.seq, event });
  }

  /** Marks a read as started; pass what it answers to `since`/`newest`, then to `end`. */
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
    const oldest = this.open.keys().next().value as number;
    let drop = 0;
    while (drop < this.log.length && this.log[drop].seq <= oldest) drop++;
    if (drop > 0) this.log.splice(0, drop);
  }

  /** Every event received since `start`, oldest first. */
  since(start: number): SessionEvent[] {
    const out: SessionEvent[] = [];
    for (let i = this.log.length - 1; i >= 0 && this.log[i].seq > start; i--) out.push(this.log[i].event);
    return out.reverse();
  }

  /** The newest event of one session received since `start`. */
  newest(start: number, environmentId: number, sessionId: string): SessionEvent | undefined {
    for (let i = this.log.length - 1; i >= 0 && this.log[i].seq > start; i--) {
      const { event } = this.log[i];
      if (event.session.id === sessionId && event.environmentId === environmentId) return event;
    }
    return undefined;
  }
}
