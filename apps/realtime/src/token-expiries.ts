/**
 * When each authorized socket's token expires, without a timer per socket: buckets by second (the
 * token's `exp`, which the socket keeps in a field), swept by the server's one tick.
 */

/** The field of a socket its expiry is kept in: the token's `exp`, in seconds. */
export interface Expiring {
  exp: number;
}

export class TokenExpiries<S extends Expiring> {
  /** second → the sockets whose token expires then. */
  private readonly buckets = new Map<number, Set<S>>();
  /** Every second up to this one has been swept. */
  private sweptTo: number;

  constructor(nowMs = Date.now()) {
    this.sweptTo = Math.floor(nowMs / 1000);
  }

  /** Sockets waiting for their expiry. */
  get size(): number {
    let n = 0;
    for (const bucket of this.buckets.values()) n += bucket.size;
    return n;
  }

  /** Files the socket under its `exp`. */
  schedule(ws: S): void {
    let bucket = this.buckets.get(ws.exp);
    if (!bucket) this.buckets.set(ws.exp, (bucket = new Set()));
    bucket.add(ws);
  }

  /** Takes the socket out (call before its `exp` changes, and when it closes). */
  cancel(ws: S): void {
    this.buckets.get(ws.exp)?.delete(ws);
  }

  /** Takes out every socket whose token expired by `nowMs` (its `exp` second has begun) and hands each to `onExpired`. */
  sweep(nowMs: number, onExpired: (ws: S) => void): void {
    const second = Math.floor(nowMs / 1000);
    for (let s = this.sweptTo; s <= second; s++) {
      const due = this.buckets.get(s);
      if (!due) continue;
      this.buckets.delete(s);
      for (const ws of due) onExpired(ws);
    }
    this.sweptTo = second;
  }
}
