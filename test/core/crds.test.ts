/**
 * The CRDs are generated from the manifest schemas (apps/core/src/manifests/crds.ts). These tests hold
 * the chart's copy to the schemas (run `make crds` after changing a schema) and check what the
 * translation into Kubernetes' structural subset keeps. test/operator/crds.test.ts gives the CRDs to a
 * real kube-apiserver.
 */
import fs from 'node:fs';
import path from 'node:path';
import {
  API_VERSION,
  CHART_CRD_DIR,
  MANIFEST_KINDS,
  type ManifestError,
  chartCrdTemplates,
  crdsYaml,
  customResourceDefinition,
  referencesOf,
  structural,
  validateManifest,
} from '@hearth/core/manifests';
import { brokenRule } from '@hearth/core/contract';

const CHART = path.join(__dirname, '..', '..', 'charts', 'hearth');

describe('the chart carries the CRDs the schemas make', () => {
  const expected = chartCrdTemplates();

  it('has one template per kind and the RBAC list of their plurals, each exactly as generated (make crds rewrites them)', () => {
    const onDisk = fs
      .readdirSync(path.join(CHART, CHART_CRD_DIR))
      .map((f) => `${CHART_CRD_DIR}/${f}`)
      .sort();
    expect(onDisk).toEqual([...expected.keys()].sort());
    for (const [file, text] of expected) {
      expect({ file, text: fs.readFileSync(path.join(CHART, file), 'utf8') }).toEqual({ file, text });
    }
  });

  it('installs each only through the guard (crds.install on, and not owned by another tool or release), and keeps them on uninstall', () => {
    const crdFiles = [...expected].filter(([file]) => file.endsWith('.yaml'));
    expect(crdFiles).toHaveLength(Object.keys(MANIFEST_KINDS).length);
    for (const [file, text] of crdFiles) {
      // The guard (_helpers.tpl) looks the CRD up by its own name: test/chart/shared-cluster.test.ts installs it for real.
      const name = `${path.basename(file, '.yaml')}.hearth.gg`;
      expect(text).toMatch(
        new RegExp(`^# Generated[^\\n]*\\n\\{\\{- if include "hearth\\.installsCrd" \\(list \\. "${name.replace(/\./g, '\\.')}"\\) \\}\\}\\n`),
      );
      expect(text).toContain(`  name: ${name}\n`);
      expect(text.trimEnd().endsWith('{{- end }}')).toBe(true);
      expect(text).toContain('helm.sh/resource-policy: keep');
    }
  });
});

describe('the versions a CRD lists (docs/kubernetes.md "API versions"; test/operator/crd-versions.test.ts upgrades them)', () => {
  const twoVersions = [
    { name: 'v1alpha1', served: true, storage: false, deprecationWarning: 'use v1beta1' },
    { name: 'v1beta1', served: true, storage: true },
  ];

  it('ships v1alpha1 alone, served and stored', () => {
    for (const kind of Object.keys(MANIFEST_KINDS) as (keyof typeof MANIFEST_KINDS)[]) {
      expect(
        customResourceDefinition(kind).spec.versions.map((v: { name: string; served: boolean; storage: boolean }) => [v.name, v.served, v.storage]),
      ).toEqual([['v1alpha1', true, true]]);
    }
  });

  it('gives every version listed the same schema, columns and status subresource; a deprecated one its warning', () => {
    const [alpha, beta] = customResourceDefinition('Currency', { versions: twoVersions }).spec.versions;
    const { name: _a, served: _as, storage: _ast, deprecated, deprecationWarning, ...alphaRest } = alpha;
    const { name: _b, served: _bs, storage: _bst, ...betaRest } = beta;
    expect(alphaRest).toEqual(betaRest);
    expect({ deprecated, deprecationWarning, storage: alpha.storage }).toEqual({ deprecated: true, deprecationWarning: 'use v1beta1', storage: false });
    expect(betaRest).toEqual(
      Object.fromEntries(Object.entries(customResourceDefinition('Currency').spec.versions[0]).filter(([k]) => !['name', 'served', 'storage'].includes(k))),
    );
    // Each version its own objects: the YAML has no anchors or aliases.
    expect(crdsYaml({ versions: twoVersions })).not.toMatch(/[&*]a\d+/);
  });

  it('refuses a list with no storage version or two', () => {
    expect(() => customResourceDefinition('Plan', { versions: [{ name: 'v1alpha1', served: true, storage: false }] })).toThrow(/exactly one version/);
    expect(() => customResourceDefinition('Plan', { versions: twoVersions.map((v) => ({ ...v, storage: true })) })).toThrow(/exactly one version/);
  });
});

describe('the CRD of a kind', () => {
  it('is namespaced except Plan, in category hearth, with a status subresource and Ready/Age columns', () => {
    for (const kind of Object.keys(MANIFEST_KINDS) as (keyof typeof MANIFEST_KINDS)[]) {
      const crd = customResourceDefinition(kind);
      expect(crd.spec.scope).toBe(kind === 'Plan' ? 'Cluster' : 'Namespaced');
      expect(crd.spec.names.categories).toEqual(['hearth']);
      const version = crd.spec.versions[0];
      expect(version.subresources).toEqual({ status: {} });
      expect(version.additionalPrinterColumns.map((c: { name: string }) => c.name)).toEqual(expect.arrayContaining(['Ready', 'Age']));
      expect(version.schema.openAPIV3Schema.properties.status.properties.conditions['x-kubernetes-list-map-keys']).toEqual(['type']);
    }
  });

  it('shows a ServerKey its key id and Secret in status, never the key', () => {
    const status = customResourceDefinition('ServerKey').spec.versions[0].schema.openAPIV3Schema.properties.status;
    expect(Object.keys(status.properties).sort()).toEqual(['conditions', 'keyId', 'observedGeneration', 'secretName']);
  });
});

describe('what kubectl explain and get show', () => {
  /** Every property of a CRD's schema (spec and status, at every depth) that says nothing about itself. */
  function undescribed(node: Record<string, any>, path: string): string[] {
    const out: string[] = [];
    for (const [key, child] of Object.entries<Record<string, any>>(node.properties ?? {})) {
      if (!child.description) out.push(`${path}.${key}`);
      out.push(...undescribed(child, `${path}.${key}`));
    }
    if (node.items) out.push(...undescribed(node.items, `${path}[]`));
    if (typeof node.additionalProperties === 'object') out.push(...undescribed(node.additionalProperties, `${path}{}`));
    return out;
  }

  it('describes every field of every kind (the descriptions come from the schemas)', () => {
    const kinds = Object.keys(MANIFEST_KINDS) as (keyof typeof MANIFEST_KINDS)[];
    const missing = kinds.flatMap((kind) => undescribed(customResourceDefinition(kind).spec.versions[0].schema.openAPIV3Schema, kind));
    expect(missing).toEqual([]);
  });

  it('shows times as written: no printer column but Age is a date (kubectl prints a future date as <invalid>)', () => {
    const columns = (Object.keys(MANIFEST_KINDS) as (keyof typeof MANIFEST_KINDS)[]).flatMap((kind) =>
      customResourceDefinition(kind).spec.versions[0].additionalPrinterColumns.map((c: { name: string; type: string }) => ({ kind, ...c })),
    );
    expect(columns.filter((c) => c.type === 'date').map((c) => c.name)).toEqual(Object.keys(MANIFEST_KINDS).map(() => 'Age'));
    expect(columns.find((c) => c.kind === 'Realm' && c.name === 'Start')).toMatchObject({ type: 'string', jsonPath: '.spec.startAt' });
  });
});

describe('references between documents (what the operator reconciles again when an object changes)', () => {
  it('every spec field naming another document is a Reference to its kind (a new kind must declare its own so)', () => {
    const NAMING = { plan: 'Plan', project: 'Project', environment: 'GameEnvironment' } as const;
    for (const kind of Object.keys(MANIFEST_KINDS) as (keyof typeof MANIFEST_KINDS)[]) {
      const spec = (MANIFEST_KINDS[kind].schema as unknown as { properties: { spec: { properties: Record<string, unknown> } } }).properties.spec;
      const named = Object.entries(NAMING).filter(([field]) => field in spec.properties);
      const obj = { metadata: { namespace: 'games' }, spec: Object.fromEntries(named.map(([field]) => [field, `the-${field}`])) };
      expect({ kind, refs: referencesOf(kind, obj) }).toEqual({
        kind,
        refs: named.map(([field, target]) => ({ kind: target, key: target === 'Plan' ? `the-${field}` : `games/the-${field}` })),
      });
    }
  });
});

describe('identity fields (immutable)', () => {
  /** The transition rules of a kind's spec: the fields they keep. */
  const immutableOf = (kind: keyof typeof MANIFEST_KINDS) =>
    (
      (customResourceDefinition(kind).spec.versions[0].schema.openAPIV3Schema.properties.spec['x-kubernetes-validations'] ?? []) as {
        rule: string;
        fieldPath: string;
      }[]
    )
      .filter((r) => r.rule.includes('oldSelf'))
      .map((r) => r.fieldPath);

  it('are the ones that name an identity, each kept by a CEL transition rule on the spec', () => {
    const byKind = Object.fromEntries(
      (Object.keys(MANIFEST_KINDS) as (keyof typeof MANIFEST_KINDS)[]).map((k) => [k, immutableOf(k)]).filter(([, f]) => f.length > 0),
    );
    expect(byKind).toEqual({
      GameEnvironment: ['.project', '.appKey'],
      ServerKey: ['.environment'],
      LegalDocument: ['.environment', '.document'],
      Tour: ['.environment', '.id'],
      Realm: ['.environment', '.key'],
      Currency: ['.environment', '.key'],
      ItemType: ['.environment', '.key'],
      CardType: ['.environment', '.slug'],
      CardTemplate: ['.environment', '.key'],
      SkillTree: ['.environment', '.key'],
      LicenceKey: ['.project'],
      Product: ['.environment', '.sku', '.storeItemId'],
    });
    const rules = customResourceDefinition('Currency').spec.versions[0].schema.openAPIV3Schema.properties.spec['x-kubernetes-validations'];
    expect(rules).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          rule: 'self.environment == oldSelf.environment',
          fieldPath: '.environment',
          message: expect.stringMatching(/^is immutable/),
        }),
        // Optional (its default is the name): neither added, removed nor changed.
        expect.objectContaining({ rule: 'has(self.key) == has(oldSelf.key) && (!has(self.key) || self.key == oldSelf.key)', fieldPath: '.key' }),
      ]),
    );
  });

  it('are not rules hearth apply evaluates on one document (there is no oldSelf on a create)', () => {
    const env = { apiVersion: API_VERSION, kind: 'GameEnvironment', metadata: { name: 'e', namespace: 'n' }, spec: { project: 'p', appKey: 'k' } };
    expect(() => validateManifest(env)).not.toThrow();
  });
});

describe('rules across fields (CEL)', () => {
  const post = (spec: Record<string, unknown>) => ({
    apiVersion: API_VERSION,
    kind: 'BlogPost',
    metadata: { name: 'p', namespace: 'n' },
    spec: { environment: 'e', title: 't', category: 'c', content: { blocks: [] }, ...spec },
  });
  const refusalOf = (doc: unknown) => {
    try {
      validateManifest(doc);
      return null;
    } catch (err) {
      return { field: (err as ManifestError).field, reason: (err as ManifestError).reason };
    }
  };

  it('are carried by the CRD where the schema declares them', () => {
    const spec = customResourceDefinition('BlogPost').spec.versions[0].schema.openAPIV3Schema.properties.spec;
    expect(spec['x-kubernetes-validations']).toEqual((MANIFEST_KINDS.BlogPost.schema.properties.spec as Record<string, unknown>)['x-kubernetes-validations']);
    expect(spec['x-kubernetes-validations']).toHaveLength(3);
  });

  it('are held by validateManifest with the field and message the API server gives', () => {
    expect(refusalOf(post({ status: 'scheduled' }))).toEqual({ field: 'spec.publishAt', reason: 'is required for a scheduled post' });
    expect(refusalOf(post({ status: 'published', publishAt: '2030-01-01T00:00:00Z' }))).toEqual({
      field: 'spec.publishAt',
      reason: 'is only for a scheduled post',
    });
    expect(refusalOf(post({ status: 'scheduled', publishAt: '2030-01-01T00:00:00Z', publishedAt: '2020-01-01T00:00:00Z' }))).toEqual({
      field: 'spec.publishedAt',
      reason: 'is only for a published post',
    });
    expect(refusalOf(post({ status: 'scheduled', publishAt: '2030-01-01T00:00:00Z' }))).toBeNull();
    expect(refusalOf(post({ status: 'published', publishedAt: '2020-01-01T00:00:00Z' }))).toBeNull();
    expect(refusalOf(post({ status: 'draft' }))).toBeNull();
  });

  it('name a field inside a list by its index', () => {
    const schema = {
      type: 'object',
      properties: {
        rows: { type: 'array', items: { type: 'object', 'x-kubernetes-validations': [{ rule: 'self.a <= self.b', message: 'a over b', fieldPath: '.a' }] } },
      },
    };
    expect(
      brokenRule(
        schema,
        {
          rows: [
            { a: 1, b: 2 },
            { a: 3, b: 2 },
          ],
        },
        'spec',
      ),
    ).toEqual({ field: 'spec.rows.1.a', reason: 'a over b' });
    expect(brokenRule(schema, { rows: [{ a: 1, b: 2 }] }, 'spec')).toBeNull();
  });
});

describe('structural()', () => {
  it('turns a union of literals into an enum and a union with null into nullable', () => {
    expect(
      structural({
        anyOf: [
          { const: 'a', type: 'string' },
          { const: 'b', type: 'string' },
        ],
      }),
    ).toEqual({ type: 'string', enum: ['a', 'b'] });
    expect(structural({ anyOf: [{ type: 'string', maxLength: 9 }, { type: 'null' }] })).toEqual({ type: 'string', maxLength: 9, nullable: true });
  });

  it('drops additionalProperties: false (pruning and strict field validation refuse unknown fields) and keeps bounds', () => {
    expect(structural({ type: 'object', properties: { n: { type: 'integer', minimum: 1 } }, required: ['n'], additionalProperties: false })).toEqual({
      type: 'object',
      required: ['n'],
      properties: { n: { type: 'integer', minimum: 1 } },
    });
  });

  it("turns TypeBox's Record into additionalProperties and a mixed union into any value", () => {
    expect(structural({ type: 'object', patternProperties: { '^(.*)$': { type: 'string' } } })).toEqual({
      type: 'object',
      additionalProperties: { type: 'string' },
    });
    expect(structural({ anyOf: [{ type: 'string' }, { type: 'number' }, { type: 'null' }] })).toEqual({
      'x-kubernetes-preserve-unknown-fields': true,
      nullable: true,
    });
  });

  it('gives if/then variants (a blog block) every variant field, bounds only where the variants agree', () => {
    const block = customResourceDefinition('BlogPost').spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.content.properties.blocks.items;
    expect(block.type).toBe('object');
    expect(block.required).toEqual(['type']);
    expect(block.properties.type.enum).toEqual(['paragraph', 'heading', 'image', 'list', 'quote', 'code']);
    expect(block.properties.level).toEqual({ type: 'integer', minimum: 2, maximum: 4, description: expect.any(String) });
    expect(block.properties.text).toEqual({ type: 'string', description: expect.any(String) }); // 20,000 for a paragraph, 300 for a heading
    // Only a list has items: its own bounds stay.
    expect(block.properties.items).toEqual({
      type: 'array',
      minItems: 1,
      maxItems: 200,
      description: expect.any(String),
      items: { type: 'string', minLength: 1, maxLength: 2000 },
    });
  });
});
