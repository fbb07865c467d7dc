/**
 * Legal documents (spec §2 LegalDocument, LegalStanding; §4 Legal). The environment's documents are
 * content written by LegalDocument manifests (syncLegalDocument below, called by the reconciler); a
 * player accepts the current version of each. Acceptances keep the version accepted, so a new
 * version makes an earlier acceptance not current without touching it.
 *
 * The documents of an environment are served from memory (the list, and the documents half of a
 * standing): loaded once, dropped by every process when a `content` invalidation for the
 * environment arrives (the sync bumps the `legal` content version and announces it after commit).
 */
import { type ContentSources, type WatchedCache, environmentContentCache } from '../content/content-watch';
import type { Db, Queryable } from '../db/knex';
import { inTransaction } from '../db/transaction';
import { refuse } from '../errors';
import { holdExistingPlayer } from '../players/hold';
import type { Announcer, InvalidationBus } from '../invalidation';
import type { LegalDocumentSpecT, Resource } from '../contract/resources';
import { type CursorCodec, keysetPage, type Page } from '../pagination';
import type { PlayerService } from '../players/service';
import type { EnvironmentContext } from '../tenancy/environments';
import { contentChanged } from '../content/game-config';
import { type OwnedRowTable, type OwnerPlace, type SyncAction, releaseContent, releaseOwnedRows, syncOwnedRow } from '../content/owned-row';
import { AskDigests } from '../content/ask-digests';
import type { PageRequest } from '../shapes/common';
import type { LegalAcceptRequest, LegalDocument, LegalStanding } from '../shapes/legal';

/** The content-version kind of legal documents (ETags of GET /legal/documents derive from it). */
export const LEGAL_CONTENT = 'legal';
const LEGAL_DOCUMENTS: OwnedRowTable = { name: 'legal_documents', keyColumn: 'document', keyField: 'document', kind: 'LegalDocument' };

/** What a LegalDocument manifest writes: its spec without the environment, the key resolved. */
export type LegalDocumentContent = LegalDocument;

export function legalDocumentContent(doc: Resource<LegalDocumentSpecT>): LegalDocumentContent {
  const { spec } = doc;
  return { document: spec.document ?? doc.metadata.name, title: spec.title, url: spec.url, version: spec.version, required: spec.required };
}

/** Makes the owner's document exactly `content` in the environment; the content version moves only on a change. */
export async function syncLegalDocument(db: Queryable, bus: Announcer, target: OwnerPlace & { content: LegalDocumentContent }): Promise<SyncAction> {
  const { environmentId, owner, content } = target;
  return inTransaction(db, async (trx) => {
    const outcome = await syncOwnedRow(trx, LEGAL_DOCUMENTS, { environment_id: environmentId, owner, ...content });
    for (const id of outcome.changedEnvironments) await contentChanged(trx, bus, id, LEGAL_CONTENT);
    return outcome.action;
  });
}

/** Removes the owner's document (its manifest was deleted); answers whether there was one. Acceptances stay. */
export async function releaseLegalDocument(db: Queryable, bus: Announcer, owner: string): Promise<boolean> {
  return releaseContent(db, bus, LEGAL_CONTENT, (trx) => releaseOwnedRows(trx, LEGAL_DOCUMENTS.name, owner));
}

/** An environment's documents in key order, with the content version they were read at. */
interface Catalog {
  version: number;
  documents: LegalDocument[];
  byKey: Map<string, LegalDocument>;
}

const DOCUMENT_COLUMNS = ['document', 'title', 'url', 'version', 'required'] as const;

function toDocument(row: Record<string, unknown>): LegalDocument {
  return {
    document: row.document as string,
    title: row.title as string,
    url: row.url as string,
    version: row.version as string,
    required: row.required as boolean,
  };
}

function catalogOf(version: number, documents: LegalDocument[]): Catalog {
  return { version, documents, byKey: new Map(documents.map((d) => [d.document, d])) };
}

/** The environment's documents as the database has them now (in the caller's transaction when there is one). */
async function readCatalog(db: Queryable, environmentId: number): Promise<Catalog> {
  // One statement, so the version and the documents are of one snapshot; the one-row join keeps the version when there are no documents.
  const { rows } = await db.raw(
    `SELECT cv.version AS content_version, ${DOCUMENT_COLUMNS.map((c) => `d.${c}`).join(', ')}
       FROM (SELECT 1) one
       LEFT JOIN content_versions cv ON cv.environment_id = ? AND cv.kind = ?
       LEFT JOIN legal_documents d ON d.environment_id = ?
      ORDER BY d.document`,
    [environmentId, LEGAL_CONTENT, environmentId],
  );
  const version = rows[0]?.content_version == null ? 0 : Number(rows[0].content_version);
  return catalogOf(version, rows.filter((r: Record<string, unknown>) => r.document !== null).map(toDocument));
}

/**
 * A page of `items` (already in key order; keys are ASCII, so JS order is byte order) after the
 * cursor's key: the same keyset paging and signed cursors as database lists, over memory.
 */
function pageFromMemory<T>(codec: CursorCodec, listId: string, q: PageRequest, items: T[], keyOf: (item: T) => string): Promise<Page<T>> {
  return keysetPage(
    codec,
    listId,
    q,
    async (after: string | undefined, take) => {
      const start = after === undefined ? 0 : items.findIndex((item) => keyOf(item) > after);
      return start < 0 ? [] : items.slice(start, start + take);
    },
    keyOf,
    (item) => item,
  );
}

export class LegalService {
  private catalogs: WatchedCache<Catalog>;
  private readonly asks = new AskDigests();

  constructor(
    private readonly content: ContentSources,
    private readonly players: PlayerService,
  ) {
    this.catalogs = environmentContentCache(content.watch, content.bus, 30_000);
  }

  /** The environment's documents: from memory on the hot path while the ContentWatch is live. */
  private catalog(environmentId: number): Promise<Catalog> {
    return this.catalogs.get(environmentId, () => readCatalog(this.content.pool, environmentId));
  }

  /** A strong ETag for one read of the documents list: the legal content version, the environment and what was asked. */
  async etag(environmentId: number, ask: string): Promise<string> {
    return this.etagOf(await this.catalog(environmentId), environmentId, ask);
  }

  private etagOf(catalog: Catalog, environmentId: number, ask: string): string {
    return this.asks.etag(environmentId, ask, catalog.version);
  }

  /** GET /legal/documents: a page of the environment's documents by key, from memory, with the ETag of the catalog it came from. */
  async listDocuments(env: EnvironmentContext, q: PageRequest, ask: string): Promise<{ page: Page<LegalDocument>; etag: string }> {
    const catalog = await this.catalog(env.id);
    const page = await pageFromMemory(this.content.cursors, `legal-documents|${env.id}`, q, catalog.documents, (d) => d.document);
    return { page, etag: this.etagOf(catalog, env.id, ask) };
  }

  /** GET /players/:playerId/legal: every document with the player's acceptance of it. */
  async standing(db: Queryable, env: EnvironmentContext, playerId: string): Promise<LegalStanding> {
    await this.players.get(db, env, playerId);
    const [catalog, accepted] = await Promise.all([this.catalog(env.id), acceptancesOf(db, env.id, playerId)]);
    return standingOf(catalog.documents, accepted);
  }

  /** GET /players/:playerId/legal/outstanding: required documents whose current version the player has not accepted. */
  async outstanding(db: Queryable, env: EnvironmentContext, playerId: string, q: PageRequest): Promise<Page<LegalDocument>> {
    await this.players.get(db, env, playerId);
    const [catalog, accepted] = await Promise.all([this.catalog(env.id), acceptancesOf(db, env.id, playerId)]);
    const outstanding = catalog.documents.filter((d) => d.required && !accepted.some((a) => a.document === d.document && a.version === d.version));
    return pageFromMemory(this.content.cursors, `legal-outstanding|${env.id}|${playerId}`, q, outstanding, (d) => d.document);
  }

  /**
   * POST /players/:playerId/legal/accept: records the player's acceptance of each document's
   * current version, checked against the database (not the cache: an apply a moment ago counts).
   * All or nothing; re-accepting a version keeps its first acceptedAt.
   */
  async accept(db: Queryable, env: EnvironmentContext, playerId: string, { documents: entries }: LegalAcceptRequest): Promise<LegalStanding> {
    return inTransaction(db, async (trx) => {
      // The player's row stays while we add to what they hold (deletion takes it FOR UPDATE).
      await holdExistingPlayer(trx, env, playerId);
      const catalog = await readCatalog(trx, env.id);
      entries.forEach((entry, i) => {
        const doc = catalog.byKey.get(entry.document);
        if (!doc) throw refuse.invalid(`documents.${i}.document`, `No legal document "${entry.document}" exists in this environment.`);
        if (doc.version !== entry.version) {
          throw refuse.invalid(`documents.${i}.version`, `"${entry.version}" is not the current version of "${entry.document}" (${doc.version}).`);
        }
      });
      const rowsToInsert = entries.map((e) => ({ player_id: playerId, environment_id: env.id, document: e.document, version: e.version }));
      await trx('legal_acceptances').insert(rowsToInsert).onConflict(['player_id', 'document', 'version']).ignore();
      return standingOf(catalog.documents, await acceptancesOf(trx, env.id, playerId));
    });
  }
}

interface Acceptance {
  document: string;
  version: string;
  acceptedAt: Date;
}

async function acceptancesOf(db: Queryable, environmentId: number, playerId: string): Promise<Acceptance[]> {
  const rows = await db('legal_acceptances')
    .where({ player_id: playerId, environment_id: environmentId })
    .orderBy([
      { column: 'accepted_at', order: 'desc' },
      { column: 'version', order: 'desc' },
    ])
    .select('document', 'version', 'accepted_at');
  return rows.map((r: Record<string, unknown>) => ({ document: r.document as string, version: r.version as string, acceptedAt: r.accepted_at as Date }));
}

/** The standing, given the documents (key order) and the player's acceptances (latest first). */
function standingOf(documents: LegalDocument[], accepted: Acceptance[]): LegalStanding {
  const entries = documents.map((doc) => {
    const latest = accepted.find((a) => a.document === doc.document);
    const current = accepted.some((a) => a.document === doc.document && a.version === doc.version);
    return { ...doc, acceptedVersion: latest?.version ?? null, acceptedAt: latest ? latest.acceptedAt.toISOString() : null, current };
  });
  return { documents: entries, outstanding: entries.filter((e) => e.required && !e.current).map((e) => e.document) };
}
