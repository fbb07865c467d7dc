import type { ErrorObject } from 'ajv';
import type { Tx } from '../db/knex';
import { ApiError } from '../errors';
import { compile, describe, fieldOf } from '../validation';
import { canonicalJson } from '../canonical-json';
import { bumpContentVersion } from '../content/game-config';
import { mintServerKey } from '../auth/server-keys';
import {
  AnyManifest,
  GameConfig,
  GameEnvironment,
  MANIFEST_KINDS,
  ManifestKind,
  Plan,
  PlanLimits,
  Project,
  ServerKey,
} from './schemas';

/** Where a manifest came from, for messages: `file.yaml#2 (Project starfall/starfall)`. */
export interface ManifestSource {
  origin?: string;
}

export class ManifestError extends Error {
  constructor(readonly document: string, readonly field: string, readonly reason: string) {
    super(`${document}: ${field} ${reason}`);
    this.name = 'ManifestError';
  }
}

export type ReconcileAction = 'created' | 'updated' | 'unchanged';
export interface ReconcileResult {
  kind: ManifestKind;
  namespace: string | null;
  name: string;
  action: ReconcileAction;
  /** Only when a ServerKey was minted: the whole key, shown this once. */
  serverKey?: { keyId: string; key: string };
}

export const DEFAULT_NAMESPACE = 'default';

export function describeDocument(doc: unknown, origin?: string): string {
  const d = doc as { kind?: unknown; metadata?: { name?: unknown; namespace?: unknown } } | null;
  const kind = typeof d?.kind === 'string' ? d.kind : 'document';
  const name = typeof d?.metadata?.name === 'string' ? d.metadata.name : '(unnamed)';
  const ns = typeof d?.metadata?.namespace === 'string' ? `${d.metadata.namespace}/` : '';
  return `${origin ? `${origin} ` : ''}${kind} ${ns}${name}`;
}

/** Checks a document against its kind's schema; the message names the document, the field and the reason. */
export function validateManifest(doc: unknown, origin?: string): AnyManifest {
  const label = describeDocument(doc, origin);
  const kind = (doc as { kind?: unknown } | null)?.kind;
  if (typeof kind !== 'string' || !(kind in MANIFEST_KINDS)) {
    throw new ManifestError(label, 'kind', `must be one of ${Object.keys(MANIFEST_KINDS).join(', ')}`);
  }
  const validate = compile(MANIFEST_KINDS[kind as ManifestKind].schema);
  if (!validate(doc)) {
    const { field, reason } = reasonOf(validate.errors!);
    throw new ManifestError(label, field, reason);
  }
  return doc as AnyManifest;
}

/** The first failure, with a union's choices spelled out (ajv alone says "must be equal to constant"). */
function reasonOf(errors: ErrorObject[]): { field: string; reason: string } {
  const first = errors[0];
  const field = fieldOf(first, '');
  if (errors.some((e) => e.keyword === 'anyOf' && e.instancePath === first.instancePath)) {
    const choices = errors
      .filter((e) => e.instancePath === first.instancePath && (e.keyword === 'const' || e.keyword === 'type'))
      .map((e) => (e.keyword === 'const' ? JSON.stringify(e.params.allowedValue) : String(e.params.type)));
    if (choices.length > 0) return { field, reason: `must be one of ${[...new Set(choices)].join(', ')}` };
  }
  if (first.keyword === 'const') return { field, reason: `must be ${JSON.stringify(first.params.allowedValue)}` };
  return { field, reason: describe(first) };
}

function namespaceOf(doc: { metadata: { namespace?: string } }): string {
  return doc.metadata.namespace ?? DEFAULT_NAMESPACE;
}

/** Equal as JSON whatever the key order: jsonb hands objects back with its own key order. */
function same(a: unknown, b: unknown): boolean {
  return canonicalJson(a) === canonicalJson(b);
}

export async function reconcilePlan(trx: Tx, doc: Plan): Promise<ReconcileResult> {
  const base = { kind: 'Plan' as const, namespace: null, name: doc.metadata.name };
  const existing = await trx('plans').where({ name: doc.metadata.name }).first();
  if (existing && same(existing.spec, doc.spec)) return { ...base, action: 'unchanged' };
  await trx('plans').insert({ name: doc.metadata.name, spec: doc.spec, updated_at: trx.fn.now() }).onConflict('name').merge();
  return { ...base, action: existing ? 'updated' : 'created' };
}

export async function reconcileProject(trx: Tx, doc: Project, label: string): Promise<ReconcileResult> {
  const namespace = namespaceOf(doc);
  const base = { kind: 'Project' as const, namespace, name: doc.metadata.name };
  const plan = await trx('plans').where({ name: doc.spec.plan }).first();
  if (!plan) throw new ManifestError(label, 'spec.plan', `names plan "${doc.spec.plan}", which does not exist`);
  const limits = plan.spec as PlanLimits;
  if (doc.spec.sessionSeats > limits.sessionSeats) {
    throw new ManifestError(label, 'spec.sessionSeats', `is ${doc.spec.sessionSeats}, more than plan "${doc.spec.plan}" allows (${limits.sessionSeats})`);
  }
  const existing = await trx('projects').where({ namespace, name: doc.metadata.name }).first();
  if (existing && existing.plan_name === doc.spec.plan && same(existing.spec, doc.spec)) return { ...base, action: 'unchanged' };
  await trx('projects')
    .insert({ namespace, name: doc.metadata.name, plan_name: doc.spec.plan, spec: doc.spec, updated_at: trx.fn.now() })
    .onConflict(['namespace', 'name'])
    .merge();
  return { ...base, action: existing ? 'updated' : 'created' };
}

export async function reconcileGameEnvironment(trx: Tx, doc: GameEnvironment, label: string): Promise<ReconcileResult> {
  const namespace = namespaceOf(doc);
  const base = { kind: 'GameEnvironment' as const, namespace, name: doc.metadata.name };
  const project = await trx('projects').where({ namespace, name: doc.spec.project }).first();
  if (!project) throw new ManifestError(label, 'spec.project', `names project "${doc.spec.project}", which does not exist in namespace "${namespace}"`);
  // whereNot({ a, b }) would negate each column alone; this is "not this very environment".
  const taken = await trx('environments')
    .where({ app_key: doc.spec.appKey })
    .whereNot((q) => q.where({ namespace, name: doc.metadata.name }))
    .first();
  if (taken) throw new ManifestError(label, 'spec.appKey', `"${doc.spec.appKey}" is already the app key of GameEnvironment ${taken.namespace}/${taken.name}`);
  const existing = await trx('environments').where({ namespace, name: doc.metadata.name }).first();
  if (existing && Number(existing.project_id) === Number(project.id) && existing.app_key === doc.spec.appKey) {
    return { ...base, action: 'unchanged' };
  }
  await trx('environments')
    .insert({ namespace, name: doc.metadata.name, project_id: project.id, app_key: doc.spec.appKey, updated_at: trx.fn.now() })
    .onConflict(['namespace', 'name'])
    .merge(['project_id', 'app_key', 'updated_at']);
  return { ...base, action: existing ? 'updated' : 'created' };
}

async function environmentFor(trx: Tx, namespace: string, name: string, label: string) {
  const env = await trx('environments as e')
    .join('projects as p', 'p.id', 'e.project_id')
    .join('plans as pl', 'pl.name', 'p.plan_name')
    .where({ 'e.namespace': namespace, 'e.name': name })
    .first('e.id', 'pl.spec as plan_spec');
  if (!env) throw new ManifestError(label, 'spec.environment', `names environment "${name}", which does not exist in namespace "${namespace}"`);
  return { id: Number(env.id), plan: env.plan_spec as PlanLimits };
}

/** A ServerKey document stands for one live key; applying it again leaves that key alone. */
export async function reconcileServerKey(trx: Tx, doc: ServerKey, label: string): Promise<ReconcileResult> {
  const namespace = namespaceOf(doc);
  const base = { kind: 'ServerKey' as const, namespace, name: doc.metadata.name };
  const env = await environmentFor(trx, namespace, doc.spec.environment, label);
  const live = await trx('server_keys').where({ manifest_namespace: namespace, manifest_name: doc.metadata.name }).whereNull('revoked_at').first();
  if (live && Number(live.environment_id) === env.id) return { ...base, action: 'unchanged' };
  if (live) await trx('server_keys').where({ key_id: live.key_id }).update({ revoked_at: trx.fn.now() });
  try {
    const minted = await mintServerKey(trx, env.id, doc.metadata.name, env.plan.serverKeysPerEnvironment, { namespace, name: doc.metadata.name });
    return { ...base, action: live ? 'updated' : 'created', serverKey: { keyId: minted.keyId, key: minted.key } };
  } catch (err) {
    if (err instanceof ApiError) throw new ManifestError(label, 'spec.environment', err.message);
    throw err;
  }
}

/**
 * GameConfig owns the values, tables and flags it lists in its environment: applying it makes the
 * environment's rows owned by this document exactly those, and bumps the content version (so ETags
 * change) only when something changed.
 */
export async function reconcileGameConfig(trx: Tx, doc: GameConfig, label: string): Promise<ReconcileResult> {
  const namespace = namespaceOf(doc);
  const base = { kind: 'GameConfig' as const, namespace, name: doc.metadata.name };
  const env = await environmentFor(trx, namespace, doc.spec.environment, label);
  const owner = `${namespace}/${doc.metadata.name}`;

  const values = (doc.spec.values ?? []).map((v, i) => {
    checkCell(v.type, v.value, label, `spec.values.${i}.value`);
    return { key: v.key, owner, group_name: v.groupName ?? null, type: v.type, value: v.value };
  });
  const tables = (doc.spec.tables ?? []).map((t, i) => {
    const columns = new Map(t.columns.map((c) => [c.key, c.type]));
    t.rows.forEach((r, j) =>
      Object.entries(r.cells).forEach(([col, cell]) => {
        const type = columns.get(col);
        if (!type) throw new ManifestError(label, `spec.tables.${i}.rows.${j}.cells.${col}`, `is not a column of table "${t.key}"`);
        checkCell(type, cell, label, `spec.tables.${i}.rows.${j}.cells.${col}`);
      }),
    );
    return {
      key: t.key,
      owner,
      name: t.name,
      description: t.description ?? null,
      group_name: t.groupName ?? null,
      columns: t.columns,
      rows: t.rows.map((r, j) => ({ key: r.key, sortOrder: j, cells: r.cells })),
    };
  });
  const flags = (doc.spec.flags ?? []).map((f) => ({ name: f.name, owner, enabled: f.enabled }));
  checkUnique(values.map((v) => v.key), label, 'spec.values', 'key');
  checkUnique(tables.map((t) => t.key), label, 'spec.tables', 'key');
  checkUnique(flags.map((f) => f.name), label, 'spec.flags', 'name');

  const synced = [
    await syncOwned(trx, { name: 'config_values', keyColumn: 'key', jsonColumns: ['value'], field: 'spec.values' }, env.id, owner, values, label),
    await syncOwned(trx, { name: 'config_tables', keyColumn: 'key', jsonColumns: ['columns', 'rows'], field: 'spec.tables' }, env.id, owner, tables, label),
    await syncOwned(trx, { name: 'flags', keyColumn: 'name', jsonColumns: [], field: 'spec.flags' }, env.id, owner, flags, label),
  ];
  const released = await releaseOtherEnvironments(trx, env.id, owner);
  if (!synced.some((s) => s.changed) && !released) return { ...base, action: 'unchanged' };
  await bumpContentVersion(trx, env.id);
  // The document exists only through the rows it owns: none before means it was just created.
  return { ...base, action: released || synced.some((s) => s.ownedBefore) ? 'updated' : 'created' };
}

function checkCell(type: string, value: unknown, label: string, field: string): void {
  if (value === null) return;
  const ok =
    (type === 'string' && typeof value === 'string') ||
    (type === 'int' && Number.isInteger(value)) ||
    (type === 'float' && typeof value === 'number') ||
    (type === 'bool' && typeof value === 'boolean');
  if (!ok) throw new ManifestError(label, field, `must be of type ${type}`);
}

function checkUnique(keys: string[], label: string, list: string, keyField: string): void {
  const seen = new Set<string>();
  keys.forEach((k, i) => {
    if (seen.has(k)) throw new ManifestError(label, `${list}.${i}.${keyField}`, `"${k}" is listed twice`);
    seen.add(k);
  });
}

/** A GameConfig moved to another environment takes its rows out of the one it left. */
async function releaseOtherEnvironments(trx: Tx, envId: number, owner: string): Promise<boolean> {
  const left = new Set<number>();
  for (const table of ['config_values', 'config_tables', 'flags']) {
    const rows: { environment_id: string }[] = await trx(table).where({ owner }).whereNot({ environment_id: envId }).delete().returning('environment_id');
    rows.forEach((r) => left.add(Number(r.environment_id)));
  }
  for (const id of left) await bumpContentVersion(trx, id);
  return left.size > 0;
}

/** Makes this owner's rows in one table exactly `rows`; answers whether anything changed and whether it owned any before. */
async function syncOwned(
  trx: Tx,
  table: { name: string; keyColumn: string; jsonColumns: string[]; field: string },
  envId: number,
  owner: string,
  rows: Record<string, unknown>[],
  label: string,
): Promise<{ changed: boolean; ownedBefore: boolean }> {
  const { name, keyColumn, jsonColumns, field } = table;
  const current: Record<string, unknown>[] = await trx(name).where({ environment_id: envId });
  const byKey = new Map(current.map((r) => [r[keyColumn] as string, r]));
  const fields = rows.length > 0 ? Object.keys(rows[0]) : [];
  let changed = false;
  for (const [i, row] of rows.entries()) {
    const existing = byKey.get(row[keyColumn] as string);
    if (existing && existing.owner !== owner) {
      throw new ManifestError(label, `${field}.${i}.${keyColumn}`, `"${row[keyColumn]}" already belongs to GameConfig ${existing.owner}`);
    }
    if (existing && fields.every((f) => same(existing[f] ?? null, row[f] ?? null))) continue;
    const stored: Record<string, unknown> = { ...row, environment_id: envId };
    for (const c of jsonColumns) stored[c] = JSON.stringify(row[c]);
    await trx(name).insert(stored).onConflict(['environment_id', keyColumn]).merge();
    changed = true;
  }
  const wanted = new Set(rows.map((r) => r[keyColumn] as string));
  const stale = current.filter((r) => r.owner === owner && !wanted.has(r[keyColumn] as string)).map((r) => r[keyColumn] as string);
  if (stale.length > 0) {
    await trx(name).where({ environment_id: envId }).whereIn(keyColumn, stale).delete();
    changed = true;
  }
  return { changed, ownedBefore: current.some((r) => r.owner === owner) };
}

/** One reconcile function per kind (the operator's controllers call the same ones). */
const RECONCILERS: Record<ManifestKind, (trx: Tx, doc: never, label: string) => Promise<ReconcileResult>> = {
  Plan: reconcilePlan,
  Project: reconcileProject,
  GameEnvironment: reconcileGameEnvironment,
  ServerKey: reconcileServerKey,
  GameConfig: reconcileGameConfig,
};

/** Applies documents in dependency order inside the caller's transaction. */
export async function reconcileAll(trx: Tx, docs: { doc: AnyManifest; origin?: string }[]): Promise<ReconcileResult[]> {
  const order: ManifestKind[] = Object.keys(MANIFEST_KINDS) as ManifestKind[];
  const sorted = [...docs].sort((a, b) => order.indexOf(a.doc.kind as ManifestKind) - order.indexOf(b.doc.kind as ManifestKind));
  const results: ReconcileResult[] = [];
  for (const { doc, origin } of sorted) {
    const label = describeDocument(doc, origin);
    // validateManifest checked each document against its own kind's schema, so it fits its reconciler.
    results.push(await RECONCILERS[doc.kind as ManifestKind](trx, doc as never, label));
  }
  return results;
}

