/**
 * Item type definitions (spec §2 "Item type definition", §4 Definitions; docs/economy.md "Item
 * types"). Written by ItemType manifests (syncItemType / releaseItemType, called by the reconciler),
 * read by servers through GET /definitions/item-types (ItemTypeService, from memory) and by the item
 * routes inside their own transaction (loadItemType, never from a cache).
 *
 * Each write bumps the environment's `item-types` content version and announces `content` after the
 * commit, so every process drops its copy at once.
 */
import { sameJson } from '../canonical-json';
import type { Db, Queryable, Tx } from '../db/knex';
import { inTransaction } from '../db/transaction';
import { refuse } from '../errors';
import { type Announcer, type InvalidationBus } from '../invalidation';
import { contentChanged } from '../content/game-config';
import { lockContentWriter, refuseKeyOfAnother, releaseContent, releaseOwnedRows } from '../content/owned-row';
import type { ContentSources } from '../content/content-watch';
import { DefinitionSnapshots } from '../content/definition-snapshots';
import type { ItemTypeSpecT, Resource } from '../contract/resources';
import type { CursorCodec, Page } from '../pagination';
import type { EnvironmentContext } from '../tenancy/environments';
import { GAME_KEY_MAX, isGameKey } from '../contract/game-keys';
import { ITEM_TYPE_LIMITS } from '../contract/item-type';

/** The content version kind of item types (content_versions.kind). */
export const ITEM_TYPES_CONTENT = 'item-types';

// The item type's answer shape and its parts (spec §2) are the shapes' types (shapes/items.ts).
import type { ItemTypeDefinition } from '../shapes';
import type { PageRequest } from '../shapes/common';
export type { ContainerContents, ItemOwnership, ItemTypeDefinition, ItemTypeSwitches, Price } from '../shapes';

/** The definition a validated document declares: the key resolved, every default filled in. */
export function itemTypeDefinitionOf(doc: Resource<ItemTypeSpecT>): ItemTypeDefinition {
  // A validated document: every field with a default in ItemTypeSpec is filled (spec/fields.ts).
  const s = doc.spec;
  const switches = { enabled: s.enabled, usable: s.usable, purchasable: s.purchasable };
  return {
    key: s.key ?? doc.metadata.name,
    name: s.name,
    description: s.description,
    icon: s.icon ?? null,
    category: s.category,
    ownership: s.ownership,
    scope: s.scope,
    switches,
    ...switches,
    maxOwned: s.maxOwned ?? null,
    priceRule: s.priceRule,
    prices: s.prices.map((p) => ({ currencyKey: p.currencyKey, amount: p.amount })),
    data: (s.data ?? {}) as Record<string, unknown>,
    contents: s.contents
      ? {
          grants: (s.contents.grants ?? []).map((g) => ({ itemTypeKey: g.itemTypeKey, quantity: g.quantity })),
          picks: (s.contents.picks ?? []).map((p) => ({
            count: p.count,
            from: p.from.map((e) => ({ itemTypeKey: e.itemTypeKey, quantity: e.quantity, weight: e.weight })),
          })),
        }
      : null,
    requires: [...s.requires],
  };
}

/** Compact UTF-8 bytes of a JSON value (spec §8 "1 KB compact"). */
export function compactBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value), 'utf8');
}

/** What the schema cannot say: a key taken from metadata.name must still be a key, and data is at most 1 KB compact. */
function checkDefinition(def: ItemTypeDefinition): void {
  if (!isGameKey(def.key)) {
    throw refuse.invalid('key', `"${def.key}" is not an item type key (1-${GAME_KEY_MAX} letters, digits and . _ : -); give spec.key`);
  }
  const bytes = compactBytes(def.data);
  if (bytes > ITEM_TYPE_LIMITS.dataBytes) throw refuse.invalid('data', `is ${bytes} bytes written compactly; at most ${ITEM_TYPE_LIMITS.dataBytes}`);
}

function rowOf(def: ItemTypeDefinition) {
  return {
    name: def.name,
    description: def.description,
    icon: def.icon,
    category: def.category,
    ownership: def.ownership,
    scope: def.scope,
    enabled: def.enabled,
    usable: def.usable,
    purchasable: def.purchasable,
    max_owned: def.maxOwned,
    price_rule: def.priceRule,
    prices: def.prices,
    data: def.data,
    contents: def.contents,
    requires: def.requires,
  };
}

function definitionOf(row: Record<string, any>): ItemTypeDefinition {
  const switches = { enabled: row.enabled, usable: row.usable, purchasable: row.purchasable };
  return {
    key: row.key,
    name: row.name,
    description: row.description,
    icon: row.icon ?? null,
    category: row.category,
    ownership: row.ownership,
    scope: row.scope,
    switches,
    ...switches,
    maxOwned: row.max_owned === null ? null : Number(row.max_owned),
    priceRule: row.price_rule,
    prices: row.prices,
    data: row.data,
    contents: row.contents ?? null,
    requires: row.requires,
  };
}

const JSON_COLUMNS = ['prices', 'data', 'contents', 'requires'] as const;
function stored(row: ReturnType<typeof rowOf>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...row };
  for (const column of JSON_COLUMNS) out[column] = row[column] === null ? null : JSON.stringify(row[column]);
  return out;
}

/** Where the rows of these documents are kept, for the owned-row rules (content/owned-row.ts). */
const ITEM_TYPE_ROWS = { name: 'item_types', keyColumn: 'key', keyField: 'key', kind: 'ItemType' };

/**
 * Makes the item type `owner` declares exactly `definition` in the environment. A key of another
 * document is refused (`conflict` on `key`). The row is updated in place; a document moved to another
 * environment or key leaves its old row. Nothing changes (and no version moves) when nothing differs.
 */
export async function syncItemType(
  db: Queryable,
  bus: Announcer,
  target: { environmentId: number; owner: string; definition: ItemTypeDefinition },
): Promise<'created' | 'updated' | 'unchanged'> {
  const { environmentId, owner, definition } = target;
  checkDefinition(definition);
  const wanted = rowOf(definition);
  return inTransaction(db, async (trx) => {
    await lockContentWriter(trx, environmentId);
    const before = await trx('item_types').where({ owner }).first();
    const moved = before && (Number(before.environment_id) !== environmentId || before.key !== definition.key);
    if (before && !moved && sameJson(rowOf(definitionOf(before)), wanted)) return 'unchanged';
    await refuseKeyOfAnother(trx, ITEM_TYPE_ROWS, environmentId, definition.key, owner);
    if (moved) {
      await trx('item_types').where({ owner }).delete();
      if (Number(before.environment_id) !== environmentId) await contentChanged(trx, bus, Number(before.environment_id), ITEM_TYPES_CONTENT);
    }
    const values = { ...stored(wanted), updated_at: trx.raw('clock_timestamp()') };
    if (before && !moved) await trx('item_types').where({ owner }).update(values);
    else await trx('item_types').insert({ environment_id: environmentId, key: definition.key, owner, ...values });
    await contentChanged(trx, bus, environmentId, ITEM_TYPES_CONTENT);
    return before ? 'updated' : 'created';
  });
}

/** Removes the item type `owner` declared (its document was deleted); answers whether there was one. Items players hold stay. */
export async function releaseItemType(db: Queryable, bus: Announcer, owner: string): Promise<boolean> {
  return releaseContent(db, bus, ITEM_TYPES_CONTENT, (trx) => releaseOwnedRows(trx, ITEM_TYPE_ROWS.name, owner));
}

/**
 * One item type, read in the caller's transaction (grants, purchases, use and open decide on what
 * is committed now, not on a cached copy); null when the environment has none of that key.
 * `lock` takes a share lock so a definition cannot change under a purchase until it commits.
 */
export async function loadItemType(db: Queryable, environmentId: number, key: string, options: { lock?: boolean } = {}): Promise<ItemTypeDefinition | null> {
  const query = db('item_types').where({ environment_id: environmentId, key }).first();
  if (options.lock) query.forShare();
  const row = await query;
  return row ? definitionOf(row) : null;
}

/**
 * GET /definitions/item-types from memory (content/definition-snapshots.ts): each environment's item
 * types are loaded once per content version, and answered from memory while the version stands.
 */
export class ItemTypeService {
  private readonly definitions: DefinitionSnapshots<ItemTypeDefinition>;

  constructor(content: ContentSources) {
    this.definitions = new DefinitionSnapshots(content, ITEM_TYPES_CONTENT, async (db, envId) =>
      (await db('item_types').where({ environment_id: envId }).orderBy('key')).map(definitionOf),
    );
  }

  /** A strong ETag for one read of the definitions: the item types' content version, the environment and what was asked. */
  etag(envId: number, ask: string): Promise<string> {
    return this.definitions.etag(envId, ask);
  }

  /** GET /definitions/item-types: every item type of the environment by key, switched-off ones included (enabled: false). */
  async listDefinitions(env: EnvironmentContext, q: PageRequest): Promise<Page<ItemTypeDefinition>> {
    const { definitions } = await this.definitions.snapshot(env.id);
    return this.definitions.page(definitions, `item-types|${env.id}`, q, (def) => def);
  }
}
