import { CARD_TEMPLATES, CARD_TYPES, cardTemplateRow, cardTypeRow, releaseCardDefinition, syncCardDefinition } from '../../cards/definitions';
import type { CardTemplateManifestT, CardTypeManifestT } from '../schemas';
import { contentReconciler } from './shared';

/**
 * A CardType is one card type of its environment, keyed by `spec.slug` (or metadata.name). Deleted,
 * the definition goes (no longer listed, granted or sold); cards players hold of it stay theirs.
 */
export const cardTypeReconciler = contentReconciler<CardTypeManifestT>({
  sync: (trx, place, doc, bus) => syncCardDefinition(trx, bus, CARD_TYPES, { ...place, row: cardTypeRow(doc) }),
  release: (db, owner, bus) => releaseCardDefinition(db, bus, CARD_TYPES, owner),
  rows: { table: 'card_types', keyField: 'slug' },
});

/** A CardTemplate is one card template of its environment, keyed by `spec.key` (or metadata.name); cards made with it keep its key. */
export const cardTemplateReconciler = contentReconciler<CardTemplateManifestT>({
  sync: (trx, place, doc, bus) => syncCardDefinition(trx, bus, CARD_TEMPLATES, { ...place, row: cardTemplateRow(doc) }),
  release: (db, owner, bus) => releaseCardDefinition(db, bus, CARD_TEMPLATES, owner),
  rows: { table: 'card_templates' },
});
