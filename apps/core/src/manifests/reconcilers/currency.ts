import { currencyRow, releaseCurrency, syncCurrency } from '../../economy/definitions';
import type { CurrencyManifestT } from '../schemas';
import { contentReconciler } from './shared';

/** A Currency stands for one currency of its environment, keyed by `spec.key` (or metadata.name). Deleted, it is no longer listed or moved; balances and the ledger stay. */
export const currencyReconciler = contentReconciler<CurrencyManifestT>({
  sync: (trx, place, doc) => syncCurrency(trx, { ...place, row: currencyRow(doc) }),
  release: (db, owner) => releaseCurrency(db, owner),
  rows: { table: 'currencies' },
});
