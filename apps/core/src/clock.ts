/**
 * The time the domain's own schedules and caches read: how long a cached copy lives, when a
 * scheduled post shows, when the next background tick or retry runs. A process takes the system's
 * (`systemClock`); a test gives one it moves by hand, so it advances time instead of sleeping.
 *
 * Not every reading of time goes through it: what is measured against someone else's clock stays on
 * the wall (a token's expiry, which every verifier checks by its own; times the database stamps;
 * deadlines on real I/O). The API's rate-limit windows read it: every process of a deployment runs on
 * the system's, so they agree on the window their shared Redis counters are in, and a test moves its
 * clock to a window's start instead of waiting for one.
 */
export interface Clock {
  /** Milliseconds since the epoch, as Date.now(). */
  now(): number;
  /** Runs `run` once, `ms` from now. The timer never keeps the process alive. */
  after(ms: number, run: () => void): Timer;
  /** Runs `run` every `ms` from now on. The timer never keeps the process alive. */
  every(ms: number, run: () => void): Timer;
}

export interface Timer {
  /** It does not run (again); harmless once it has run, or twice. */
  cancel(): void;
}

/** The system's clock and Node's timers (unref'd: a background timer holds no process open). */
export const systemClock: Clock = {
  now: () => Date.now(),
  after(ms, run) {
    const timer = setTimeout(run, ms).unref();
    return { cancel: () => clearTimeout(timer) };
  },
  every(ms, run) {
    const timer = setInterval(run, ms).unref();
    return { cancel: () => clearInterval(timer) };
  },
};
