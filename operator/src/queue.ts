import { type Clock, type Timer, systemClock } from '@hearth/core';

/**
 * A work queue of object keys (pepr's and client-go's workqueue shape): one key is never worked on
 * twice at once; a key added while it is being worked on runs once more afterwards (the newest state
 * wins, however many events came); a key added while waiting is not duplicated. A key whose work
 * asks for a retry comes back after an exponential backoff with jitter, and an add (a new event)
 * brings it back at once. The worker's failures never escape: a throw is a retry.
 * It knows when each key waiting or in a run was added (the add its run serves): the oldest one's
 * age is the reconcile lag (hearth_operator_queue_oldest_seconds), which grows while work waits
 * behind a slow or stuck reconcile even when the depth stays small.
 */

export type WorkResult = 'done' | 'retry';

export interface QueueOptions {
  /** Keys worked on at once (different keys). */
  concurrency: number;
  /** The first retry's delay; each next one doubles, up to maxDelayMs. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** Told of every change of the number of keys waiting or being worked on (a metric). */
  onDepth?: (depth: number) => void;
  /** Told of a worker's throw (it is retried). */
  onError?: (key: string, err: unknown) => void;
  /** The clock of the lag and the retries' backoff; the system's unless a test gives its own. */
  clock?: Clock;
}

/** The delay before retry number `attempt` (1-based): base·2^(attempt-1), capped, with up to 20% jitter. */
export function backoffDelay(attempt: number, baseDelayMs: number, maxDelayMs: number, random: () => number = Math.random): number {
  const exponential = Math.min(maxDelayMs, baseDelayMs * 2 ** Math.min(attempt - 1, 30));
  return Math.round(exponential * (0.8 + 0.2 * random()));
}

export class KeyedQueue {
  private readonly waiting = new Set<string>();
  private readonly running = new Set<string>();
  /** Keys added again while running: they run once more when the current run ends. */
  private readonly dirty = new Set<string>();
  private readonly retryTimers = new Map<string, Timer>();
  private readonly attempts = new Map<string, number>();
  /** Keys waiting, or added again while running: when that add came (the first one not served yet). */
  private readonly pendingSince = new Map<string, number>();
  /** Keys running: when the add their run serves came. */
  private readonly runningSince = new Map<string, number>();
  private readonly clock: Clock;
  private readonly idleWaiters: (() => void)[] = [];
  private stopped = false;

  constructor(
    private readonly work: (key: string) => Promise<WorkResult>,
    private readonly options: QueueOptions,
  ) {
    this.clock = options.clock ?? systemClock;
  }

  /** Work on `key` as soon as possible (once, however often it is added before that). */
  add(key: string): void {
    if (this.stopped) return;
    const timer = this.retryTimers.get(key);
    if (timer) {
      timer.cancel();
      this.retryTimers.delete(key);
    }
    if (!this.pendingSince.has(key)) this.pendingSince.set(key, this.clock.now());
    if (this.running.has(key)) this.dirty.add(key);
    else this.waiting.add(key);
    this.changed();
  }

  /** Keys waiting or being worked on (retries scheduled for later are not counted). */
  get depth(): number {
    return this.waiting.size + this.running.size;
  }

  /**
   * Seconds since the oldest add not yet served by a finished run (waiting, or running: a hung
   * reconcile counts); 0 when nothing waits or runs. Scheduled retries count from their re-add.
   */
  oldestAgeSeconds(): number {
    let oldest = Infinity;
    for (const since of this.pendingSince.values()) oldest = Math.min(oldest, since);
    for (const since of this.runningSince.values()) oldest = Math.min(oldest, since);
    return oldest === Infinity ? 0 : Math.max(0, this.clock.now() - oldest) / 1000;
  }

  /** The retry number `key` is at (0 when its last run was done). */
  attemptsOf(key: string): number {
    return this.attempts.get(key) ?? 0;
  }

  /** Takes no more keys, drops scheduled retries, and waits for the runs in progress. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const timer of this.retryTimers.values()) timer.cancel();
    this.retryTimers.clear();
    this.waiting.clear();
    this.dirty.clear();
    this.pendingSince.clear();
    await this.idle();
  }

  /** Resolves when nothing is waiting or running (scheduled retries aside). */
  idle(): Promise<void> {
    if (this.depth === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private changed(): void {
    this.pump();
    this.options.onDepth?.(this.depth);
    if (this.depth === 0) for (const resolve of this.idleWaiters.splice(0)) resolve();
  }

  private pump(): void {
    for (const key of this.waiting) {
      if (this.running.size >= this.options.concurrency) return;
      this.waiting.delete(key);
      this.running.add(key);
      this.runningSince.set(key, this.pendingSince.get(key) ?? this.clock.now());
      this.pendingSince.delete(key);
      void this.run(key);
    }
  }

  private async run(key: string): Promise<void> {
    let result: WorkResult;
    try {
      result = await this.work(key);
    } catch (err) {
      this.options.onError?.(key, err);
      result = 'retry';
    }
    this.running.delete(key);
    this.runningSince.delete(key);
    if (result === 'retry' && !this.stopped) {
      const attempt = (this.attempts.get(key) ?? 0) + 1;
      this.attempts.set(key, attempt);
      if (!this.dirty.has(key)) {
        const timer = this.clock.after(backoffDelay(attempt, this.options.baseDelayMs, this.options.maxDelayMs), () => {
          this.retryTimers.delete(key);
          this.add(key);
        });
        this.retryTimers.set(key, timer);
      }
    } else {
      this.attempts.delete(key);
    }
    if (this.dirty.delete(key) && !this.stopped) this.waiting.add(key);
    this.changed();
  }
}
