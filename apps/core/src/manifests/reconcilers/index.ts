/**
 * Every kind's reconciler, by kind. Adding a kind: its schema in ../schemas.ts (MANIFEST_KINDS, in
 * dependency order), its reconciler in a file of this folder, and its line here; the type below
 * refuses to compile while a kind of MANIFEST_KINDS has no reconciler.
 */
import type { ManifestKind, ManifestOf } from '../schemas';
import { blogCategoryReconciler } from './blog-category';
import { blogPostReconciler } from './blog-post';
import { gameConfigReconciler } from './game-config';
import { gameEnvironmentReconciler } from './game-environment';
import { itemTypeReconciler } from './item-type';
import { legalDocumentReconciler } from './legal-document';
import { planReconciler } from './plan';
import { projectReconciler } from './project';
import { serverKeyReconciler } from './server-key';
import { licenceKeyReconciler } from './licence-key';
import { tourReconciler } from './tour';
import { realmReconciler } from './realm';
import { currencyReconciler } from './currency';
import { cardTemplateReconciler, cardTypeReconciler } from './card-type';
import { skillTreeReconciler } from './skill-tree';
import { dashboardMemberReconciler } from './dashboard-member';
import { productReconciler } from './product';
import type { Reconciler } from './shared';

export type ReconcilerTable = { [K in ManifestKind]: Reconciler<ManifestOf<K>> };

export const RECONCILERS: ReconcilerTable = {
  Plan: planReconciler,
  Project: projectReconciler,
  GameEnvironment: gameEnvironmentReconciler,
  ServerKey: serverKeyReconciler,
  LicenceKey: licenceKeyReconciler,
  GameConfig: gameConfigReconciler,
  LegalDocument: legalDocumentReconciler,
  Tour: tourReconciler,
  BlogCategory: blogCategoryReconciler,
  BlogPost: blogPostReconciler,
  Realm: realmReconciler,
  Currency: currencyReconciler,
  ItemType: itemTypeReconciler,
  CardType: cardTypeReconciler,
  CardTemplate: cardTemplateReconciler,
  SkillTree: skillTreeReconciler,
  DashboardMember: dashboardMemberReconciler,
  Product: productReconciler,
};

/** The reconciler of one kind, typed for that kind's documents. */
export function reconcilerOf<K extends ManifestKind>(kind: K): Reconciler<ManifestOf<K>> {
  return RECONCILERS[kind];
}

export * from './shared';
