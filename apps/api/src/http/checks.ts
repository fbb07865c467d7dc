/**
 * The request pipeline's checks, each declared once: when it applies to a route and the refusals it
 * can answer. Two readers work from this one table, so they cannot drift apart:
 * - the pipeline runs a check only on the routes it applies to (`compileRoute` resolves them once per
 *   route, pipeline.ts acts on the result);
 * - /openapi.json documents, for every operation, the refusals of the checks that apply to it plus
 *   the route's own (`refusalsOf`).
 * test/api/openapi.test.ts provokes every refusal the document lists, on every route.
 *
 * Order per request (docs/api-conventions.md, Readings of the contract): route match → body size → credential → rate limits → credential
 * kind → dashboard permission → review → service switch → input validation → ETag → idempotency key → handler. The
 * sign-in that names its environment in its body learns it after input validation (environment
 * from body), and is counted, reviewed and switched from there; the crash upload, which names it in
 * its path, likewise (environment from path), and then counts its route limits (spec §8).
 */
import type { ErrorCode } from '@hearth/core';
import { type DashboardPermission, IdempotencyKey, type ServiceName } from '@hearth/core/contract';
import type { Principal } from '@hearth/core/auth';
import { BODY_LIMITS, type AnyRoute, type CredentialKind } from './route';

export interface PipelineCheck {
  /** The refusals the check answers. */
  readonly answers: readonly ErrorCode[];
  /** Whether requests of the route go through the check. */
  readonly appliesTo: (route: AnyRoute) => boolean;
}

export type PrincipalKind = Principal['kind'];
const PRINCIPAL_KINDS: readonly PrincipalKind[] = ['server', 'player', 'licence', 'dashboard'];

/**
 * The credentials each kind of route takes. A dashboard token reaches only the custom dashboards'
 * routes and the config and flags reads (spec §5 rule 2); every other route refuses it `forbidden`.
 */
export const CREDENTIALS_TAKEN: Readonly<Record<CredentialKind, readonly PrincipalKind[]>> = {
  none: [],
  server: ['server'],
  player: ['player'],
  either: ['server', 'player'],
  'either-or-dashboard': ['server', 'player', 'dashboard'],
  dashboard: ['dashboard'],
  /** The licence routes take an organisation's licence key, and no other route takes one (spec §5). */
  licence: ['licence'],
};

/** What a dashboard token needs in the environment to call a route that takes one. */
export function dashboardPermissionOf(route: AnyRoute): DashboardPermission {
  return route.dashboardPermission ?? 'open_dashboard';
}

/** Whether a route takes a credential of this kind. */
export function takesCredential(route: AnyRoute, kind: PrincipalKind): boolean {
  return CREDENTIALS_TAKEN[route.credential].includes(kind);
}

/**
 * Spec §4, §8: 1 to 128 printable ASCII characters. The pipeline validates the header with this
 * schema and the document shows it.
 */
export const IdempotencyKeyHeader = {
  name: 'Idempotency-Key',
  schema: IdempotencyKey,
} as const;

/** The game services (spec §4 "Game services"): a body to any of their routes is at most 16 KB. */
const GAME_SERVICES: ReadonlySet<string> = new Set<ServiceName>(['realms', 'inventory', 'cards', 'progression', 'stats']);

/**
 * The most a route's body may be, in bytes (spec §8): what the body-size check holds it to. A route
 * that names none has its service's: 16 KB for a game service's, else the default 64 KB.
 */
export function bodyLimitOf(route: AnyRoute): number {
  return route.bodyLimit ?? (route.service !== undefined && GAME_SERVICES.has(route.service) ? BODY_LIMITS.gameService : BODY_LIMITS.default);
}

/**
 * Routes that act in an environment: named by their credential, by their body's or path's app key, or
 * found by their handler (the refresh). The licence routes act for an organisation, in no environment,
 * so review and environment limits pass them by (spec §4: they stay open).
 */
function actsInEnvironment(route: AnyRoute): boolean {
  return (
    (route.credential !== 'none' && route.credential !== 'licence') ||
    route.environmentFrom === 'body-app-key' ||
    route.environmentFrom === 'path-app-key' ||
    route.environmentFrom === 'handler'
  );
}

export const CHECKS = {
  /**
   * Route match (app.ts): a request that no route takes (a known path asked with another method
   * included) is not-found. It never answers a request of a route, so no operation lists it.
   */
  routeMatch: { answers: ['not-found'], appliesTo: () => false },
  /**
   * From Content-Length before a byte is read, and counted while streaming when there is none. Every
   * route: one that ignores its body reads and drops it within the limit, one that streams it to its
   * handler fails the stream past it (body.ts), so no route is a way to stream without end.
   */
  bodySize: { answers: ['payload-too-large'], appliesTo: () => true },
  /** A missing, malformed, unknown, revoked or expired credential. */
  credential: { answers: ['unauthorized'], appliesTo: (route) => route.credential !== 'none' },
  /** Every request counts: against its environment once known, against its address otherwise, licence calls included (spec §8). */
  rateLimits: { answers: ['rate-limited'], appliesTo: () => true },
  /** A good credential of a kind the route does not take (spec §5 rule 2). */
  credentialKind: {
    answers: ['forbidden'],
    appliesTo: (route) => route.credential !== 'none' && PRINCIPAL_KINDS.some((kind) => !takesCredential(route, kind)),
  },
  /**
   * A dashboard token whose member does not hold the route's permission in the environment now
   * (removed, disabled, or never given it): read from the members on every call.
   */
  dashboardPermission: { answers: ['forbidden'], appliesTo: (route) => takesCredential(route, 'dashboard') },
  /** The identity-provider sign-in acts in the environment its body's app key names; no such environment is service-disabled (spec §7). */
  environmentFromBody: { answers: ['service-disabled'], appliesTo: (route) => route.environmentFrom === 'body-app-key' },
  /** The crash upload acts in the environment its path's app key names; no such environment is service-disabled (spec §4). */
  environmentFromPath: { answers: ['service-disabled'], appliesTo: (route) => route.environmentFrom === 'path-app-key' },
  /** The project awaits review, was not approved or is suspended. */
  review: { answers: ['project-not-approved'], appliesTo: actsInEnvironment },
  /** The project has not switched the route's service on (the players service names none: it is always on). */
  serviceSwitch: { answers: ['service-disabled'], appliesTo: (route) => route.service !== undefined },
  /**
   * Path, query and body against the route's schemas. Every route has some input to refuse: a route
   * without a query takes no query parameter, one without a body takes none but `{}`, and a body
   * must be JSON.
   */
  input: { answers: ['invalid-request'], appliesTo: () => true },
  /** The Idempotency-Key header: malformed, or missing where required; a key already used for another request. */
  idempotencyKey: {
    answers: ['invalid-request', 'idempotency-conflict'],
    appliesTo: (route) => route.idempotency === 'optional' || route.idempotency === 'required',
  },
} as const satisfies Record<string, PipelineCheck>;

export type CheckName = keyof typeof CHECKS;
const CHECK_NAMES = Object.keys(CHECKS) as CheckName[];

/** Which checks a route goes through, resolved once when the route is compiled. */
export type AppliedChecks = Readonly<Record<CheckName, boolean>>;

export function checksOf(route: AnyRoute): AppliedChecks {
  const applied = {} as Record<CheckName, boolean>;
  for (const name of CHECK_NAMES) applied[name] = (CHECKS[name] as PipelineCheck).appliesTo(route);
  return applied;
}

/**
 * Not a check but an outage: a route that reads or writes PostgreSQL answers 503 unavailable while
 * the database is out of reach (errors.ts answers it, one rule for every route). Those are the routes
 * that act in an environment and the licence routes (keys and seats); the OpenAPI document and the key
 * sets are served from memory. test/api/database-down.test.ts provokes it.
 */
export const DATABASE_OUTAGE = {
  answers: ['unavailable'],
  appliesTo: (route: AnyRoute) => actsInEnvironment(route) || route.credential === 'licence',
} as const satisfies PipelineCheck;

/** Every refusal a route can answer: its own, then those of the checks it goes through, then an outage's. */
export function refusalsOf(route: AnyRoute): ErrorCode[] {
  const codes = new Set<ErrorCode>(route.refusals);
  for (const check of [...CHECK_NAMES.map((name): PipelineCheck => CHECKS[name]), DATABASE_OUTAGE]) {
    if (check.appliesTo(route)) for (const code of check.answers) codes.add(code);
  }
  return [...codes];
}
