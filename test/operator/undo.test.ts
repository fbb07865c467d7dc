/**
 * What "undoable" means (docs/kubernetes.md "Every edit can be undone"): on a real kube-apiserver with
 * `hearth operator`, one object of every kind is applied; then, for every kind and every field of its
 * spec, the field is patched to another valid value and patched back. Either the API server refuses
 * the first patch (an identity field), or, once the operator has reconciled the second, the service is
 * as it was: the same keys live (their rows and their Secrets), the same rows in every table the
 * reconcilers write. A spec field this walk cannot vary fails the test, so a new field is walked too.
 */
import { MANIFEST_KINDS, type ManifestKind } from '@hearth/core/manifests';
import type { Harness } from '../support/harness';
import type { Kube } from '../support/kube';
import * as m from '../support/manifests';
import { oneOfEveryKind } from '../support/every-kind';
import { sampleOf } from '../support/schema-sample';
import { type OperatorWorld, startOperatorWorld } from './world';
import { getJson, kubectl, kubectlApply, readyOf, waitUntil } from './operator-process';

jest.setTimeout(600_000);

type Json = Record<string, any>;

let kube: Kube;
let h: Harness;
let world: OperatorWorld | undefined;

/** One object of every kind (each field it may carry set where the kind allows), and a second of each kind others name. */
function documents(): Json[] {
  return [
    ...oneOfEveryKind('undo', { licenceProducts: ['editor', 'editor-pro'] }),
    // The second of each kind others name, for a reference to be moved to.
    m.plan('undo-plan-2'),
    m.project('undo-2', { plan: 'undo-plan' }),
    m.environment('undo-test', 'undo'),
    m.blogCategory('undo-notes', { environment: 'undo-live', name: 'Notes' }),
  ];
}

/** The objects walked: the first of each kind in documents(). */
function walked(docs: Json[]): Json[] {
  const seen = new Set<string>();
  return docs.filter((d) => !seen.has(d.kind) && seen.add(d.kind));
}

/** Another valid value of a field, made from its schema and its value now; undefined when none can be made. */
function otherValue(schema: Json, now: unknown, others: Record<string, string[]>): unknown {
  const reference = schema['x-hearth-reference'] as string | undefined;
  if (reference) return (others[reference] ?? []).find((name) => name !== now) ?? `${String(now)}-other`;
  const union = (schema.anyOf ?? schema.oneOf) as Json[] | undefined;
  if (union && union.every((b) => 'const' in b)) return union.map((b) => b.const).find((v) => v !== now);
  if (schema.enum) return (schema.enum as unknown[]).find((v) => v !== now);
  if (union) return otherValue(union.find((b) => b.type !== 'null') ?? union[0], now, others);
  switch (schema.type) {
    case 'boolean':
      return !(now ?? schema.default ?? false);
    case 'integer':
    case 'number': {
      const base = typeof now === 'number' ? now : ((schema.default as number | undefined) ?? (schema.minimum as number | undefined) ?? 1);
      const up = base + 1;
      return schema.maximum === undefined || up <= schema.maximum ? up : base - 1;
    }
    case 'string': {
      if (schema.format === 'date-time' || (typeof now === 'string' && /^\d{4}-\d\d-\d\dT/.test(now))) {
        return new Date(Date.parse((now as string | undefined) ?? '2026-01-01T00:00:00Z') + 86_400_000).toISOString().replace('.000Z', 'Z');
      }
      const base = typeof now === 'string' ? now : 'undo';
      const fits = (s: string) =>
        s.length >= (schema.minLength ?? 0) &&
        (schema.maxLength === undefined || s.length <= schema.maxLength) &&
        (!schema.pattern || new RegExp(schema.pattern, 'u').test(s));
      return [`${base}-x`, `${base}x`, `${base}2`, 'other', 'x', `https://example.com/${base}`, `${base}@example.com`].find((s) => s !== now && fits(s));
    }
    case 'array': {
      const list = Array.isArray(now) ? now : [];
      if (list.length > (schema.minItems ?? 0)) return list.slice(0, -1);
      if (list.length > 1) return [...list].reverse();
      // Empty (or one at its minimum): one more, made from the items' schema.
      return [...list, sampleOf(schema.items as Json)];
    }
    case 'object': {
      const current = (now ?? {}) as Json;
      // Free-form data (no declared fields): one more field.
      if (Object.keys(schema.properties ?? {}).length === 0) return { ...current, undo: true };
      // One of its fields varied (the first that can be), the rest as they are.
      for (const [name, child] of Object.entries((schema.properties ?? {}) as Record<string, Json>)) {
        const varied = otherValue(child, current[name], others);
        if (varied !== undefined) return { ...current, [name]: varied };
      }
      return undefined;
    }
    default:
      return undefined;
  }
}

const resourceOf = (doc: Json) => [doc.kind.toLowerCase(), doc.metadata.name, ...(doc.metadata.namespace ? ['-n', doc.metadata.namespace] : [])];

/** Every hearth.gg object reconciled at its generation and Ready. */
async function allSettled(what: string): Promise<void> {
  await waitUntil(
    what,
    async () => {
      const items = (await getJson(kube, ['hearth', '-A'])).items as Json[];
      return items.every((o) => readyOf(o)?.status === 'True' && o.status.observedGeneration === o.metadata.generation) ? true : undefined;
    },
    60_000,
    250,
  );
}

/** The object reconciled at its current generation (Ready either way). */
async function reconciled(doc: Json): Promise<void> {
  await waitUntil(
    `${doc.kind} ${doc.metadata.name} reconciled`,
    async () => {
      const obj = await getJson(kube, resourceOf(doc));
      return readyOf(obj) && obj.status.observedGeneration === obj.metadata.generation ? true : undefined;
    },
    30_000,
    100,
  );
}

/** Columns that say when, not what: they move with every write and carry nothing a player or a key depends on. */
const WHEN = /^(created_at|updated_at|last_used_at|read_at)$/;

/** What the service is: every row the reconcilers write (timestamps of writes aside), and the key Secrets. */
async function service(): Promise<Json> {
  const { rows } = await h.db.raw(`
    SELECT c.table_name FROM information_schema.columns c
      WHERE c.table_schema = 'public' AND c.column_name IN ('owner', 'manifest_name')
    UNION SELECT unnest(ARRAY['plans', 'projects', 'environments'])
    ORDER BY 1`);
  const out: Json = {};
  for (const { table_name: table } of rows as { table_name: string }[]) {
    const listed = (await h.db(table).select('*')) as Json[];
    out[table] = listed
      .map((row) => Object.fromEntries(Object.entries(row).filter(([k]) => !WHEN.test(k))))
      .map((row) => JSON.stringify(row))
      .sort();
  }
  const secrets = (await getJson(kube, ['secrets', '-n', m.NAMESPACE])).items as Json[];
  out.secrets = secrets
    .filter((s) => s.metadata.name.endsWith('-key'))
    .map((s) => ({ name: s.metadata.name, data: s.data }))
    .sort((a, b) => a.name.localeCompare(b.name));
  return out;
}

beforeAll(async () => {
  world = await startOperatorWorld();
  ({ kube, h } = world);
  await kubectlApply(kube, documents());
  await allSettled('every document Ready');
}, 180_000);
afterAll(async () => {
  await world?.stop();
});

test('every spec field of every kind: patched and patched back, the service is as before, or the first patch is refused', async () => {
  const docs = documents();
  const others: Record<string, string[]> = {};
  for (const d of docs) (others[d.kind] ??= []).push(d.metadata.name);
  const before = await service();
  const outcome: Record<string, string> = {};
  const unwalkable: string[] = [];

  for (const doc of walked(docs)) {
    const spec = (MANIFEST_KINDS[doc.kind as ManifestKind].schema as unknown as Json).properties.spec as Json;
    const live = (await getJson(kube, resourceOf(doc))).spec as Json;
    for (const [field, schema] of Object.entries(spec.properties as Record<string, Json>)) {
      const label = `${doc.kind}.spec.${field}`;
      const now = live[field];
      const other = otherValue(schema, now, others);
      if (other === undefined) {
        unwalkable.push(label);
        continue;
      }
      // A JSON patch sets the field to exactly this value (a merge patch would merge objects), or removes it.
      const patch = (value: unknown) =>
        kubectl(kube, [
          'patch',
          ...resourceOf(doc),
          '--type=json',
          '-p',
          JSON.stringify([value === undefined ? { op: 'remove', path: `/spec/${field}` } : { op: 'add', path: `/spec/${field}`, value }]),
        ]);
      try {
        await patch(other);
      } catch (err) {
        // Refused by the API server: an identity field (CEL), or a value a rule across fields refuses.
        expect({ label, refused: (err as Error).message }).toEqual({ label, refused: expect.stringMatching(/Invalid value|is invalid/) });
        outcome[label] = /is immutable/.test((err as Error).message) ? 'refused: immutable' : 'refused';
        continue;
      }
      await reconciled(doc);
      await patch(now);
      await reconciled(doc);
      await allSettled(`every object Ready again after ${label} went back`);
      expect({ label, service: await service() }).toEqual({ label, service: before });
      outcome[label] = 'undone';
    }
  }
  expect(unwalkable).toEqual([]);
  // The identity fields of docs/manifests.md are exactly the ones refused as immutable.
  const immutable = Object.entries(outcome)
    .filter(([, o]) => o === 'refused: immutable')
    .map(([label]) => label);
  const marked = walked(docs).flatMap((doc) =>
    Object.entries(((MANIFEST_KINDS[doc.kind as ManifestKind].schema as unknown as Json).properties.spec as Json).properties as Record<string, Json>)
      .filter(([, s]) => s['x-hearth-immutable'] !== undefined)
      .map(([field]) => `${doc.kind}.spec.${field}`),
  );
  expect(immutable.sort()).toEqual(marked.sort());
  console.log(
    `undo walk: ${Object.keys(outcome).length} fields of ${walked(docs).length} kinds; ` +
      `${Object.values(outcome).filter((o) => o === 'undone').length} undone, ${immutable.length} refused as immutable, ` +
      `${Object.values(outcome).filter((o) => o === 'refused').length} refused by other rules (${Object.entries(outcome)
        .filter(([, o]) => o === 'refused')
        .map(([l]) => l)
        .join(', ')})`,
  );
});
