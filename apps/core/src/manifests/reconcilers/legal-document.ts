import { legalDocumentContent, releaseLegalDocument, syncLegalDocument } from '../../legal/legal';
import type { LegalDocumentManifestT } from '../schemas';
import { contentReconciler } from './shared';

/**
 * A LegalDocument stands for one document of its environment, keyed by `spec.document` (or
 * metadata.name). A new `version` makes players' earlier acceptances not current. Deleted, the
 * document goes (players' acceptances stay, so putting it back finds them).
 */
export const legalDocumentReconciler = contentReconciler<LegalDocumentManifestT>({
  sync: (trx, place, doc, bus) => syncLegalDocument(trx, bus, { ...place, content: legalDocumentContent(doc) }),
  release: (db, owner, bus) => releaseLegalDocument(db, bus, owner),
  rows: { table: 'legal_documents', keyField: 'document' },
});
