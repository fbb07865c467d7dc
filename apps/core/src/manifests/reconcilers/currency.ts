import { inTransaction } from '../../db/transaction';
import { currencyRow, releaseCurrency, syncCurrency } from '../../economy/definitions';
import type { CurrencyManifestT } from '../schemas';
import { type Reconciler, environmentNamed, namespaceOf, ownedRowIdentity, refusalsNamed } from './shared';

/** A Currency stands for one currency of its environment, keyed by `spec.key` (or metadata.name). Deleted, it is no longer listed or moved; balances and the ledger stay. */
export const currencyReconciler: Reconciler<CurrencyManifestT> = {
  reconcile: (db, doc, { label }) =>
    inTransaction(db, async (trx) => {
      const namespace = namespaceOf(doc);
      const env = await environmentNamed(trx, namespace, doc.spec.environment, label);
      const owner = `${namespace}/${doc.metadata.name}`;
      return { action: await refusalsNamed(label, () => syncCurrency(trx, { environmentId: env.id, owner, row: currencyRow(doc) })) };
    }),

  identity: (db, doc) => ownedRowIdentity(db, 'currencies', doc),

  remove: async (db, manifest) => ((await releaseCurrency(db, `${manifest.namespace}/${manifest.name}`)) ? 'removed' : 'absent'),
};
