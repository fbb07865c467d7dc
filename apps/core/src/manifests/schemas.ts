/**
 * The Hearth custom resources (API group hearth.gg, v1alpha1), written once: `hearth apply`, the
 * operator and the generated CRD YAML all validate with these schemas.
 */
import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { ResourceName } from '../contract/names';
import {
  BlogCategorySpec, BlogPostSpec, CurrencySpec, GameConfigSpec, GameEnvironmentSpec, LegalDocumentSpec,
  LicenceKeySpec, PlanSpec, ProjectSpec, RealmSpec, ServerKeySpec, TourSpec,
} from '../contract/resources';
import { ItemTypeSpec } from '../contract/item-type';
import { CardTemplateSpec, CardTypeSpec } from '../contract/card-type';
import { SkillTreeSpec } from '../contract/skill-tree';
import { DashboardMemberSpec } from '../contract/dashboards';
import { ProductSpec } from '../contract/product';

export const API_VERSION = 'hearth.gg/v1alpha1';

const Name = ResourceName;

const Metadata = (namespaced: boolean) =>
  Type.Object(
    {
      name: Name,
      ...(namespaced ? { namespace: Type.Optional(Name) } : {}),
      labels: Type.Optional(Type.Record(Type.String(), Type.String())),
      annotations: Type.Optional(Type.Record(Type.String(), Type.String())),
    },
    { additionalProperties: true },
  );

function kind<K extends string, S extends TSchema>(kindName: K, spec: S, namespaced = true) {
  return Type.Object(
    {
      apiVersion: Type.Literal(API_VERSION),
      kind: Type.Literal(kindName),
      metadata: Metadata(namespaced),
      spec,
    },
    { additionalProperties: true },
  );
}

export const PlanManifest = kind('Plan', PlanSpec, false);
export const ProjectManifest = kind('Project', ProjectSpec);
export const GameEnvironmentManifest = kind('GameEnvironment', GameEnvironmentSpec);
export const ServerKeyManifest = kind('ServerKey', ServerKeySpec);
export const LicenceKeyManifest = kind('LicenceKey', LicenceKeySpec);
export const GameConfigManifest = kind('GameConfig', GameConfigSpec);
export const LegalDocumentManifest = kind('LegalDocument', LegalDocumentSpec);
export const TourManifest = kind('Tour', TourSpec);
export const BlogCategoryManifest = kind('BlogCategory', BlogCategorySpec);
export const BlogPostManifest = kind('BlogPost', BlogPostSpec);
export const RealmManifest = kind('Realm', RealmSpec);
export const CurrencyManifest = kind('Currency', CurrencySpec);
export const ItemTypeManifest = kind('ItemType', ItemTypeSpec);
export const CardTypeManifest = kind('CardType', CardTypeSpec);
export const CardTemplateManifest = kind('CardTemplate', CardTemplateSpec);
export const SkillTreeManifest = kind('SkillTree', SkillTreeSpec);
export const DashboardMemberManifest = kind('DashboardMember', DashboardMemberSpec);
export const ProductManifest = kind('Product', ProductSpec);

/**
 * A printer column of `kubectl get` (besides Ready and Age, which every kind shows). No `date`:
 * kubectl prints a date column as an age, and a time to come as `<invalid>`; a time is a string.
 */
export interface PrinterColumn {
  name: string;
  type: 'string' | 'integer' | 'boolean';
  jsonPath: string;
  priority?: number;
}

/**
 * Every kind, in the order a file's documents are applied (what others point at comes first), with
 * what its CRD adds to the schema (crds.ts): plural, short names, printer columns, status fields.
 */
export const MANIFEST_KINDS = {
  Plan: {
    schema: PlanManifest,
    namespaced: false,
    crd: { plural: 'plans', shortNames: ['hplan'], columns: [{ name: 'Players', type: 'integer', jsonPath: '.spec.playersPerEnvironment' }] },
  },
  Project: {
    schema: ProjectManifest,
    namespaced: true,
    crd: {
      plural: 'projects',
      shortNames: ['hproject'],
      columns: [
        { name: 'Plan', type: 'string', jsonPath: '.spec.plan' },
        { name: 'Review', type: 'string', jsonPath: '.spec.review' },
      ],
    },
  },
  GameEnvironment: {
    schema: GameEnvironmentManifest,
    namespaced: true,
    crd: {
      plural: 'gameenvironments',
      shortNames: ['genv'],
      columns: [
        { name: 'Project', type: 'string', jsonPath: '.spec.project' },
        { name: 'App Key', type: 'string', jsonPath: '.spec.appKey' },
      ],
    },
  },
  ServerKey: {
    schema: ServerKeyManifest,
    namespaced: true,
    crd: {
      plural: 'serverkeys',
      shortNames: ['hkey'],
      columns: [
        { name: 'Environment', type: 'string', jsonPath: '.spec.environment' },
        { name: 'Key ID', type: 'string', jsonPath: '.status.keyId' },
        { name: 'Secret', type: 'string', jsonPath: '.status.secretName' },
      ],
      status: {
        keyId: Type.String({ description: 'the key id (the part after hsk_); the whole key is only in the Secret' }),
        secretName: Type.String({ description: 'the Secret in this namespace that holds the whole key' }),
      },
    },
  },
  GameConfig: {
    schema: GameConfigManifest,
    namespaced: true,
    crd: { plural: 'gameconfigs', shortNames: ['gconf'], columns: [{ name: 'Environment', type: 'string', jsonPath: '.spec.environment' }] },
  },
  LegalDocument: {
    schema: LegalDocumentManifest,
    namespaced: true,
    crd: {
      plural: 'legaldocuments',
      shortNames: ['legaldoc'],
      columns: [
        { name: 'Environment', type: 'string', jsonPath: '.spec.environment' },
        { name: 'Version', type: 'string', jsonPath: '.spec.version' },
        { name: 'Required', type: 'boolean', jsonPath: '.spec.required' },
      ],
    },
  },
  Tour: {
    schema: TourManifest,
    namespaced: true,
    crd: {
      plural: 'tours',
      shortNames: ['htour'],
      columns: [
        { name: 'Environment', type: 'string', jsonPath: '.spec.environment' },
        { name: 'Enabled', type: 'boolean', jsonPath: '.spec.enabled' },
      ],
    },
  },
  BlogCategory: {
    schema: BlogCategoryManifest,
    namespaced: true,
    crd: { plural: 'blogcategories', shortNames: ['blogcat'], columns: [{ name: 'Environment', type: 'string', jsonPath: '.spec.environment' }] },
  },
  BlogPost: {
    schema: BlogPostManifest,
    namespaced: true,
    crd: {
      plural: 'blogposts',
      shortNames: ['blogpost'],
      columns: [
        { name: 'Environment', type: 'string', jsonPath: '.spec.environment' },
        { name: 'Category', type: 'string', jsonPath: '.spec.category' },
        { name: 'Status', type: 'string', jsonPath: '.spec.status' },
      ],
    },
  },
  Realm: {
    schema: RealmManifest,
    namespaced: true,
    crd: {
      plural: 'realms',
      shortNames: ['hrealm'],
      columns: [
        { name: 'Environment', type: 'string', jsonPath: '.spec.environment' },
        { name: 'Number', type: 'integer', jsonPath: '.spec.number' },
        { name: 'Enabled', type: 'boolean', jsonPath: '.spec.enabled' },
        // The time as written: a `date` column shows a future time as <invalid> (it prints an age).
        { name: 'Start', type: 'string', jsonPath: '.spec.startAt' },
        { name: 'End', type: 'string', jsonPath: '.spec.endAt', priority: 1 },
      ],
    },
  },
  Currency: {
    schema: CurrencyManifest,
    namespaced: true,
    crd: {
      plural: 'currencies',
      shortNames: ['hcur'],
      columns: [
        { name: 'Environment', type: 'string', jsonPath: '.spec.environment' },
        { name: 'Kind', type: 'string', jsonPath: '.spec.kind' },
        { name: 'Scope', type: 'string', jsonPath: '.spec.scope' },
        { name: 'Enabled', type: 'boolean', jsonPath: '.spec.enabled' },
      ],
    },
  },
  ItemType: {
    schema: ItemTypeManifest,
    namespaced: true,
    crd: {
      plural: 'itemtypes',
      shortNames: ['itemtype'],
      columns: [
        { name: 'Environment', type: 'string', jsonPath: '.spec.environment' },
        { name: 'Category', type: 'string', jsonPath: '.spec.category' },
        { name: 'Ownership', type: 'string', jsonPath: '.spec.ownership' },
        { name: 'Enabled', type: 'boolean', jsonPath: '.spec.enabled' },
      ],
    },
  },
  CardType: {
    schema: CardTypeManifest,
    namespaced: true,
    crd: {
      plural: 'cardtypes',
      shortNames: ['cardtype'],
      columns: [
        { name: 'Environment', type: 'string', jsonPath: '.spec.environment' },
        { name: 'Slug', type: 'string', jsonPath: '.spec.slug' },
        { name: 'Purchasable', type: 'boolean', jsonPath: '.spec.purchasable' },
        { name: 'Enabled', type: 'boolean', jsonPath: '.spec.enabled' },
      ],
    },
  },
  CardTemplate: {
    schema: CardTemplateManifest,
    namespaced: true,
    crd: {
      plural: 'cardtemplates',
      shortNames: ['cardtpl'],
      columns: [
        { name: 'Environment', type: 'string', jsonPath: '.spec.environment' },
        { name: 'Enabled', type: 'boolean', jsonPath: '.spec.enabled' },
      ],
    },
  },
  SkillTree: {
    schema: SkillTreeManifest,
    namespaced: true,
    crd: {
      plural: 'skilltrees',
      shortNames: ['skilltree'],
      columns: [
        { name: 'Environment', type: 'string', jsonPath: '.spec.environment' },
        { name: 'Key', type: 'string', jsonPath: '.spec.key' },
        { name: 'Hidden', type: 'boolean', jsonPath: '.spec.hidden' },
      ],
    },
  },
  LicenceKey: {
    schema: LicenceKeyManifest,
    namespaced: true,
    crd: {
      plural: 'licencekeys',
      shortNames: ['hlicence'],
      columns: [
        { name: 'Project', type: 'string', jsonPath: '.spec.project' },
        { name: 'Key ID', type: 'string', jsonPath: '.status.keyId' },
        { name: 'Secret', type: 'string', jsonPath: '.status.secretName' },
      ],
      status: {
        keyId: Type.String({ description: 'the key id (the part after hlk_); the whole key is only in the Secret' }),
        secretName: Type.String({ description: 'the Secret in this namespace that holds the whole key' }),
      },
    },
  },
  DashboardMember: {
    schema: DashboardMemberManifest,
    namespaced: true,
    crd: {
      plural: 'dashboardmembers',
      shortNames: ['dmember'],
      columns: [
        { name: 'Project', type: 'string', jsonPath: '.spec.project' },
        { name: 'Subject', type: 'string', jsonPath: '.spec.subject' },
        { name: 'Email', type: 'string', jsonPath: '.spec.email' },
        { name: 'Disabled', type: 'boolean', jsonPath: '.spec.disabled' },
      ],
    },
  },
  Product: {
    schema: ProductManifest,
    namespaced: true,
    crd: {
      plural: 'products',
      shortNames: ['hproduct'],
      columns: [
        { name: 'Environment', type: 'string', jsonPath: '.spec.environment' },
        { name: 'SKU', type: 'string', jsonPath: '.spec.sku' },
        { name: 'Enabled', type: 'boolean', jsonPath: '.spec.enabled' },
      ],
    },
  },
} as const satisfies Record<string, { schema: TSchema; namespaced: boolean; crd: { plural: string; shortNames: string[]; columns: PrinterColumn[]; status?: Record<string, TSchema> } }>;
export type ManifestKind = keyof typeof MANIFEST_KINDS;
/** The document type of one kind, from its schema. */
export type ManifestOf<K extends ManifestKind> = Static<(typeof MANIFEST_KINDS)[K]['schema']>;

export type Plan = Static<typeof PlanManifest>;
export type Project = Static<typeof ProjectManifest>;
export type GameEnvironment = Static<typeof GameEnvironmentManifest>;
export type ServerKey = Static<typeof ServerKeyManifest>;
export type LicenceKey = Static<typeof LicenceKeyManifest>;
export type GameConfig = Static<typeof GameConfigManifest>;
export type LegalDocumentManifestT = Static<typeof LegalDocumentManifest>;
export type TourManifestT = Static<typeof TourManifest>;
export type BlogCategory = Static<typeof BlogCategoryManifest>;
export type BlogPost = Static<typeof BlogPostManifest>;
export type RealmManifestT = Static<typeof RealmManifest>;
export type CurrencyManifestT = Static<typeof CurrencyManifest>;
export type ItemTypeManifestT = Static<typeof ItemTypeManifest>;
export type CardTypeManifestT = Static<typeof CardTypeManifest>;
export type CardTemplateManifestT = Static<typeof CardTemplateManifest>;
export type SkillTreeManifestT = Static<typeof SkillTreeManifest>;
export type DashboardMemberManifestT = Static<typeof DashboardMemberManifest>;
export type ProductManifestT = Static<typeof ProductManifest>;
/** A document of any kind, discriminated by `kind`. */
export type AnyManifest = ManifestOf<ManifestKind>;
