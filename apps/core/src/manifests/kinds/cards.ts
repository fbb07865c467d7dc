/** The cards area's kinds: card types and card templates. */
import { CardTemplateSpec, CardTypeSpec } from '../../contract/card-type';
import { CARD_TEMPLATES, CARD_TYPES, cardTemplateRow, cardTypeRow, releaseCardDefinition, syncCardDefinition } from '../../cards/definitions';
import { ENABLED_COLUMN, ENVIRONMENT_COLUMN, manifestKind, specColumn } from '../kind';
import { contentReconciler } from '../reconciler';

/**
 * A CardType is one card type of its environment, keyed by `spec.slug` (or metadata.name). Deleted,
 * the definition goes (no longer listed, granted or sold); cards players hold of it stay theirs.
 */
const CardType = manifestKind('CardType', CardTypeSpec, {
  crd: {
    plural: 'cardtypes',
    shortNames: ['cardtype'],
    columns: [ENVIRONMENT_COLUMN, specColumn('Slug', 'string', 'slug'), specColumn('Purchasable', 'boolean', 'purchasable'), ENABLED_COLUMN],
  },
  reconciler: contentReconciler({
    sync: (trx, place, doc, bus) => syncCardDefinition(trx, bus, CARD_TYPES, { ...place, row: cardTypeRow(doc) }),
    release: (db, owner, bus) => releaseCardDefinition(db, bus, CARD_TYPES, owner),
    rows: { table: 'card_types', keyField: 'slug' },
  }),
});

/** A CardTemplate is one card template of its environment, keyed by `spec.key` (or metadata.name); cards made with it keep its key. */
const CardTemplate = manifestKind('CardTemplate', CardTemplateSpec, {
  crd: { plural: 'cardtemplates', shortNames: ['cardtpl'], columns: [ENVIRONMENT_COLUMN, ENABLED_COLUMN] },
  reconciler: contentReconciler({
    sync: (trx, place, doc, bus) => syncCardDefinition(trx, bus, CARD_TEMPLATES, { ...place, row: cardTemplateRow(doc) }),
    release: (db, owner, bus) => releaseCardDefinition(db, bus, CARD_TEMPLATES, owner),
    rows: { table: 'card_templates' },
  }),
});

export const cardKinds = { CardType, CardTemplate };
