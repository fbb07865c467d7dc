import { EventEmitter } from 'node:events';
import { type Coordination, type RateCheck, type RateOutcome, type Unsubscribe, nearestOf, windowOf } from './coordination';

/** The embedded default's coordination: counters and pub/sub inside this one process. */
export class MemoryCoordination implements Coordination {
  private counters = new Map<string, { count: number; expiresAt: number }>();
  private bus = new EventEmitter();
  private sweeper: NodeJS.Timeout;

  constructor() {
    this.bus.setMaxListeners(0);
    this.sweeper = setInterval(() => this.sweep(Date.now()), 60_000);
    this.sweeper.unref();
  }

  async rateLimit(checks: RateCheck[], nowMs = Date.now()): Promise<RateOutcome> {
    const windows = checks.map((c) => windowOf(nowMs, c.windowSeconds));
    const keys = checks.map((c, i) => `${c.key}:${windows[i].start}`);
    const current = keys.map((k) => {
      const entry = this.counters.get(k);
      return entry && entry.expiresAt > nowMs ? entry.count : 0;
    });
    const resets = windows.map((w) => w.resetSeconds);
    const refused = checks.findIndex((c, i) => current[i] + 1 > c.limit);
    if (refused >= 0) {
      const c = checks[refused];
      return { allowed: false, nearest: { name: c.name, limit: c.limit, remaining: 0, resetSeconds: resets[refused] } };
    }
    const after = keys.map((k, i) => {
      const count = current[i] + 1;
      this.counters.set(k, { count, expiresAt: nowMs + (windows[i].resetSeconds + 1) * 1000 });
      return count;
    });
    return { allowed: true, nearest: nearestOf(checks, after, resets) };
  }

  async publish(channel: string, message: string): Promise<void> {
    // Asynchronous like Redis: a publisher never runs subscribers inside its own call stack.
    setImmediate(() => this.bus.emit(channel, message));
  }

  async subscribe(channel: string, onMessage: (message: string) => void): Promise<Unsubscribe> {
    this.bus.on(channel, onMessage);
    return async () => {
      this.bus.off(channel, onMessage);
    };
  }

  readonly inProcess = true;

  async ping(): Promise<boolean> {
    return true;
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    this.bus.removeAllListeners();
  }

  private sweep(nowMs: number): void {
    for (const [k, v] of this.counters) if (v.expiresAt <= nowMs) this.counters.delete(k);
  }
}
