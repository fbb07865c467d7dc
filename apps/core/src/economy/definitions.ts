/**
 * Realm and Currency definitions (spec §2 Realm, currency definition fields; §4 Realms, Definitions):
 * content written by their manifests through syncRealm / syncCurrency (called by the reconcilers),
 * one row per document (content/owned-row.ts). Nothing is cached from them (each read is one indexed
 * query), so nothing is announced. docs/economy.md says what "open" and "current" mean.
 */
import type { Queryable, Tx } from '../db/knex';
import { inTransaction } from '../db/transaction';
import { refuse } from '../errors';
import type { CurrencySpecT, RealmSpecT, Resource } from '../contract/resources';
import { type OwnedRowTable, lockContentWriter, releaseOwnedRow, syncOwnedRow } from '../content/owned-row';
import { type CursorCodec, type Page, environmentRowsPage, keysetPage } from '../pagination';
import type { EnvironmentContext } from '../tenancy/environments';

// Realm and CurrencyDefinition (spec §2) are the answer shapes' types (shapes/economy.ts).
import type { CurrencyDefinition, Realm } from '../shapes';
export type { CurrencyDefinition, Realm } from '../shapes';
import type { PageRequest } from '../shapes/common';

const REALMS: OwnedRowTable = { name: 'realms', keyColumn: 'key', keyField: 'key', kind: 'Realm' };
const CURRENCIES: OwnedRowTable = { name: 'currencies', keyColumn: 'key', keyField: 'key', kind: 'Currency' };

/** The SQL of "open now": switched on, started, not yet ended (docs/economy.md). */
/** Open (docs/economy.md "Realms"): the database function holds the rule, for this and hearth_currency_move. */
export const REALM_OPEN_SQL = 'hearth_realm_open(enabled, start_at, end_at)';

export function realmRow(doc: Resource<RealmSpecT>): Record<string, unknown> {
  const { spec } = doc;
  return {
    key: spec.key ?? doc.metadata.name,
    number: spec.number,
    name: spec.name,
    enabled: spec.enabled,
    visible: spec.visible,
    // Dates as Date objects: the unchanged-check compares them with what PostgreSQL gives back.
    start_at: new Date(spec.startAt),
    end_at: spec.endAt === undefined ? null : new Date(spec.endAt),
  };
}

export function currencyRow(doc: Resource<CurrencySpecT>): Record<string, unknown> {
  const { spec } = doc;
  return {
    key: spec.key ?? doc.metadata.name,
    name: spec.name,
    description: spec.description ?? null,
    icon: spec.icon ?? null,
    scope: spec.scope,
    kind: spec.kind,
    max: spec.max === undefined ? null : String(spec.max),
    enabled: spec.enabled,
  };
}

/** Makes the owner's realm exactly `row`; a number or key another realm of the environment holds is refused. */
export async function syncRealm(
  db: Queryable,
  target: { environmentId: number; owner: string; row: Record<string, unknown> },
): Promise<'created' | 'updated' | 'unchanged'> {
  const { environmentId, owner, row } = target;
  return inTransaction(db, async (trx) => {
    const endAt = row.end_at as Date | null;
    if (endAt !== null && endAt <= (row.start_at as Date)) throw refuse.invalid('endAt', 'must be after startAt');
    // The content writer's lock, before syncOwnedRow takes it again: two documents claiming one number cannot both see it free.
    await lockContentWriter(trx, environmentId);
    const holder = await trx('realms').where({ environment_id: environmentId, number: row.number }).whereNot({ owner }).first('owner');
    if (holder) throw refuse.conflict(`realm number ${row.number} already belongs to Realm ${holder.owner}`, { field: 'number' });
    return (await syncOwnedRow(trx, REALMS, { environment_id: environmentId, owner, ...row })).action;
  });
}

/** Removes the owner's realm (its manifest was deleted); players' inventories of it stay, with what they hold. */
export async function releaseRealm(db: Queryable, owner: string): Promise<boolean> {
  return inTransaction(db, async (trx) => (await releaseOwnedRow(trx, REALMS, owner)) !== null);
}

export async function syncCurrency(
  db: Queryable,
  target: { environmentId: number; owner: string; row: Record<string, unknown> },
): Promise<'created' | 'updated' | 'unchanged'> {
  const { environmentId, owner, row } = target;
  return inTransaction(db, async (trx) => (await syncOwnedRow(trx, CURRENCIES, { environment_id: environmentId, owner, ...row })).action);
}

/** Removes the owner's currency; balances and ledger entries in it stay (listed, no longer moved). */
export async function releaseCurrency(db: Queryable, owner: string): Promise<boolean> {
  return inTransaction(db, async (trx) => (await releaseOwnedRow(trx, CURRENCIES, owner)) !== null);
}

function toRealm(row: Record<string, unknown>): Realm {
  const endAt = row.end_at as Date | null;
  return {
    id: row.key as string,
    number: row.number as number,
    key: row.key as string,
    name: row.name as string,
    enabled: row.enabled as boolean,
    visible: row.visible as boolean,
    startAt: (row.start_at as Date).toISOString(),
    endAt: endAt ? endAt.toISOString() : null,
  };
}

export function toCurrency(row: Record<string, unknown>): CurrencyDefinition {
  return {
    key: row.key as string,
    name: row.name as string,
    description: (row.description as string | null) ?? null,
    icon: (row.icon as string | null) ?? null,
    scope: row.scope as CurrencyDefinition['scope'],
    kind: row.kind as CurrencyDefinition['kind'],
    max: row.max === null ? null : Number(row.max),
    enabled: row.enabled as boolean,
  };
}

export class RealmService {
  constructor(private readonly cursors: CursorCodec) {}

  /**
   * GET /realms: the open realms, newest first (latest start, then highest number). Position: the
   * start as PostgreSQL's own text (exact to the microsecond, which a JS Date is not) and the number.
   */
  async listOpen(db: Queryable, env: EnvironmentContext, q: PageRequest): Promise<Page<Realm>> {
    return keysetPage(
      this.cursors,
      `realms-open|${env.id}`,
      q,
      (after: [string, number] | undefined, take) => {
        const query = db('realms')
          .where({ environment_id: env.id })
          .whereRaw(REALM_OPEN_SQL)
          .orderBy([
            { column: 'start_at', order: 'desc' },
            { column: 'number', order: 'desc' },
          ])
          .limit(take)
          .select('*', db.raw('start_at::text AS start_text'));
        if (after !== undefined) query.whereRaw('(start_at, number) < (?::timestamptz, ?)', after);
        return query;
      },
      (row: Record<string, unknown>): [string, number] => [row.start_text as string, row.number as number],
      toRealm,
    );
  }

  /** GET /realms/current: the newest open realm, or null while none is open. */
  async current(db: Queryable, envId: number): Promise<Realm | null> {
    // hearth_current_realm is the rule (newest open), shared with hearth_currency_move.
    const row = await db('realms').where({ environment_id: envId }).whereRaw('key = hearth_current_realm(?)', [envId]).first();
    return row ? toRealm(row) : null;
  }

  /** A realm of the environment by id (key), open or not; null when none. */
  async get(db: Queryable, envId: number, realmId: string): Promise<Realm | null> {
    const row = await db('realms').where({ environment_id: envId, key: realmId }).first();
    return row ? toRealm(row) : null;
  }

  /** GET /definitions/realms: every realm, open or not, by number. */
  async definitions(db: Queryable, env: EnvironmentContext, q: PageRequest): Promise<Page<Realm>> {
    return environmentRowsPage(this.cursors, db, env.id, q, { listId: `realm-definitions|${env.id}`, table: 'realms', by: 'number' }, toRealm);
  }

  /** GET /definitions/currencies: every currency, switched on or not, by key. */
  async currencyDefinitions(db: Queryable, env: EnvironmentContext, q: PageRequest): Promise<Page<CurrencyDefinition>> {
    return environmentRowsPage(this.cursors, db, env.id, q, { listId: `currency-definitions|${env.id}`, table: 'currencies', by: 'key' }, toCurrency);
  }
}

/** One currency of the environment, or null. */
export async function currencyNamed(db: Queryable | Tx, envId: number, key: string): Promise<CurrencyDefinition | null> {
  const row = await db('currencies').where({ environment_id: envId, key }).first();
  return row ? toCurrency(row) : null;
}
