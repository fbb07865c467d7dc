/**
 * What API and realtime processes share besides the database: rate-limit counters and pub/sub.
 * Redis in production; an in-process implementation on the embedded default (one process, same semantics).
 */
export interface RateCheck {
  /** Names the limit in headers, metrics and refusals, e.g. `environment-minute`. */
  name: string;
  /** The counter's key without window: the implementation appends the window's start. */
  key: string;
  limit: number;
  windowSeconds: number;
}

export interface RateOutcome {
  allowed: boolean;
  /** The limit nearest to refusing (the refusing one when refused). */
  nearest: { name: string; limit: number; remaining: number; resetSeconds: number };
}

export type Unsubscribe = () => Promise<void>;

/** A store command's name (a closed set the code decides), its duration and whether it succeeded. */
export type CommandObserver = (command: string, seconds: number, ok: boolean) => void;

/**
 * A connection to the backing store lost (it was ready, then closed) or recovered (ready again after a
 * loss, by the client's own reconnecting). `connection` names which: a closed set the code decides
 * (Redis: `command` for commands and rate limits, `subscriber` for pub/sub).
 */
export type ConnectionObserver = (connection: string, event: 'lost' | 'recovered') => void;

export interface Coordination {
  /**
   * Checks every limit and, only when none would be passed, counts the request against all of them,
   * atomically. Windows are fixed clock windows (a minute starts at :00, a day at 00:00 UTC).
   */
  rateLimit(checks: RateCheck[], nowMs?: number): Promise<RateOutcome>;
  publish(channel: string, message: string): Promise<void>;
  subscribe(channel: string, onMessage: (message: string) => void): Promise<Unsubscribe>;
  /** true when the backing store answers (readiness). */
  ping(): Promise<boolean>;
  /** true for the in-process coordination of the embedded default: there is no Redis to report on. */
  readonly inProcess?: boolean;
  /** Hears every command sent to the backing store (Redis); absent where there is none (in-process). The answer stops it. */
  observeCommands?(observe: CommandObserver): () => void;
  /** Hears the backing store's connections lost and recovered (Redis); absent where there is none. The answer stops it. */
  observeConnections?(observe: ConnectionObserver): () => void;
  close(): Promise<void>;
}

/** Fixed clock windows: the window's start and the seconds until the next one begins. */
export function windowOf(nowMs: number, windowSeconds: number): { start: number; resetSeconds: number } {
  const nowSeconds = Math.floor(nowMs / 1000);
  const start = nowSeconds - (nowSeconds % windowSeconds);
  return { start, resetSeconds: start + windowSeconds - nowSeconds };
}

/** Picks the limit nearest to refusing from the counts after this request: least remaining, then soonest reset. */
export function nearestOf(checks: RateCheck[], counts: number[], resets: number[]): RateOutcome['nearest'] {
  let best = -1;
  let bestRemaining = Infinity;
  for (let i = 0; i < checks.length; i++) {
    const remaining = Math.max(0, checks[i].limit - counts[i]);
    if (remaining < bestRemaining || (remaining === bestRemaining && resets[i] < resets[best])) {
      best = i;
      bestRemaining = remaining;
    }
  }
  const c = checks[best];
  return { name: c.name, limit: c.limit, remaining: bestRemaining, resetSeconds: resets[best] };
}
