import { type Clock, type Timer, systemClock } from '@hearth/core';

interface Scheduled {
  due: number;
  /** Order of scheduling: timers due at the same moment run in the order they were set. */
  order: number;
  run: () => void;
  /** Set for `every`: the period after which it runs again. */
  everyMs?: number;
}

/**
 * A clock the test moves (apps/core/src/clock.ts), so a test advances time instead of sleeping.
 *
 * Its time is the wall clock's plus what the test advanced it by, so it is never behind times the
 * database or a token stamped; given `at`, it stands still at that instant instead (for exact ages).
 * Its timers never run by themselves: `advance` runs each that falls due, in order, with the clock
 * at its due time, and between them lets what is under way in this process go on (promise callbacks,
 * I/O already answered). Work that a timer starts and that waits for a database or a server is
 * awaited by the test as any other (`eventually`).
 */
export class TestClock implements Clock {
  private offset = 0;
  private standing: number | undefined;
  private timers: Scheduled[] = [];
  private scheduledCount = 0;

  constructor(options: { at?: number } = {}) {
    this.standing = options.at;
  }

  now(): number {
    return this.standing ?? Date.now() + this.offset;
  }

  after(ms: number, run: () => void): Timer {
    return this.schedule({ due: this.now() + ms, order: this.scheduledCount++, run });
  }

  every(ms: number, run: () => void): Timer {
    if (!(ms > 0)) throw new Error(`a timer every ${ms} ms would never let time pass`);
    return this.schedule({ due: this.now() + ms, order: this.scheduledCount++, run, everyMs: ms });
  }

  /** Timers set and not yet run (or cancelled); `every` timers count until cancelled. */
  get pending(): number {
    return this.timers.length;
  }

  /**
   * Moves time `ms` forward, running every timer due by then. First lets what is under way set its
   * timers, so a tick that just ended has scheduled the next before time moves.
   */
  async advance(ms: number): Promise<void> {
    await settle();
    const until = this.now() + ms;
    for (;;) {
      const next = this.timers.filter((t) => t.due <= until).sort((a, b) => a.due - b.due || a.order - b.order)[0];
      if (!next) break;
      this.moveTo(next.due);
      if (next.everyMs === undefined) this.timers.splice(this.timers.indexOf(next), 1);
      else Object.assign(next, { due: next.due + next.everyMs, order: this.scheduledCount++ });
      next.run();
      await settle();
    }
    this.moveTo(until);
  }

  private schedule(timer: Scheduled): Timer {
    this.timers.push(timer);
    return {
      cancel: () => {
        const at = this.timers.indexOf(timer);
        if (at >= 0) this.timers.splice(at, 1);
      },
    };
  }

  /** Never backwards: a time already passed (the wall moved on meanwhile) leaves it where it is. */
  private moveTo(time: number): void {
    if (this.standing !== undefined) this.standing = Math.max(this.standing, time);
    else this.offset = Math.max(this.offset, time - Date.now());
  }
}

/** One turn of the event loop: promise callbacks queued now run, and I/O that has answered is handed in. */
function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * The wall clock and the system's timers, except that a test may move it forward to the start of a
 * clock window (the API's rate limits count per minute, per ten minutes, per hour of its core's
 * clock): a scenario that must not straddle two windows moves there instead of sleeping until the
 * next one. Never behind the wall, so every time the database or a token stamps is in its past; the
 * rest of the process runs as with the system's clock (its timers are real ones).
 */
export class WindowClock implements Clock {
  private offset = 0;

  now(): number {
    return Date.now() + this.offset;
  }

  after(ms: number, run: () => void): Timer {
    return systemClock.after(ms, run);
  }

  every(ms: number, run: () => void): Timer {
    return systemClock.every(ms, run);
  }

  /** Seconds left in the current window of `windowSeconds` (windows start at multiples of it since the epoch). */
  secondsLeft(windowSeconds: number): number {
    return windowSeconds - ((this.now() / 1000) % windowSeconds);
  }

  /** When fewer than `roomSeconds` are left in the current window, moves to 100 ms into the next one. */
  roomInWindow(windowSeconds: number, roomSeconds: number): void {
    const left = this.secondsLeft(windowSeconds);
    if (left < roomSeconds) this.offset += left * 1000 + 100;
  }
}
