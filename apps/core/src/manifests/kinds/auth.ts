/** The auth area's kind: a game server's key. */
import { ServerKeySpec } from '../../contract/resources';
import { liveKeyOfManifest, mintServerKey, revokeServerKey } from '../../auth/server-keys';
import { inTransaction } from '../../db/transaction';
import { ENVIRONMENT_COLUMN, keyDocument, manifestKind } from '../kind';
import { environmentNamed, keyOwnerIdentity, refOf, refusalsNamed, revokeLiveKey } from '../reconciler';

/**
 * A ServerKey document stands for one live key. The first reconcile mints it (the whole key is in
 * the outcome, this once); later ones leave it alone. Its environment is an identity field: a document
 * naming another environment than its live key's is refused before this runs (reconcileManifest), so
 * no edit revokes a live key; a key is moved by making a new one and deleting this (docs/kubernetes.md).
 * Deleted, its key is revoked.
 */
const ServerKey = manifestKind('ServerKey', ServerKeySpec, {
  crd: { plural: 'serverkeys', shortNames: ['hkey'], ...keyDocument(ENVIRONMENT_COLUMN, 'hsk_') },
  reconciler: {
    reconcile: (db, doc, { label }) =>
      inTransaction(db, async (trx) => {
        const manifest = refOf(doc);
        const env = await environmentNamed(trx, manifest.namespace, doc.spec.environment, label);
        if (await liveKeyOfManifest(trx, manifest)) return { action: 'unchanged' };
        const minted = await refusalsNamed(
          label,
          () => mintServerKey(trx, env.id, doc.metadata.name, env.plan.serverKeysPerEnvironment, manifest),
          'spec.environment',
        );
        return { action: 'created', serverKey: { keyId: minted.keyId, key: minted.key } };
      }),

    /** The environment of the document's live key, by name (a retired one too). */
    identity: async (db, doc) => keyOwnerIdentity(db, 'environment', (await liveKeyOfManifest(db, refOf(doc)))?.environmentId, doc.spec.environment),

    remove: revokeLiveKey(liveKeyOfManifest, revokeServerKey),
  },
});

export const authKinds = { ServerKey };
