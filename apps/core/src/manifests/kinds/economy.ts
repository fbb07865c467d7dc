/** The economy area's kinds: realms, and the currencies players hold in them. */
import { CurrencySpec, RealmSpec } from '../../contract/resources';
import { currencyRow, realmRow, releaseCurrency, releaseRealm, syncCurrency, syncRealm } from '../../economy/definitions';
import { ENABLED_COLUMN, ENVIRONMENT_COLUMN, manifestKind, specColumn } from '../kind';
import { contentReconciler } from '../reconciler';

/** A Realm stands for one realm of its environment, keyed by `spec.key` (or metadata.name). Deleted, it is no longer listed; inventories of it stay. */
const Realm = manifestKind('Realm', RealmSpec, {
  crd: {
    plural: 'realms',
    shortNames: ['hrealm'],
    // The times as written: a `date` column shows a future time as <invalid> (it prints an age).
    columns: [
      ENVIRONMENT_COLUMN,
      specColumn('Number', 'integer', 'number'),
      ENABLED_COLUMN,
      specColumn('Start', 'string', 'startAt'),
      specColumn('End', 'string', 'endAt', 1),
    ],
  },
  reconciler: contentReconciler({
    sync: (trx, place, doc) => syncRealm(trx, { ...place, row: realmRow(doc) }),
    release: (db, owner) => releaseRealm(db, owner),
    rows: { table: 'realms' },
  }),
});

/** A Currency stands for one currency of its environment, keyed by `spec.key` (or metadata.name). Deleted, it is no longer listed or moved; balances and the ledger stay. */
const Currency = manifestKind('Currency', CurrencySpec, {
  crd: {
    plural: 'currencies',
    shortNames: ['hcur'],
    columns: [ENVIRONMENT_COLUMN, specColumn('Kind', 'string', 'kind'), specColumn('Scope', 'string', 'scope'), ENABLED_COLUMN],
  },
  reconciler: contentReconciler({
    sync: (trx, place, doc) => syncCurrency(trx, { ...place, row: currencyRow(doc) }),
    release: (db, owner) => releaseCurrency(db, owner),
    rows: { table: 'currencies' },
  }),
});

export const economyKinds = { Realm, Currency };
