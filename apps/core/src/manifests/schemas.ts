/**
 * The Hearth custom resources (API group hearth.gg, v1alpha1), written once: `hearth apply`, the
 * operator and the generated CRD YAML all validate with these schemas.
 */
import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { ResourceName } from '../contract/names';
import {
  BlogCategorySpec,
  BlogPostSpec,
  CurrencySpec,
  GameConfigSpec,
  GameEnvironmentSpec,
  LegalDocumentSpec,
  LicenceKeySpec,
  PlanSpec,
  ProjectSpec,
  RealmSpec,
  ServerKeySpec,
  TourSpec,
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

/** What a kind's CRD adds to its schema (crds.ts): plural, short names, printer columns, status fields. */
interface CrdParts {
  plural: string;
  shortNames: string[];
  columns: PrinterColumn[];
  status?: Record<string, TSchema>;
}

/** A kind of MANIFEST_KINDS: its documents' schema (its spec inside apiVersion and metadata) and its CRD's parts. */
function manifestKind<K extends string, S extends TSchema>(kindName: K, spec: S, crd: CrdParts, namespaced = true) {
  return { schema: kind(kindName, spec, namespaced), namespaced, crd };
}

/** The printer column of a spec field. */
function specColumn(name: string, type: PrinterColumn['type'], field: string, priority?: number): PrinterColumn {
  return { name, type, jsonPath: `.spec.${field}`, ...(priority === undefined ? {} : { priority }) };
}

const ENVIRONMENT = specColumn('Environment', 'string', 'environment');
const ENABLED = specColumn('Enabled', 'boolean', 'enabled');
const PROJECT = specColumn('Project', 'string', 'project');

/**
 * A key document's (ServerKey, LicenceKey) columns, its owner's and then its live key's, and its
 * status: the key's id and the Secret that holds the whole key.
 */
function keyDocument(owner: PrinterColumn, keyPrefix: string): Pick<CrdParts, 'columns' | 'status'> {
  return {
    columns: [owner, { name: 'Key ID', type: 'string', jsonPath: '.status.keyId' }, { name: 'Secret', type: 'string', jsonPath: '.status.secretName' }],
    status: {
      keyId: Type.String({ description: `the key id (the part after ${keyPrefix}); the whole key is only in the Secret` }),
      secretName: Type.String({ description: 'the Secret in this namespace that holds the whole key' }),
    },
  };
}

/**
 * Every kind, in the order a file's documents are applied (what others point at comes first), with
 * what its CRD adds to the schema.
 */
export const MANIFEST_KINDS = {
  Plan: manifestKind('Plan', PlanSpec, { plural: 'plans', shortNames: ['hplan'], columns: [specColumn('Players', 'integer', 'playersPerEnvironment')] }, false),
  Project: manifestKind('Project', ProjectSpec, {
    plural: 'projects',
    shortNames: ['hproject'],
    columns: [specColumn('Plan', 'string', 'plan'), specColumn('Review', 'string', 'review')],
  }),
  GameEnvironment: manifestKind('GameEnvironment', GameEnvironmentSpec, {
    plural: 'gameenvironments',
    shortNames: ['genv'],
    columns: [PROJECT, specColumn('App Key', 'string', 'appKey')],
  }),
  ServerKey: manifestKind('ServerKey', ServerKeySpec, { plural: 'serverkeys', shortNames: ['hkey'], ...keyDocument(ENVIRONMENT, 'hsk_') }),
  GameConfig: manifestKind('GameConfig', GameConfigSpec, { plural: 'gameconfigs', shortNames: ['gconf'], columns: [ENVIRONMENT] }),
  LegalDocument: manifestKind('LegalDocument', LegalDocumentSpec, {
    plural: 'legaldocuments',
    shortNames: ['legaldoc'],
    columns: [ENVIRONMENT, specColumn('Version', 'string', 'version'), specColumn('Required', 'boolean', 'required')],
  }),
  Tour: manifestKind('Tour', TourSpec, { plural: 'tours', shortNames: ['htour'], columns: [ENVIRONMENT, ENABLED] }),
  BlogCategory: manifestKind('BlogCategory', BlogCategorySpec, { plural: 'blogcategories', shortNames: ['blogcat'], columns: [ENVIRONMENT] }),
  BlogPost: manifestKind('BlogPost', BlogPostSpec, {
    plural: 'blogposts',
    shortNames: ['blogpost'],
    columns: [ENVIRONMENT, specColumn('Category', 'string', 'category'), specColumn('Status', 'string', 'status')],
  }),
  Realm: manifestKind('Realm', RealmSpec, {
    plural: 'realms',
    shortNames: ['hrealm'],
    // The times as written: a `date` column shows a future time as <invalid> (it prints an age).
    columns: [
      ENVIRONMENT,
      specColumn('Number', 'integer', 'number'),
      ENABLED,
      specColumn('Start', 'string', 'startAt'),
      specColumn('End', 'string', 'endAt', 1),
    ],
  }),
  Currency: manifestKind('Currency', CurrencySpec, {
    plural: 'currencies',
    shortNames: ['hcur'],
    columns: [ENVIRONMENT, specColumn('Kind', 'string', 'kind'), specColumn('Scope', 'string', 'scope'), ENABLED],
  }),
  ItemType: manifestKind('ItemType', ItemTypeSpec, {
    plural: 'itemtypes',
    shortNames: ['itemtype'],
    columns: [ENVIRONMENT, specColumn('Category', 'string', 'category'), specColumn('Ownership', 'string', 'ownership'), ENABLED],
  }),
  CardType: manifestKind('CardType', CardTypeSpec, {
    plural: 'cardtypes',
    shortNames: ['cardtype'],
    columns: [ENVIRONMENT, specColumn('Slug', 'string', 'slug'), specColumn('Purchasable', 'boolean', 'purchasable'), ENABLED],
  }),
  CardTemplate: manifestKind('CardTemplate', CardTemplateSpec, { plural: 'cardtemplates', shortNames: ['cardtpl'], columns: [ENVIRONMENT, ENABLED] }),
  SkillTree: manifestKind('SkillTree', SkillTreeSpec, {
    plural: 'skilltrees',
    shortNames: ['skilltree'],
    columns: [ENVIRONMENT, specColumn('Key', 'string', 'key'), specColumn('Hidden', 'boolean', 'hidden')],
  }),
  LicenceKey: manifestKind('LicenceKey', LicenceKeySpec, { plural: 'licencekeys', shortNames: ['hlicence'], ...keyDocument(PROJECT, 'hlk_') }),
  DashboardMember: manifestKind('DashboardMember', DashboardMemberSpec, {
    plural: 'dashboardmembers',
    shortNames: ['dmember'],
    columns: [PROJECT, specColumn('Subject', 'string', 'subject'), specColumn('Email', 'string', 'email'), specColumn('Disabled', 'boolean', 'disabled')],
  }),
  Product: manifestKind('Product', ProductSpec, {
    plural: 'products',
    shortNames: ['hproduct'],
    columns: [ENVIRONMENT, specColumn('SKU', 'string', 'sku'), ENABLED],
  }),
};
export type ManifestKind = keyof typeof MANIFEST_KINDS;
/** The document type of one kind, from its schema. */
export type ManifestOf<K extends ManifestKind> = Static<(typeof MANIFEST_KINDS)[K]['schema']>;

export type Plan = ManifestOf<'Plan'>;
export type Project = ManifestOf<'Project'>;
export type GameEnvironment = ManifestOf<'GameEnvironment'>;
export type ServerKey = ManifestOf<'ServerKey'>;
export type LicenceKey = ManifestOf<'LicenceKey'>;
export type GameConfig = ManifestOf<'GameConfig'>;
export type LegalDocumentManifestT = ManifestOf<'LegalDocument'>;
export type TourManifestT = ManifestOf<'Tour'>;
export type BlogCategory = ManifestOf<'BlogCategory'>;
export type BlogPost = ManifestOf<'BlogPost'>;
export type RealmManifestT = ManifestOf<'Realm'>;
export type CurrencyManifestT = ManifestOf<'Currency'>;
export type ItemTypeManifestT = ManifestOf<'ItemType'>;
export type CardTypeManifestT = ManifestOf<'CardType'>;
export type CardTemplateManifestT = ManifestOf<'CardTemplate'>;
export type SkillTreeManifestT = ManifestOf<'SkillTree'>;
export type DashboardMemberManifestT = ManifestOf<'DashboardMember'>;
export type ProductManifestT = ManifestOf<'Product'>;
/** A document of any kind, discriminated by `kind`. */
export type AnyManifest = ManifestOf<ManifestKind>;
