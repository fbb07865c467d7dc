import { inTransaction } from '../../db/transaction';
import { CARD_TEMPLATES, CARD_TYPES, cardTemplateRow, cardTypeRow, releaseCardDefinition, syncCardDefinition } from '../../cards/definitions';
import type { CardTemplateManifestT, CardTypeManifestT } from '../schemas';
import { type Reconciler, environmentNamed, namespaceOf, ownedRowIdentity, refusalsNamed } from './shared';

/**
 * A CardType is one card type of its environment, keyed by `spec.slug` (or metadata.name). Deleted,
 * the definition goes (no longer listed, granted or sold); cards players hold of it stay theirs.
 */
export const cardTypeReconciler: Reconciler<CardTypeManifestT> = {
  reconcile: (db, doc, { bus, label }) =>
    inTransaction(db, async (trx) => {
      const namespace = namespaceOf(doc);
      const env = await environmentNamed(trx, namespace, doc.spec.environment, label);
      const owner = `${namespace}/${doc.metadata.name}`;
      return { action: await refusalsNamed(label, () => syncCardDefinition(trx, bus, CARD_TYPES, { environmentId: env.id, owner, row: cardTypeRow(doc) })) };
    }),

  identity: (db, doc) => ownedRowIdentity(db, 'card_types', doc, 'slug'),

  remove: async (db, ref, { bus }) => ((await releaseCardDefinition(db, bus, CARD_TYPES, `${ref.namespace}/${ref.name}`)) ? 'removed' : 'absent'),
};

/** A CardTemplate is one card template of its environment, keyed by `spec.key` (or metadata.name); cards made with it keep its key. */
export const cardTemplateReconciler: Reconciler<CardTemplateManifestT> = {
  reconcile: (db, doc, { bus, label }) =>
    inTransaction(db, async (trx) => {
      const namespace = namespaceOf(doc);
      const env = await environmentNamed(trx, namespace, doc.spec.environment, label);
      const owner = `${namespace}/${doc.metadata.name}`;
      return { action: await refusalsNamed(label, () => syncCardDefinition(trx, bus, CARD_TEMPLATES, { environmentId: env.id, owner, row: cardTemplateRow(doc) })) };
    }),

  identity: (db, doc) => ownedRowIdentity(db, 'card_templates', doc),

  remove: async (db, ref, { bus }) => ((await releaseCardDefinition(db, bus, CARD_TEMPLATES, `${ref.namespace}/${ref.name}`)) ? 'removed' : 'absent'),
};
