/**
 * Card types and card templates (spec §2 "Card type definition", "Card template"; §4 Definitions;
 * docs/cards.md): content written by CardType and CardTemplate manifests through syncCardType /
 * syncCardTemplate (called by their reconcilers), one row per document (content/owned-row.ts), read
 * by servers through GET /definitions/card-types and /card-templates, and by the money engine's card
 * moves inside their own statement (never from a cache).
 *
 * Each write bumps the environment's content version of its kind, which the definitions' ETags name,
 * so a conditional read answers 304 until a card type (or template) of the environment changes.
 */
import type { Db, Queryable, Tx } from '../db/knex';
import { inTransaction } from '../db/transaction';
import { refuse } from '../errors';
import type { Announcer } from '../invalidation';
import { contentChanged, readContentVersion } from '../content/game-config';
import { type OwnedRowTable, releaseOwnedRow, syncOwnedRow } from '../content/owned-row';
import { AskDigests } from '../content/ask-digests';
import { compactBytes } from '../items/item-types';
import { type CursorCodec, environmentRowsPage, type Page } from '../pagination';
import type { EnvironmentContext } from '../tenancy/environments';
import type { Resource } from '../contract/resources';
import { CARD_LIMITS, type CardTemplateSpecT, type CardTypeSpecT } from '../contract/card-type';
import { GAME_KEY_MAX, isGameKey } from '../contract/game-keys';
import type { CardTemplateDefinition, CardTypeDefinition } from '../shapes';
import type { PageRequest } from '../shapes/common';
export type { CardTemplateDefinition, CardTypeDefinition } from '../shapes';

/** One kind of card definition: its table (as owned rows), its content version kind and how a row is answered. */
interface DefinitionKind<D> {
  table: OwnedRowTable;
  /** The content version kind (content_versions.kind) its writes bump and its ETags name. */
  content: string;
  /** The word for it in refusals. */
  noun: string;
  toDefinition(row: Record<string, any>): D;
}

export const CARD_TYPES: DefinitionKind<CardTypeDefinition> = {
  table: { name: 'card_types', keyColumn: 'key', keyField: 'slug', kind: 'CardType', jsonColumns: ['prices', 'data'] },
  content: 'card-types',
  noun: 'card type',
  toDefinition: (row) => ({
    key: row.key,
    slug: row.key,
    name: row.name,
    description: row.description,
    enabled: row.enabled,
    perDeckLimit: row.per_deck_limit ?? null,
    starter: row.starter,
    purchasable: row.purchasable,
    priceRule: row.price_rule,
    prices: row.prices,
    data: row.data,
  }),
};

export const CARD_TEMPLATES: DefinitionKind<CardTemplateDefinition> = {
  table: { name: 'card_templates', keyColumn: 'key', keyField: 'key', kind: 'CardTemplate', jsonColumns: ['data'] },
  content: 'card-templates',
  noun: 'card template',
  toDefinition: (row) => ({ key: row.key, name: row.name, description: row.description, enabled: row.enabled, data: row.data }),
};

/** The row a validated CardType document declares (its defaults filled by validation: spec/fields.ts), the key resolved (slug, else metadata.name). */
export function cardTypeRow(doc: Resource<CardTypeSpecT>): Record<string, unknown> {
  const s = doc.spec;
  return {
    key: s.slug ?? doc.metadata.name,
    name: s.name,
    description: s.description,
    enabled: s.enabled,
    per_deck_limit: s.perDeckLimit ?? null,
    starter: s.starter,
    purchasable: s.purchasable,
    price_rule: s.priceRule,
    prices: s.prices.map((p) => ({ currencyKey: p.currencyKey, amount: p.amount })),
    data: s.data ?? {},
  };
}

/** The row a validated CardTemplate document declares. */
export function cardTemplateRow(doc: Resource<CardTemplateSpecT>): Record<string, unknown> {
  const s = doc.spec;
  return { key: s.key ?? doc.metadata.name, name: s.name, description: s.description, enabled: s.enabled, data: s.data ?? {} };
}

/**
 * What the schema cannot say: a key taken from metadata.name must still be a key, and data is at most
 * 1 KB compact. The refusal names the document's field (`slug` or `key`, `data`).
 */
function checkRow<D>(kind: DefinitionKind<D>, row: Record<string, unknown>): void {
  const key = row.key as string;
  if (!isGameKey(key)) {
    throw refuse.invalid(
      kind.table.keyField,
      `"${key}" is not a ${kind.noun} key (1-${GAME_KEY_MAX} letters, digits and . _ : -); give spec.${kind.table.keyField}`,
    );
  }
  const bytes = compactBytes(row.data);
  if (bytes > CARD_LIMITS.dataBytes) throw refuse.invalid('data', `is ${bytes} bytes written compactly; at most ${CARD_LIMITS.dataBytes}`);
}

async function definitionsChanged(trx: Tx, bus: Announcer, content: string, environmentIds: number[]): Promise<void> {
  for (const environmentId of environmentIds) {
    await contentChanged(trx, bus, environmentId, content);
  }
}

/**
 * Makes the definition `owner` declares exactly `row` in the environment; a key of another document
 * is refused (`conflict` on the key's field). Nothing changes (and no version moves) when nothing differs.
 */
export async function syncCardDefinition<D>(
  db: Queryable,
  bus: Announcer,
  kind: DefinitionKind<D>,
  target: { environmentId: number; owner: string; row: Record<string, unknown> },
): Promise<'created' | 'updated' | 'unchanged'> {
  const { environmentId, owner, row } = target;
  checkRow(kind, row);
  return inTransaction(db, async (trx) => {
    const outcome = await syncOwnedRow(trx, kind.table, { environment_id: environmentId, owner, ...row });
    await definitionsChanged(trx, bus, kind.content, outcome.changedEnvironments);
    return outcome.action;
  });
}

/** Removes the definition `owner` declared (its document was deleted); cards players hold of it stay theirs. */
export async function releaseCardDefinition<D>(db: Queryable, bus: Announcer, kind: DefinitionKind<D>, owner: string): Promise<boolean> {
  return inTransaction(db, async (trx) => {
    const environmentId = await releaseOwnedRow(trx, kind.table, owner);
    if (environmentId !== null) await definitionsChanged(trx, bus, kind.content, [environmentId]);
    return environmentId !== null;
  });
}

/**
 * GET /definitions/card-types and /definitions/card-templates: every definition of the environment by
 * key (byte order), switched-off ones included (`enabled: false`), each a page, with an ETag of the
 * kind's content version (one indexed read: card definitions are read by servers, rarely).
 */
export class CardDefinitionService {
  private readonly asks = new AskDigests();

  /** `pool` reads the content versions: committed data only. */
  constructor(
    private readonly pool: Db,
    private readonly cursors: CursorCodec,
  ) {}

  /** GET /definitions/card-types: every card type by key, switched-off ones included. */
  listCardTypes(db: Queryable, env: EnvironmentContext, q: PageRequest): Promise<Page<CardTypeDefinition>> {
    return this.list(db, CARD_TYPES, env, q);
  }

  /** GET /definitions/card-templates: every card template by key, switched-off ones included. */
  listCardTemplates(db: Queryable, env: EnvironmentContext, q: PageRequest): Promise<Page<CardTemplateDefinition>> {
    return this.list(db, CARD_TEMPLATES, env, q);
  }

  cardTypesEtag(envId: number, ask: string): Promise<string> {
    return this.etag(CARD_TYPES, envId, ask);
  }

  cardTemplatesEtag(envId: number, ask: string): Promise<string> {
    return this.etag(CARD_TEMPLATES, envId, ask);
  }

  /** A strong ETag for one read: the kind's content version, the environment and what was asked. */
  private async etag<D>(kind: DefinitionKind<D>, envId: number, ask: string): Promise<string> {
    return this.asks.etag(envId, `${kind.content}|${ask}`, `c${await readContentVersion(this.pool, envId, kind.content)}`);
  }

  private list<D>(db: Queryable, kind: DefinitionKind<D>, env: EnvironmentContext, q: PageRequest): Promise<Page<D>> {
    return environmentRowsPage(this.cursors, db, env.id, q, { listId: `${kind.content}|${env.id}`, table: kind.table.name, by: 'key' }, kind.toDefinition);
  }
}
