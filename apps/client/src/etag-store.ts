/**
 * Where conditional reads keep their last answer: the ETag and the body it names. A read sends the
 * ETag back (If-None-Match); on 304 the kept body is the answer, so an unchanged config, flag list or
 * blog page costs no body at all.
 */
export interface EtagEntry {
  etag: string;
  body: string;
}

export interface EtagStore {
  get(key: string): EtagEntry | undefined | Promise<EtagEntry | undefined>;
  set(key: string, entry: EtagEntry): void | Promise<void>;
}

/** Kept in memory, the newest `max` answers (the default store). */
export class MemoryEtagStore implements EtagStore {
  private readonly entries = new Map<string, EtagEntry>();

  constructor(private readonly max = 200) {}

  get(key: string): EtagEntry | undefined {
    const entry = this.entries.get(key);
    if (entry) {
      // Newest last: a read moves its entry to the end.
      this.entries.delete(key);
      this.entries.set(key, entry);
    }
    return entry;
  }

  set(key: string, entry: EtagEntry): void {
    this.entries.delete(key);
    this.entries.set(key, entry);
    if (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value as string);
  }
}

/** The part of the Web Storage API the store uses (`localStorage`, `sessionStorage`). */
export interface WebStorage {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
}

/** Kept in a browser's storage (e.g. `localStorage`), so a reload still revalidates instead of reloading. */
export class WebStorageEtagStore implements EtagStore {
  constructor(
    private readonly storage: WebStorage,
    private readonly prefix = 'hearth:etag:',
  ) {}

  get(key: string): EtagEntry | undefined {
    const text = this.storage.getItem(this.prefix + key);
    if (!text) return undefined;
    try {
      const entry = JSON.parse(text) as EtagEntry;
      return typeof entry.etag === 'string' && typeof entry.body === 'string' ? entry : undefined;
    } catch {
      return undefined;
    }
  }

  set(key: string, entry: EtagEntry): void {
    try {
      this.storage.setItem(this.prefix + key, JSON.stringify(entry));
    } catch {
      // Full or refused: the read still works, only uncached.
    }
  }
}
