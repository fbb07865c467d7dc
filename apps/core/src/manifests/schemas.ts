/**
 * The Hearth custom resources (API group hearth.gg, v1alpha1), every kind gathered from the areas that
 * declare them (kinds/<area>.ts, one line each): `hearth apply`, the operator and the generated CRD
 * YAML all validate with these schemas, and reconcile with these reconcilers.
 */
import type { Static } from '@sinclair/typebox';
import type { Reconciler } from './reconciler';
import { tenancyKinds } from './kinds/tenancy';
import { authKinds } from './kinds/auth';
import { contentKinds } from './kinds/content';
import { legalKinds } from './kinds/legal';
import { tourKinds } from './kinds/tours';
import { blogKinds } from './kinds/blog';
import { economyKinds } from './kinds/economy';
import { itemKinds } from './kinds/items';
import { cardKinds } from './kinds/cards';
import { progressionKinds } from './kinds/progression';
import { licenceKinds } from './kinds/licence';
import { dashboardKinds } from './kinds/dashboards';
import { commerceKinds } from './kinds/commerce';

/**
 * Every kind, in the order a file's documents are applied (what others point at comes first): the
 * areas in that order, each area's kinds in its own.
 */
export const MANIFEST_KINDS = {
  ...tenancyKinds,
  ...authKinds,
  ...contentKinds,
  ...legalKinds,
  ...tourKinds,
  ...blogKinds,
  ...economyKinds,
  ...itemKinds,
  ...cardKinds,
  ...progressionKinds,
  ...licenceKinds,
  ...dashboardKinds,
  ...commerceKinds,
};
export type ManifestKind = keyof typeof MANIFEST_KINDS;
/** The document type of one kind, from its schema. */
export type ManifestOf<K extends ManifestKind> = Static<(typeof MANIFEST_KINDS)[K]['schema']>;

/** MANIFEST_KINDS as the compiler checks it: each kind's reconciler takes that kind's documents. */
const RECONCILED: { [K in ManifestKind]: { reconciler: Reconciler<ManifestOf<K>> } } = MANIFEST_KINDS;

/** The reconciler of one kind, typed for that kind's documents. */
export function reconcilerOf<K extends ManifestKind>(kind: K): Reconciler<ManifestOf<K>> {
  return RECONCILED[kind].reconciler;
}

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
