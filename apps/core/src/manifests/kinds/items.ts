/** The items area's kind: an item type. */
import { ItemTypeSpec } from '../../contract/item-type';
import { itemTypeDefinitionOf, releaseItemType, syncItemType } from '../../items/item-types';
import { ENABLED_COLUMN, ENVIRONMENT_COLUMN, manifestKind, specColumn } from '../kind';
import { contentReconciler } from '../reconciler';

/**
 * An ItemType is one item type of its environment, keyed by `spec.key` (or metadata.name). Deleted,
 * the definition goes (no longer listed, granted or sold); items players hold of it stay theirs.
 */
const ItemType = manifestKind('ItemType', ItemTypeSpec, {
  crd: {
    plural: 'itemtypes',
    shortNames: ['itemtype'],
    columns: [ENVIRONMENT_COLUMN, specColumn('Category', 'string', 'category'), specColumn('Ownership', 'string', 'ownership'), ENABLED_COLUMN],
  },
  reconciler: contentReconciler({
    sync: (trx, place, doc, bus) => syncItemType(trx, bus, { ...place, definition: itemTypeDefinitionOf(doc) }),
    release: (db, owner, bus) => releaseItemType(db, bus, owner),
    rows: { table: 'item_types' },
  }),
});

export const itemKinds = { ItemType };
