/** The licence area's kind: a project's licence key. */
import { LicenceKeySpec } from '../../contract/resources';
import { liveLicenceKeyOfManifest, mintLicenceKey, revokeLicenceKey, setLicenceKeyProducts } from '../../licence/keys';
import { organisationNamed } from '../../tenancy/organisations';
import { inTransaction } from '../../db/transaction';
import { PROJECT_COLUMN, keyDocument, manifestKind } from '../kind';
import { ManifestError } from '../manifest-error';
import { keyOwnerIdentity, refOf, refusalsNamed, revokeLiveKey } from '../reconciler';

const sameProducts = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((p) => b.includes(p));

/**
 * A LicenceKey document stands for one live licence key of its project, as a ServerKey does for an
 * environment's: the first reconcile mints it (the whole key in the outcome, this once) covering
 * `spec.products`; its products changed, the same key covers the new list (updated, nothing minted).
 * Its project is an identity field: a document naming another project than its live key's is refused
 * before this runs (reconcileManifest), so no edit revokes a live key. Deleted, revoked.
 */
const LicenceKey = manifestKind('LicenceKey', LicenceKeySpec, {
  crd: { plural: 'licencekeys', shortNames: ['hlicence'], ...keyDocument(PROJECT_COLUMN, 'hlk_') },
  reconciler: {
    reconcile: (db, doc, { label }) =>
      inTransaction(db, async (trx) => {
        const manifest = refOf(doc);
        const organisation = await organisationNamed(trx, manifest.namespace, doc.spec.project);
        if (!organisation)
          throw new ManifestError(
            label,
            'spec.project',
            `names project "${doc.spec.project}", which does not exist in namespace "${manifest.namespace}"`,
            'not-found',
          );
        const live = await liveLicenceKeyOfManifest(trx, manifest);
        if (live) {
          if (sameProducts(live.products, doc.spec.products)) return { action: 'unchanged' };
          await refusalsNamed(label, () => setLicenceKeyProducts(trx, live.keyId, doc.spec.products));
          return { action: 'updated' };
        }
        const minted = await refusalsNamed(label, () => mintLicenceKey(trx, organisation.id, doc.metadata.name, doc.spec.products, manifest));
        return { action: 'created', licenceKey: { keyId: minted.keyId, key: minted.key } };
      }),

    /** The project of the document's live key, by name. */
    identity: async (db, doc) => keyOwnerIdentity(db, 'project', (await liveLicenceKeyOfManifest(db, refOf(doc)))?.projectId, doc.spec.project),

    remove: revokeLiveKey(liveLicenceKeyOfManifest, revokeLicenceKey),
  },
});

export const licenceKinds = { LicenceKey };
