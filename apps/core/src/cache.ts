import { type Clock, systemClock } from './clock';

/**
 * A small in-process cache with a time-to-live and an upper size; entries can also be dropped by key
 * when another process announces a change (see the invalidation bus). Its entries age by `clock`.
 */
export class TtlCache<K, V> {
  private entries = new Map<K, { value: V; expiresAt: number }>();
  private lastSweep: number;
  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 100_000,
    private readonly clock: Clock = systemClock,
  ) {
    this.lastSweep = clock.now();
  }

  get(key: K, now = this.clock.now()): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt <= now) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  set(key: K, value: V, ttlMs = this.ttlMs): void {
    // Expired entries nobody reads again would stay until the size bound: drop them once per lifetime.
    const now = this.clock.now();
    if (now - this.lastSweep >= this.ttlMs) {
      this.lastSweep = now;
      for (const [k, e] of this.entries) if (e.expiresAt <= now) this.entries.delete(k);
    }
    if (this.entries.size >= this.maxEntries) {
      // Drop the oldest insertion: Map iterates in insertion order.
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    this.entries.set(key, { value, expiresAt: now + ttlMs });
  }

  delete(key: K): void {
    this.entries.delete(key);
  }

  deleteWhere(predicate: (key: K, value: V) => boolean): void {
    for (const [k, e] of this.entries) if (predicate(k, e.value)) this.entries.delete(k);
  }

  get size(): number {
    return this.entries.size;
  }

  clear(): void {
    this.entries.clear();
  }
}

/** Runs a loader once for concurrent callers of the same key. */
export class SingleFlight<K, V> {
  private inFlight = new Map<K, Promise<V>>();
  run(key: K, load: () => Promise<V>): Promise<V> {
    const existing = this.inFlight.get(key);
    if (existing) return existing;
    const p = load().finally(() => {
      if (this.inFlight.get(key) === p) this.inFlight.delete(key);
    });
    this.inFlight.set(key, p);
    return p;
  }

  /** Callers from now on start a load of their own (what is under way may have read too early). */
  forget(key: K): void {
    this.inFlight.delete(key);
  }
}
