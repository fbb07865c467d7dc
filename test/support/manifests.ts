/** Builders for the manifests tests apply; each returns a plain document of the real schema. */
import { type AnyManifest, API_VERSION } from '@hearth/core/manifests';
import { type PlanLimits, type ProjectSpecT, type ServiceName, SERVICES } from '@hearth/core/contract';

export type Manifests = AnyManifest[];
export const NAMESPACE = 'tests';

export function plan(name: string, overrides: Partial<PlanLimits> = {}): AnyManifest {
  return {
    apiVersion: API_VERSION,
    kind: 'Plan',
    metadata: { name },
    spec: {
      playersPerEnvironment: 1000,
      playerDataBytesPerEnvironment: 1073741824,
      serverKeysPerEnvironment: 5,
      requestsPerMinutePerEnvironment: 100000,
      requestsPerMinutePerCredential: 100000,
      requestsPerDayPerEnvironment: 10000000,
      sessionSeats: 16,
      realtime: { maxMessageBytes: 4096, messagesPerSecond: 10, messagesPerMinute: 300, maxSubscriptions: 10 },
      licenceSeats: 2,
      ...overrides,
    },
  } as AnyManifest;
}

export const allServices = Object.fromEntries(SERVICES.map((s) => [s, true])) as ProjectSpecT['services'];

export function project(name: string, overrides: Partial<ProjectSpecT> = {}): AnyManifest {
  return {
    apiVersion: API_VERSION,
    kind: 'Project',
    metadata: { name, namespace: NAMESPACE },
    spec: { plan: 'test', review: 'approved', sessionSeats: 8, services: allServices, ...overrides },
  } as AnyManifest;
}

export function environment(name: string, projectName: string, appKey = name): AnyManifest {
  return { apiVersion: API_VERSION, kind: 'GameEnvironment', metadata: { name, namespace: NAMESPACE }, spec: { project: projectName, appKey } } as AnyManifest;
}

export function serverKey(name: string, environmentName: string): AnyManifest {
  return { apiVersion: API_VERSION, kind: 'ServerKey', metadata: { name, namespace: NAMESPACE }, spec: { environment: environmentName } } as AnyManifest;
}

/** A licence key of a project (its organisation) covering `products`, for the licence routes (docs/licence.md). */
export function licenceKey(name: string, projectName: string, products: string[] = ['plugin']): AnyManifest {
  return { apiVersion: API_VERSION, kind: 'LicenceKey', metadata: { name, namespace: NAMESPACE }, spec: { project: projectName, products } } as AnyManifest;
}

/**
 * A project with one service switched off, its environment `<name>-live` and that environment's key
 * `<name>-live-key`: what a test needs to see a route answer service-disabled.
 */
export function projectWithout(name: string, service: ServiceName): AnyManifest[] {
  return [project(name, { services: { ...allServices, [service]: false } }), environment(`${name}-live`, name), serverKey(`${name}-live-key`, `${name}-live`)];
}

export function gameConfig(name: string, spec: Record<string, unknown>): AnyManifest {
  return { apiVersion: API_VERSION, kind: 'GameConfig', metadata: { name, namespace: NAMESPACE }, spec } as AnyManifest;
}

/**
 * The usual fixture: project `alpha` (approved, every service) with environments `alpha-live` and
 * `alpha-test`; `pending` (awaiting review); `plain` (config and flags switched off). One server key
 * per environment, named `<environment>-key`.
 */
export function standardManifests(planOverrides: Partial<PlanLimits> = {}): Manifests {
  return [
    plan('test', planOverrides),
    project('alpha'),
    environment('alpha-live', 'alpha'),
    environment('alpha-test', 'alpha'),
    project('pending', { review: 'pending' }),
    environment('pending-live', 'pending'),
    project('plain', { services: { ...allServices, config: false, flags: false } }),
    environment('plain-live', 'plain'),
    serverKey('alpha-live-key', 'alpha-live'),
    serverKey('alpha-test-key', 'alpha-test'),
    serverKey('pending-live-key', 'pending-live'),
    serverKey('plain-live-key', 'plain-live'),
  ];
}

export function legalDocument(name: string, spec: Record<string, unknown>): AnyManifest {
  return { apiVersion: API_VERSION, kind: 'LegalDocument', metadata: { name, namespace: NAMESPACE }, spec } as AnyManifest;
}

export function tour(name: string, spec: Record<string, unknown>): AnyManifest {
  return { apiVersion: API_VERSION, kind: 'Tour', metadata: { name, namespace: NAMESPACE }, spec } as AnyManifest;
}

export function blogCategory(name: string, spec: Record<string, unknown>): AnyManifest {
  return { apiVersion: API_VERSION, kind: 'BlogCategory', metadata: { name, namespace: NAMESPACE }, spec } as AnyManifest;
}

export function blogPost(name: string, spec: Record<string, unknown>): AnyManifest {
  return { apiVersion: API_VERSION, kind: 'BlogPost', metadata: { name, namespace: NAMESPACE }, spec } as AnyManifest;
}

export function realm(name: string, spec: Record<string, unknown>): AnyManifest {
  return { apiVersion: API_VERSION, kind: 'Realm', metadata: { name, namespace: NAMESPACE }, spec } as AnyManifest;
}

export function currency(name: string, spec: Record<string, unknown>): AnyManifest {
  return { apiVersion: API_VERSION, kind: 'Currency', metadata: { name, namespace: NAMESPACE }, spec } as AnyManifest;
}

export function itemType(name: string, spec: Record<string, unknown>): AnyManifest {
  return { apiVersion: API_VERSION, kind: 'ItemType', metadata: { name, namespace: NAMESPACE }, spec } as AnyManifest;
}

export function cardType(name: string, spec: Record<string, unknown>): AnyManifest {
  return { apiVersion: API_VERSION, kind: 'CardType', metadata: { name, namespace: NAMESPACE }, spec } as AnyManifest;
}

export function cardTemplate(name: string, spec: Record<string, unknown>): AnyManifest {
  return { apiVersion: API_VERSION, kind: 'CardTemplate', metadata: { name, namespace: NAMESPACE }, spec } as AnyManifest;
}

export function product(name: string, spec: Record<string, unknown>): AnyManifest {
  return { apiVersion: API_VERSION, kind: 'Product', metadata: { name, namespace: NAMESPACE }, spec } as AnyManifest;
}

export function skillTree(name: string, spec: Record<string, unknown>): AnyManifest {
  return { apiVersion: API_VERSION, kind: 'SkillTree', metadata: { name, namespace: NAMESPACE }, spec } as AnyManifest;
}
