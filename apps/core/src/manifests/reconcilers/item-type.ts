import { itemTypeDefinitionOf, releaseItemType, syncItemType } from '../../items/item-types';
import type { ItemTypeManifestT } from '../schemas';
import { contentReconciler } from './shared';

/**
 * An ItemType is one item type of its environment, keyed by `spec.key` (or metadata.name). Deleted,
 * the definition goes (no longer listed, granted or sold); items players hold of it stay theirs.
 */
export const itemTypeReconciler = contentReconciler<ItemTypeManifestT>({
  sync: (trx, place, doc, bus) => syncItemType(trx, bus, { ...place, definition: itemTypeDefinitionOf(doc) }),
  release: (db, owner, bus) => releaseItemType(db, bus, owner),
  rows: { table: 'item_types' },
});
