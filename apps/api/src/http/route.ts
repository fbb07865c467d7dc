/**
 * A route is data: this one object drives the router, the validators, the pipeline's checks and the
 * OpenAPI document. Every route of every area is declared with `defineRoute` (or `areaRoutes`, the
 * same with the area's tag and service said once).
 */
import type { Readable } from 'node:stream';
import type { Static, TSchema } from '@sinclair/typebox';
import type { ApiTag } from './tags';
import type { ErrorCode, IdempotencyScope, Logger } from '@hearth/core';
import type { HearthCore } from '@hearth/core/hearth';
import type { DashboardPermission, ServiceName } from '@hearth/core/contract';
import type { EnvironmentContext, PageKind } from '@hearth/core/tenancy';
import type { EnvironmentPrincipal, LicencePrincipal, Principal } from '@hearth/core/auth';
import type { Queryable } from '@hearth/core/db';
import type { RateCheck, RateOutcome } from '@hearth/core/coord';
import type { ApiMetrics } from './metrics';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/**
 * Who may call: `none`; `server` (server key); `player` (player access token); `either`;
 * `either-or-dashboard` for the reads the spec also opens to custom dashboards; `dashboard` for the
 * custom dashboards' own routes (CREDENTIALS_TAKEN in checks.ts; a dashboard token also needs its
 * route's `dashboardPermission` in the environment, on every call); `licence` (an organisation's
 * licence key: the licence routes only, in no environment).
 */
export type CredentialKind = 'none' | 'server' | 'player' | 'either' | 'either-or-dashboard' | 'dashboard' | 'licence';

export const KB = 1024;
export const MB = 1024 * 1024;
/** Spec §8 body limits, in bytes (binary units: docs/api-conventions.md, Readings of the contract). */
export const BODY_LIMITS = { default: 64 * KB, signIn: 16 * KB, gameService: 16 * KB, licence: 16 * KB, saveWrite: 512 * KB, crashUpload: 20 * MB };

/**
 * Rate-limit classes: `standard` counts against the credential's environment (or the caller's
 * address when there is no good credential); `idp-sign-in` adds the per-address limit of the
 * environment the body names.
 */
export type RateLimitClass = 'standard' | 'idp-sign-in';

/** What a handler answers; `T` is its route's success schema's Static<>, checked by the compiler. */
export interface HandlerResult<T = unknown> {
  status?: number;
  body?: T;
  headers?: Record<string, string>;
  /** Routes that keep their Idempotency-Key record (`idempotencyRecord: 'handler'`): the answer is a replay. */
  replayed?: boolean;
}

export interface RequestInfo {
  ip: string;
  host: string;
  protocol: string;
  requestId: string;
}

/** Where a route's environment comes from (see RouteSpec.environmentFrom). */
export type EnvironmentSource = 'credential' | 'body-app-key' | 'path-app-key' | 'handler';

/** Who calls a route of this credential kind, as the pipeline has checked before the handler runs. */
export type PrincipalOf<C extends CredentialKind> = C extends 'player'
  ? Extract<Principal, { kind: 'player' }>
  : C extends 'server'
    ? Extract<Principal, { kind: 'server' }>
    : C extends 'either'
      ? Extract<Principal, { kind: 'server' | 'player' }>
      : C extends 'either-or-dashboard'
        ? EnvironmentPrincipal
        : C extends 'dashboard'
          ? Extract<Principal, { kind: 'dashboard' }>
          : C extends 'licence'
            ? LicencePrincipal
            : null;

/**
 * The environment known before the handler runs: the credential's, the body's app key on the
 * identity-provider sign-in, or the path's on the crash upload. Other routes without a credential
 * learn theirs in the handler, if at all; licence routes act in none.
 */
export type EnvironmentOf<C extends CredentialKind, F extends EnvironmentSource | undefined> = C extends 'none' | 'licence'
  ? F extends 'body-app-key' | 'path-app-key'
    ? EnvironmentContext
    : null
  : EnvironmentContext;

type IdempotencyMode = 'none' | 'optional' | 'required';
type IdempotencyRecordMode = 'pipeline' | 'handler';

/**
 * The record a handler keeps itself (`idempotencyRecord: 'handler'`): always there when the key is
 * required (the pipeline refused a request without one), maybe when optional, never otherwise.
 */
export type IdempotencyOf<I extends IdempotencyMode | undefined, R extends IdempotencyRecordMode | undefined> = R extends 'handler'
  ? I extends 'required'
    ? IdempotencyScope
    : IdempotencyScope | undefined
  : undefined;

/**
 * What a handler sees of its request, typed by its route's credential `C` and environment source `F`:
 * a handler never has to check what the pipeline has already checked. The defaults give the context
 * of any route, for code that serves them all.
 */
export interface HandlerContext<
  P,
  Q,
  B,
  C extends CredentialKind = CredentialKind,
  F extends EnvironmentSource | undefined = EnvironmentSource | undefined,
  I extends IdempotencyMode | undefined = IdempotencyMode | undefined,
  R extends IdempotencyRecordMode | undefined = IdempotencyRecordMode | undefined,
> {
  params: P;
  query: Q;
  body: B;
  headers: Record<string, string | string[] | undefined>;
  /** Who is calling: the player on `player` routes, the server key on `server` routes, null on `none`. */
  principal: PrincipalOf<C>;
  /** The environment the request acts in (from the credential, or from the body for the identity-provider sign-in). */
  env: EnvironmentOf<C, F>;
  core: HearthCore;
  /** The pool, or the idempotency transaction on idempotent routes: write through this. */
  db: Queryable;
  /**
   * On routes with `idempotencyRecord: 'handler'`, when the request carries an Idempotency-Key: the
   * record the handler's effect must keep in its own statement (scope and fingerprint as the pipeline
   * makes them for every route).
   */
  idempotency: IdempotencyOf<I, R>;
  log: Logger;
  request: RequestInfo;
  /**
   * What was asked, for a conditional read's ETag: the route, its path parameters and query,
   * the same string for every request of the same URL.
   */
  ask: string;
  /**
   * For routes that learn their environment late (sign-ins, refresh): counts the request against the
   * environment's limits and applies its review and service checks.
   */
  enterEnvironment(env: EnvironmentContext, credentialKey: string): Promise<void>;
  /**
   * A route limit the handler counted itself (the support filings' hour, kept in the database): its
   * standing goes into the X-RateLimit-* headers when it is nearer to refusing than the request limits.
   */
  noteLimit(standing: RateOutcome['nearest']): void;
  /**
   * The body of a `stream` route, unread: the handler pipes it where it goes. It is held to the
   * route's limit while it streams (it fails with payload-too-large past it) and fails with
   * invalid-request when the client cuts it off; null when the request has none (no body, or a
   * declared length of 0). Only `stream` routes have one.
   */
  bodyStream(): Readable | null;
  /** The API's metrics (its registry), for what a route counts of its own. */
  metrics: ApiMetrics;
}

/** The body a route's handler answers: its success schema's Static<> (routes without one answer none: the contract test holds them to that). */
export type AnswerOf<S extends TSchema | undefined> = S extends TSchema ? Static<S> : unknown;

export interface RouteSpec<
  P extends TSchema | undefined = TSchema | undefined,
  Q extends TSchema | undefined = TSchema | undefined,
  B extends TSchema | undefined = TSchema | undefined,
  C extends CredentialKind = CredentialKind,
  F extends EnvironmentSource | undefined = EnvironmentSource | undefined,
  S extends TSchema | undefined = TSchema | undefined,
  I extends IdempotencyMode | undefined = IdempotencyMode | undefined,
  R extends IdempotencyRecordMode | undefined = IdempotencyRecordMode | undefined,
> {
  operationId: string;
  method: Method;
  /** Relative to the base URL (which ends in /v1), with `:name` parameters. */
  path: string;
  summary: string;
  description?: string;
  /**
   * The API area it belongs to (tags.ts): its group in the OpenAPI document. Every route has one
   * (AnyRoute); a route of an area (areaRoutes) may leave it to the area.
   */
  tag?: ApiTag;
  credential: C;
  /**
   * What a dashboard token needs in the environment to call the route (routes that take one); the
   * default is `open_dashboard`, which the spec names for the config and flags reads.
   */
  dashboardPermission?: DashboardPermission;
  /** The service switch the route needs; the players service is always on and names none. */
  service?: ServiceName;
  /**
   * `body-app-key`: the environment is the body's `appKey` (the identity-provider sign-in);
   * `path-app-key`: the path's `:appKey` (the crash upload). No such environment is service-disabled.
   */
  environmentFrom?: F;
  /**
   * Which web pages may call the route from a browser (docs/api-conventions.md "Browsers (CORS)"):
   * `game` (the environment's `spec.cors.allowedOrigins`), `dashboard` (its project's dashboard's
   * origins), or none. The default follows the credential (cors.ts `pagesOf`); a route without a
   * credential that serves a dashboard (its sign-in) names it.
   */
  pages?: readonly PageKind[];
  params?: P;
  query?: Q;
  body?: B;
  /**
   * `ignored`: any body or none is accepted and not read (spec: "any body ignored"). `stream`: the
   * body is not read by the pipeline but handed to the handler as a stream (`ctx.bodyStream()`),
   * still held to `bodyLimit`; the document shows it as application/octet-stream.
   */
  bodyMode?: 'json' | 'ignored' | 'stream';
  bodyLimit?: number;
  rateLimit?: RateLimitClass;
  /**
   * The route's own rate limits (spec §8 "Route limits") in its environment, counted by the pipeline
   * once the environment passed its review and service checks, before the handler runs; a request
   * over one is refused 429 and counted in none of them.
   */
  routeLimits?: (env: EnvironmentContext, ip: string) => RateCheck[];
  idempotency?: I;
  /**
   * Who keeps the Idempotency-Key's record: the pipeline (default: runIdempotent opens a transaction
   * around the handler, ctx.db) or the handler (`ctx.idempotency`), whose effect claims and answers the
   * record in the statement that makes it: one round trip for the hottest writes (currency moves).
   */
  idempotencyRecord?: R;
  /**
   * What a replayed answer (a retry under the same Idempotency-Key) says differently from the first,
   * e.g. a Movement's `replayed: true`; the stored answer itself is kept as the first was.
   */
  onReplay?: (body: unknown) => unknown;
  /**
   * Conditional reads: the ETag of what this request would answer, computed before the handler to
   * answer 304 from the caches. `ask` names what was asked (ctx.ask). A handler of such a route
   * answers the ETag of its body itself (an `ETag` header), read from the same snapshot as the body.
   */
  etag?: (ctx: HandlerContext<Static<NonNullable<P>>, Static<NonNullable<Q>>, unknown, C, F>, ask: string) => Promise<string>;
  /**
   * The success answer. The handler's `body` must be its schema's Static<> (a field added to the
   * schema and not to what the handler answers, or the other way round, does not compile).
   */
  success: { status: number; description: string; schema?: S; also?: { status: number; description: string }[] };
  /**
   * What the success answer gives the routes that come after it, as OpenAPI links (clients and the
   * fuzzer's stateful phase follow them): see RouteLink. The document derives one link per target.
   */
  links?: RouteLink[];
  /**
   * Refusals of the route's own logic. The document adds those of the pipeline's checks that apply
   * to the route (CHECKS in checks.ts): list here only what the handler answers.
   */
  refusals: ErrorCode[];
  handler: (
    ctx: HandlerContext<
      P extends TSchema ? Static<P> : Record<string, never>,
      Q extends TSchema ? Static<Q> : Record<string, never>,
      B extends TSchema ? Static<B> : undefined,
      C,
      F,
      I,
      R
    >,
  ) => Promise<HandlerResult<AnswerOf<S>>>;
}

/**
 * Values of this answer (or of its request) for the path parameters of later routes, as OpenAPI runtime
 * expressions (`$response.body#/player/id`, `$request.path.key`). Without `to`, the link goes to every
 * route whose path takes all of `parameters` and that no earlier entry of the same route links to;
 * with `to`, to those operations only.
 */
export interface RouteLink {
  parameters: Record<string, string>;
  to?: string[];
}

export type AnyRoute = RouteSpec<
  TSchema | undefined,
  TSchema | undefined,
  TSchema | undefined,
  CredentialKind,
  EnvironmentSource | undefined,
  TSchema | undefined
> &
  Pick<RouteArea, 'tag'>;

/**
 * Declares a route (its types checked against each other: the handler's context from the schemas,
 * its answer against the success schema). `Given` names what the definer fills in itself, which a
 * route may then leave out: nothing for defineRoute, the tag for an area's (areaRoutes).
 */
export interface RouteDefiner<Given extends keyof RouteArea = never> {
  <
    P extends TSchema | undefined,
    Q extends TSchema | undefined,
    B extends TSchema | undefined,
    C extends CredentialKind,
    F extends EnvironmentSource | undefined = undefined,
    S extends TSchema | undefined = undefined,
    I extends IdempotencyMode | undefined = undefined,
    R extends IdempotencyRecordMode | undefined = undefined,
  >(
    spec: RouteSpec<P, Q, B, C, F, S, I, R> & Pick<RouteArea, Exclude<'tag', Given>>,
  ): AnyRoute;
}

export const defineRoute: RouteDefiner = (spec) => spec as unknown as AnyRoute;

/** What an area's routes share: their group in the OpenAPI document and the service switch they need. */
export interface RouteArea {
  tag: ApiTag;
  /** None for an area that is always on (players, auth). */
  service?: ServiceName;
}

/**
 * `defineRoute` for the routes of one area, which say their tag and service once, in the area's
 * area.ts: `export const commerceRoute = areaRoutes({ tag: 'commerce', service: 'commerce' })`. A
 * route that belongs elsewhere (another tag, another switch) still names its own, and so do the
 * spread helpers (playerPage, listedForEnvironment, engineMove): their values win.
 */
export function areaRoutes(area: RouteArea): RouteDefiner<'tag'> {
  return (spec) => ({ ...area, ...spec }) as unknown as AnyRoute;
}
