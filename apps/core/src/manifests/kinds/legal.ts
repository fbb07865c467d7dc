/** The legal area's kind: a document players may have to accept. */
import { LegalDocumentSpec } from '../../contract/resources';
import { legalDocumentContent, releaseLegalDocument, syncLegalDocument } from '../../legal/legal';
import { ENVIRONMENT_COLUMN, manifestKind, specColumn } from '../kind';
import { contentReconciler } from '../reconciler';

/**
 * A LegalDocument stands for one document of its environment, keyed by `spec.document` (or
 * metadata.name). A new `version` makes players' earlier acceptances not current. Deleted, the
 * document goes (players' acceptances stay, so putting it back finds them).
 */
const LegalDocument = manifestKind('LegalDocument', LegalDocumentSpec, {
  crd: {
    plural: 'legaldocuments',
    shortNames: ['legaldoc'],
    columns: [ENVIRONMENT_COLUMN, specColumn('Version', 'string', 'version'), specColumn('Required', 'boolean', 'required')],
  },
  reconciler: contentReconciler({
    sync: (trx, place, doc, bus) => syncLegalDocument(trx, bus, { ...place, content: legalDocumentContent(doc) }),
    release: (db, owner, bus) => releaseLegalDocument(db, bus, owner),
    rows: { table: 'legal_documents', keyField: 'document' },
  }),
});

export const legalKinds = { LegalDocument };
