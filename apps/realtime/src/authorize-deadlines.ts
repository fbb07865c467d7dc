/**
 * When each socket's `authorize` is due, without a timer per socket: a FIFO of sockets in order of
 * arrival, and so of deadline (every socket gets the same time), swept by the server's one tick.
 * Kept here rather than on the socket, as only the first seconds of a socket need it. A socket that
 * authorized (or closed) in time stays in the queue until its deadline and is passed over then.
 */

/** Once this many entries are swept, the queue is copied down to its live part (when that halves it). */
const COMPACT_AFTER = 1024;

export class AuthorizeDeadlines<S> {
  private sockets: (S | null)[] = [];
  private due: number[] = [];
  /** The first entry not yet swept. */
  private head = 0;

  constructor(readonly timeoutMs: number) {}

  /** Entries not yet swept (sockets that authorized in time included). */
  get size(): number {
    return this.sockets.length - this.head;
  }

  /** A socket opened at `nowMs`: its authorize is due `timeoutMs` later. */
  add(ws: S, nowMs: number): void {
    this.sockets.push(ws);
    this.due.push(nowMs + this.timeoutMs);
  }

  /** Takes out every socket due by `nowMs`, oldest first, and hands each to `onDue` (which checks whether it still waits). */
  sweep(nowMs: number, onDue: (ws: S) => void): void {
    while (this.head < this.sockets.length && this.due[this.head] <= nowMs) {
      const ws = this.sockets[this.head];
      this.sockets[this.head++] = null;
      if (ws !== null) onDue(ws);
    }
    if (this.head > COMPACT_AFTER && this.head * 2 > this.sockets.length) {
      this.sockets = this.sockets.slice(this.head);
      this.due = this.due.slice(this.head);
      this.head = 0;
    }
  }
}
