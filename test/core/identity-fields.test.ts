/**
 * Identity fields (docs/manifests.md "Identity fields"): every kind is decided (immutable fields, or
 * why none), the docs' table is the one the schemas write, and reconciling refuses a change of each
 * field the newer kinds mark (a skill tree's key, a product's sku and store item id, a legal
 * document's key, a tour's id, and the environment of each), naming the field and the value it
 * holds, changing nothing; the same document again, the key written out as its name, is no change.
 */
import fs from 'node:fs';
import {
  type AnyManifest,
  KINDS_WITHOUT_IDENTITY_FIELDS,
  MANIFEST_KINDS,
  ManifestError,
  identityFieldsTable,
  identityRows,
  reconcileManifest,
  specFieldsTable,
  validateManifest,
} from '@hearth/core/manifests';
import { type Harness, startHarness } from '../support/harness';
import { legalDocument, product, skillTree, standardManifests, tour } from '../support/manifests';
import { DOC_FILE, withTable } from './identity-table';

test('every kind is decided: immutable fields with why, or why it has none; never both', () => {
  for (const row of identityRows()) {
    if (row.fields.length > 0) {
      expect({ kind: row.kind, note: KINDS_WITHOUT_IDENTITY_FIELDS[row.kind] }).toEqual({ kind: row.kind, note: undefined });
      for (const { field, note } of row.fields)
        expect({ kind: row.kind, field, why: note.why }).toEqual({ kind: row.kind, field, why: expect.stringMatching(/\w{3}/) });
    } else {
      expect({ kind: row.kind, none: row.none }).toEqual({ kind: row.kind, none: expect.stringMatching(/\w{3}/) });
    }
  }
  expect(identityRows().map((r) => r.kind)).toEqual(Object.keys(MANIFEST_KINDS));
});

test("docs/manifests.md's tables are the ones the schemas write (make crds)", () => {
  const doc = fs.readFileSync(DOC_FILE, 'utf8');
  expect(withTable(doc, identityFieldsTable())).toBe(doc);
  expect(withTable(doc, specFieldsTable(), 'spec-fields')).toBe(doc);
});

test('the spec fields table marks what each kind requires, as its schema does', () => {
  const rows = specFieldsTable().split('\n').slice(2);
  expect(rows.map((row) => row.split('`')[1])).toEqual(Object.keys(MANIFEST_KINDS));
  const row = (kind: string) => rows.find((r) => r.startsWith(`| \`${kind}\``))!;
  // Required: bare; optional: `?`; a default after `=`; a list's items in braces.
  expect(row('Tour')).toContain('`environment, id?, name, enabled? = true`');
  expect(row('Currency')).toMatch(/scope, kind, max\?, enabled\? = true/);
  expect(row('SkillTree')).toContain('nodes[] { key, name,');
  expect(row('ItemType')).toContain('prices[]? { currencyKey, amount } = []');
});

describe('reconciling a change of an identity field', () => {
  let h: Harness;
  const spells = () => skillTree('spells', { environment: 'alpha-live', name: 'Spells', nodes: [{ key: 'spells.fire', name: 'Fire' }] });
  const pack = () =>
    product('pack', {
      environment: 'alpha-live',
      sku: 'starter',
      name: 'Starter',
      storeItemId: 11,
      prices: [{ currency: 'USD', amount: 199 }],
      entitlement: 'starter',
    });
  const terms = () => legalDocument('terms', { environment: 'alpha-live', title: 'Terms', url: 'https://example.com/terms', version: '1', required: true });
  const welcome = () => tour('welcome', { environment: 'alpha-live', name: 'Welcome' });

  beforeAll(async () => {
    h = await startHarness({ manifests: [...standardManifests(), spells(), pack(), terms(), welcome()] });
  });
  afterAll(async () => {
    await h.close();
  });

  const reconcile = (doc: AnyManifest) => reconcileManifest(h.db, validateManifest(JSON.parse(JSON.stringify(doc)), 'test'), h.core.bus);
  const rows = async () => ({
    trees: await h.db('skill_trees').orderBy('owner').select('environment_id', 'key', 'owner'),
    products: await h.db('commerce_products').orderBy('owner').select('environment_id', 'sku', 'owner', 'definition'),
    legal: await h.db('legal_documents').orderBy('owner').select('environment_id', 'document', 'owner'),
    tours: await h.db('tours').orderBy('owner').select('environment_id', 'id', 'owner'),
  });
  const changed = (doc: AnyManifest, spec: Record<string, unknown>) => ({ ...doc, spec: { ...doc.spec, ...spec } }) as AnyManifest;

  test.each([
    ['SkillTree', spells, { key: 'magic' }, 'spec.key', '"spells"'],
    ['SkillTree', spells, { environment: 'alpha-test' }, 'spec.environment', '"alpha-live"'],
    ['Product', pack, { sku: 'starter-2' }, 'spec.sku', '"starter"'],
    ['Product', pack, { storeItemId: 12 }, 'spec.storeItemId', '11'],
    ['Product', pack, { environment: 'alpha-test' }, 'spec.environment', '"alpha-live"'],
    ['LegalDocument', terms, { document: 'tos' }, 'spec.document', '"terms"'],
    ['LegalDocument', terms, { environment: 'alpha-test' }, 'spec.environment', '"alpha-live"'],
    ['Tour', welcome, { id: 'hello' }, 'spec.id', '"welcome"'],
    ['Tour', welcome, { environment: 'alpha-test' }, 'spec.environment', '"alpha-live"'],
  ])('%s: %o is refused on its field, naming what it holds; nothing changes', async (_kind, doc, change, field, held) => {
    const before = await rows();
    const err = await reconcile(changed(doc(), change)).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ManifestError);
    const refusal = err as ManifestError;
    expect(refusal.field).toBe(field);
    expect(refusal.reason).toBe(`is immutable: it names an identity; delete the resource and create it again to change it on purpose (it is ${held})`);
    expect(await rows()).toEqual(before);
  });

  test('the same documents again, with the key written out as the name, are no change; other fields still change', async () => {
    expect((await reconcile(changed(spells(), { key: 'spells' }))).action).toBe('unchanged');
    expect((await reconcile(changed(terms(), { document: 'terms' }))).action).toBe('unchanged');
    expect((await reconcile(changed(welcome(), { id: 'welcome' }))).action).toBe('unchanged');
    expect((await reconcile(pack())).action).toBe('unchanged');
    expect((await reconcile(changed(pack(), { name: 'Starter pack' }))).action).toBe('updated');
    expect((await reconcile(changed(spells(), { name: 'Magic' }))).action).toBe('updated');
  });
});
