import { inTransaction } from '../../db/transaction';
import { legalDocumentContent, releaseLegalDocument, syncLegalDocument } from '../../legal/legal';
import type { LegalDocumentManifestT } from '../schemas';
import { type Reconciler, environmentNamed, namespaceOf, ownedRowIdentity, refusalsNamed } from './shared';

/**
 * A LegalDocument stands for one document of its environment, keyed by `spec.document` (or
 * metadata.name). A new `version` makes players' earlier acceptances not current. Deleted, the
 * document goes (players' acceptances stay, so putting it back finds them).
 */
export const legalDocumentReconciler: Reconciler<LegalDocumentManifestT> = {
  reconcile: (db, doc, { bus, label }) =>
    inTransaction(db, async (trx) => {
      const namespace = namespaceOf(doc);
      const env = await environmentNamed(trx, namespace, doc.spec.environment, label);
      const owner = `${namespace}/${doc.metadata.name}`;
      return { action: await refusalsNamed(label, () => syncLegalDocument(trx, bus, { environmentId: env.id, owner, content: legalDocumentContent(doc) })) };
    }),

  identity: (db, doc) => ownedRowIdentity(db, 'legal_documents', doc, 'document'),

  remove: async (db, manifest, { bus }) => ((await releaseLegalDocument(db, bus, `${manifest.namespace}/${manifest.name}`)) ? 'removed' : 'absent'),
};
