/**
 * Definitions served from memory (GET /definitions/item-types, /definitions/skill-trees, and a
 * player's skill trees): each environment's definitions of one kind are loaded once, tagged with the
 * kind's content version read before them, and answered from memory while the version stands. A
 * `content` announcement drops the version; the next read asks it again and reloads only if it moved.
 * Each kind's writers bump its content version and announce `content` after their commit.
 */
import type { Db } from '../db/knex';
import { SingleFlight } from '../cache';
import { type ContentSources, type WatchedCache, environmentContentCache } from './content-watch';
import { readContentVersion } from './game-config';
import { AskDigests } from './ask-digests';
import { type CursorCodec, keysetPage, type Page } from '../pagination';
import type { PageRequest } from '../shapes/common';

/** How long a version is kept at most, even while the ContentWatch is live. */
export const DEFINITIONS_VERSION_TTL_MS = 30_000;

export interface DefinitionSnapshot<T> {
  version: number;
  /** Every definition of the environment, by key (byte order). */
  definitions: T[];
}

export class DefinitionSnapshots<T extends { key: string }> {
  private versions: WatchedCache<number>;
  private snapshots = new Map<number, DefinitionSnapshot<T>>();
  private loadFlight = new SingleFlight<string, DefinitionSnapshot<T>>();
  private readonly asks = new AskDigests();

  private readonly pool: Db;
  private readonly cursors: CursorCodec;

  /**
   * `contentKind` is the kind's row of content_versions; `load` reads every definition of an
   * environment by key on the content's pool (shared by every request of the process, a snapshot holds committed data).
   */
  constructor(
    content: ContentSources,
    private readonly contentKind: string,
    private readonly load: (pool: Db, environmentId: number) => Promise<T[]>,
  ) {
    this.pool = content.pool;
    this.cursors = content.cursors;
    this.versions = environmentContentCache(content.watch, content.bus, DEFINITIONS_VERSION_TTL_MS);
  }

  /** The kind's content version: from memory while the ContentWatch is live. */
  private version(envId: number): Promise<number> {
    return this.versions.get(envId, () => readContentVersion(this.pool, envId, this.contentKind));
  }

  /** The environment's definitions at its current version. Rows read after the version are at least that new; a newer change moves the version again and reloads. */
  async snapshot(envId: number): Promise<DefinitionSnapshot<T>> {
    const version = await this.version(envId);
    const held = this.snapshots.get(envId);
    if (held && held.version === version) return held;
    return this.loadFlight.run(`${envId}|${version}`, async () => {
      const snapshot = { version, definitions: await this.load(this.pool, envId) };
      const current = this.snapshots.get(envId);
      if (!current || current.version <= version) this.snapshots.set(envId, snapshot);
      return snapshot;
    });
  }

  /** A strong ETag for one read of the definitions: the kind's content version, the environment and what was asked. */
  async etag(envId: number, ask: string): Promise<string> {
    return this.asks.etag(envId, ask, `t${await this.version(envId)}`);
  }

  /** A page of `definitions` (sorted by key, byte order) as `answer` maps them; `list` names the list for its cursors. */
  page<A>(definitions: T[], list: string, q: PageRequest, answer: (definition: T) => A): Promise<Page<A>> {
    return keysetPage(
      this.cursors,
      list,
      q,
      async (after: string | undefined, take) => {
        const from = after === undefined ? 0 : firstAfter(definitions, after);
        return definitions.slice(from, from + take);
      },
      (def) => def.key,
      answer,
    );
  }
}

/** Index of the first definition whose key sorts after `key` in byte order (the list is sorted so). */
function firstAfter(definitions: { key: string }[], key: string): number {
  const target = Buffer.from(key);
  let low = 0;
  let high = definitions.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (Buffer.compare(Buffer.from(definitions[mid].key), target) <= 0) low = mid + 1;
    else high = mid;
  }
  return low;
}
