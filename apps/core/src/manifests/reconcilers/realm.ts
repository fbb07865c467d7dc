import { realmRow, releaseRealm, syncRealm } from '../../economy/definitions';
import type { RealmManifestT } from '../schemas';
import { contentReconciler } from './shared';

/** A Realm stands for one realm of its environment, keyed by `spec.key` (or metadata.name). Deleted, it is no longer listed; inventories of it stay. */
export const realmReconciler = contentReconciler<RealmManifestT>({
  sync: (trx, place, doc) => syncRealm(trx, { ...place, row: realmRow(doc) }),
  release: (db, owner) => releaseRealm(db, owner),
  rows: { table: 'realms' },
});
