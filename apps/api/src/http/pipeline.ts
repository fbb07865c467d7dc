/**
 * The request pipeline every route goes through. Which checks a route goes through, and what each
 * can answer, is declared once in checks.ts (the document reads the same table); this file carries
 * them out, in the order given there: route match → body size → credential → rate limits →
 * credential kind → review → service switch → input validation → ETag → idempotency key →
 * handler.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import type { TSchema } from '@sinclair/typebox';
import type { ValidateFunction } from 'ajv';
import {
  Refusal,
  type Logger,
  TtlCache,
  createAjv,
  describe,
  fieldOf,
  firstError,
  fingerprintOf,
  refuse,
  runIdempotent,
  type IdempotencyScope,
} from '@hearth/core';
import type { HearthCore } from '@hearth/core/hearth';
import { type EnvironmentContext, environmentRefusal, type PageKind } from '@hearth/core/tenancy';
import type { Queryable } from '@hearth/core/db';
import { type Principal, type EnvironmentPrincipal, looksLikeServerKey } from '@hearth/core/auth';
import { type RateCheck, type RateOutcome, addressChecks } from '@hearth/core/coord';
import { looksLikeLicenceKey } from '@hearth/core/licence';
import { looksLikeDashboardToken } from '@hearth/core/dashboards';
import { type AnyRoute, type HandlerContext, type HandlerResult, type RequestInfo } from './route';
import {
  type AppliedChecks,
  CREDENTIALS_TAKEN,
  IdempotencyKeyHeader,
  type PrincipalKind,
  bodyLimitOf,
  checksOf,
  dashboardPermissionOf,
  takesCredential,
} from './checks';
import { applyTrim, hasTrim } from './schema-helpers';
import { declaredTooLarge, hasBody, limitedBodyStream, readBody } from './body';
import { bearerOf } from './credentials';
import type { ApiMetrics } from './metrics';
import type { Exchange } from './exchange';
import { DASHBOARD_PAGES, GAME_PAGES, pagesOf } from './cors';

/** Conditional reads' answers kept serialized (Pipeline.answers): how many, how long, how large each. */
const ANSWERS_KEPT = 500;
const ANSWER_TTL_MS = 10 * 60_000;
const ANSWER_KEPT_MAX_BYTES = 64 * 1024;

const inputAjv = createAjv({ coerceTypes: true });
const bodyAjv = createAjv();
const validIdempotencyKey = bodyAjv.compile(IdempotencyKeyHeader.schema);

/** How a client sends a token, as the spec writes it (bearerOf takes any case and more spaces). */
const BEARER_PREFIX = 'Bearer ';

const CREDENTIAL_NAMES: Record<PrincipalKind, string> = {
  server: 'a server key',
  player: 'a player token',
  licence: 'a licence key',
  dashboard: 'a dashboard token',
};

export interface CompiledRoute {
  route: AnyRoute;
  /** The checks of checks.ts this route goes through. */
  checks: AppliedChecks;
  /** The validators of its path parameters, query and body, each compiled by the first request that needs it. */
  params?: () => ValidateFunction;
  query?: () => ValidateFunction;
  body?: () => ValidateFunction;
  trimBody: boolean;
  bodyLimit: number;
  /** The web pages that may call it from a browser (cors.ts). */
  pages: readonly PageKind[];
  /**
   * A conditional read's ask (askOf) by the request's URL as sent: a URL always names the same ask,
   * and polling clients send the same few URLs, so the ask is serialized once and the same string
   * (its hash kept by V8) keys every cache lookup after it.
   */
  asks: Map<string, string>;
}

/** Distinct URLs whose ask a route remembers (a flood of distinct URLs only resets the memo). */
const ASKS_KEPT = 1_000;
/** Longer URLs (a long cursor, a padded query) are not remembered: the memo stays small. */
const ASK_URL_KEPT_MAX_CHARS = 512;

/**
 * A validator compiled when first asked for. ajv takes about 2 ms a schema, so compiling all 110
 * routes' took 0.2 s of every process start and every test harness, for routes most of them never
 * serve; the first request of a route pays its own instead.
 */
function compiledOnUse(ajv: typeof inputAjv, schema: TSchema | undefined): (() => ValidateFunction) | undefined {
  if (!schema) return undefined;
  let validator: ValidateFunction | undefined;
  return () => (validator ??= ajv.compile(schema));
}

export function compileRoute(route: AnyRoute): CompiledRoute {
  return {
    route,
    checks: checksOf(route),
    params: compiledOnUse(inputAjv, route.params),
    query: compiledOnUse(inputAjv, route.query),
    body: compiledOnUse(bodyAjv, route.body),
    trimBody: hasTrim(route.body),
    bodyLimit: bodyLimitOf(route),
    pages: pagesOf(route),
    asks: new Map(),
  };
}

/**
 * What a request of a conditional read asked (its operation, path parameters and query) as one
 * string: the `ask` a route's `etag` is given and its handler names (ctx.ask), remembered by the URL.
 */
function askOf(compiled: CompiledRoute, url: string, params: unknown, query: unknown): string {
  let ask = compiled.asks.get(url);
  if (ask === undefined) {
    ask = JSON.stringify([compiled.route.operationId, params, query]);
    if (url.length > ASK_URL_KEPT_MAX_CHARS) return ask;
    if (compiled.asks.size >= ASKS_KEPT) compiled.asks.clear();
    compiled.asks.set(url, ask);
  }
  return ask;
}

function validate(fn: ValidateFunction, value: unknown, prefix: string): void {
  if (!fn(value)) {
    const error = firstError(fn);
    const field = fieldOf(error, prefix);
    throw new Refusal('invalid-request', `${field} ${describe(error)}.`, { field });
  }
  refuseNul(value, prefix);
}

/** A high surrogate not followed by a low one, or a low one not after a high one (String#isWellFormed, ES2024). */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * No text the API keeps may hold U+0000: PostgreSQL's text cannot store it (it refuses the whole
 * statement, which was a 500 until the fuzzer found it: docs/reliability.md). Refused for every input,
 * keys of free-form objects included, with the field that holds it (docs/api-conventions.md).
 * Nor a lone UTF-16 surrogate (JSON's `"\ud800"`): it is not Unicode, so it cannot be stored as sent.
 * Accepted, PostgreSQL kept U+FFFD in its place, so the sign-in subjects "a\ud800b" and "a\udc00b"
 * became one player, and a save read back other than written (test/security/api8-misconfiguration.test.ts).
 */
function refuseNul(value: unknown, field: string): void {
  if (typeof value === 'string') {
    if (value.includes('\u0000')) throw refuse.invalid(field, `${field} must not contain the NUL character (U+0000).`);
    if (LONE_SURROGATE.test(value)) throw refuse.invalid(field, `${field} must be Unicode text (it holds a lone surrogate).`);
  } else if (Array.isArray(value)) {
    value.forEach((item, i) => refuseNul(item, `${field}[${i}]`));
  } else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      if (key.includes('\u0000')) throw refuse.invalid(field, `${field} must not have a key containing the NUL character (U+0000).`);
      if (LONE_SURROGATE.test(key)) throw refuse.invalid(field, `${field} must not have a key holding a lone surrogate.`);
      refuseNul(item, `${field}.${key}`);
    }
  }
}

export function environmentChecks(env: EnvironmentContext, credentialKey: string): RateCheck[] {
  const tag = `{e${env.id}}`; // one hash tag per environment keeps the Lua call on one Cluster slot
  return [
    { name: 'environment-minute', key: `${tag}:m`, limit: env.plan.requestsPerMinutePerEnvironment, windowSeconds: 60 },
    { name: 'credential-minute', key: `${tag}:c:${credentialKey}`, limit: env.plan.requestsPerMinutePerCredential, windowSeconds: 60 },
    { name: 'environment-day', key: `${tag}:d`, limit: env.plan.requestsPerDayPerEnvironment, windowSeconds: 86_400 },
  ];
}

/** How many credentials' check lists a process keeps (a flood of new credentials only resets the memo). */
const CHECK_LISTS_KEPT = 10_000;

/**
 * The same credential in the same environment asks the same checks on every request: the list is made
 * once and kept while the environment (its plan) is the same object, so the coordination can keep what
 * it derives from the list (its counters' keys in the current window) by the list's identity.
 */
class CheckLists {
  private readonly lists = new Map<string, { env: EnvironmentContext; checks: RateCheck[] }>();

  of(env: EnvironmentContext, credentialKey: string): RateCheck[] {
    const key = `${env.id}|${credentialKey}`;
    const kept = this.lists.get(key);
    if (kept && kept.env === env) return kept.checks;
    if (!kept && this.lists.size >= CHECK_LISTS_KEPT) this.lists.clear();
    const checks = environmentChecks(env, credentialKey);
    this.lists.set(key, { env, checks });
    return checks;
  }
}

export function credentialKeyOf(principal: EnvironmentPrincipal): string {
  switch (principal.kind) {
    case 'server':
      return `k:${principal.keyId}`;
    case 'player':
      return `p:${principal.playerId}`;
    case 'dashboard':
      return `d:${principal.accountId}`;
  }
}

export class Pipeline {
  constructor(
    readonly core: HearthCore,
    readonly metrics: ApiMetrics,
  ) {
    this.answers = new TtlCache(ANSWER_TTL_MS, ANSWERS_KEPT, core.clock);
  }

  private readonly checkLists = new CheckLists();

  /** The request limits of a credential in an environment (spec §8). */
  environmentChecks(env: EnvironmentContext, credentialKey: string): RateCheck[] {
    return this.checkLists.of(env, credentialKey);
  }

  /** Checks and counts limits; a refusal throws 429. The outcome feeds the X-RateLimit headers. */
  async limit(exchange: { rate?: RateOutcome }, checks: RateCheck[]): Promise<RateOutcome> {
    this.metrics.countRateLimitChecks(checks);
    let outcome: RateOutcome;
    try {
      outcome = await this.core.coordination.rateLimit(checks, this.core.clock.now()); // the windows of the core's clock
    } catch (err) {
      // Redis down: keep serving (limits fail open), say so in a metric and the log.
      this.metrics.rateLimitFailOpen.inc();
      this.core.logger.warn({ err: (err as Error).message }, 'rate limits unavailable; failing open');
      const first = checks[0];
      outcome = { allowed: true, nearest: { name: first.name, limit: first.limit, remaining: first.limit, resetSeconds: first.windowSeconds } };
    }
    exchange.rate = outcome;
    if (!outcome.allowed) {
      this.metrics.rateLimited.inc({ limit: outcome.nearest.name });
      const retry = Math.max(1, outcome.nearest.resetSeconds);
      throw new Refusal(
        'rate-limited',
        `Too many requests (${outcome.nearest.name}); retry in ${retry} s.`,
        { retryAfterSeconds: retry },
        { 'Retry-After': String(retry) },
      );
    }
    return outcome;
  }

  /**
   * A route's own limits, counted after the request limits: the X-RateLimit headers keep whichever
   * standing is nearer to refusing (a refusal names the refusing limit).
   */
  async limitRoute(exchange: { rate?: RateOutcome }, checks: RateCheck[]): Promise<void> {
    const before = exchange.rate;
    const after = await this.limit(exchange, checks);
    if (before && nearer(before.nearest, after.nearest)) exchange.rate = before;
  }

  /** Review and service switch of the environment a request acts in (every request that has one is reviewed). */
  checkEnvironment(env: EnvironmentContext, { route, checks }: CompiledRoute): void {
    const refusal = environmentRefusal(env, checks.serviceSwitch ? route.service : undefined);
    if (refusal) throw refusal;
  }

  /**
   * The serialized answers of conditional reads, by ETag (with the route and environment each was
   * kept for, checked on every hit). A strong ETag names one answer (the content version and exactly
   * what was asked), the same for every caller of the environment: it is serialized once per content
   * version, not per request. Keyed by the ETag string alone, a hit builds no key: the content
   * services hand out the same ETag string for the same ask and version (AskDigests), and V8 keeps its
   * hash. A change of version makes new ETags; the old entries age out.
   */
  private readonly answers: TtlCache<string, KeptAnswer>;

  /**
   * Runs one request of a matched route, leaving the answer on the exchange (errors are thrown). One
   * async function from the route's checks to its answer: each layer of awaiting costs every request.
   */
  async run(exchange: Exchange, compiled: CompiledRoute): Promise<void> {
    try {
      const { route, checks } = compiled;
      exchange.routeTemplate = route.path;

      // Body size, before reading a byte of it (routes that ignore their body too).
      if (checks.bodySize && declaredTooLarge(exchange, compiled.bodyLimit)) {
        // Refused before its credential is read, so it counts like a request without one (and carries X-RateLimit-*).
        await this.limit(exchange, addressChecks(exchange.ip));
        throw refuse.tooLarge(compiled.bodyLimit);
      }

      // Credential, rate limits, review, service switch.
      let principal: Principal | null = null;
      let env: EnvironmentContext | null = null;
      if (checks.credential) {
        const authorization = exchange.header('authorization');
        // A token whose checks are all cached is answered without waiting (the hot path). Sent as
        // "Bearer <token>", it is looked up before the header is parsed: whatever the caches answer for
        // is a token verified before (a JWT, which the grammar of bearerOf always takes).
        const sent = authorization.startsWith(BEARER_PREFIX) ? authorization.slice(BEARER_PREFIX.length) : undefined;
        let known = sent !== undefined ? this.core.authenticator.peek(sent) : undefined;
        let credential: string | null = known !== undefined ? (sent ?? null) : null;
        let problem: string | undefined;
        if (known === undefined) {
          ({ credential, problem } = bearerOf(authorization));
          // The same credential was peeked at just above (a server key, a token not cached yet): not again.
          known = !credential ? null : credential === sent ? undefined : this.core.authenticator.peek(credential);
        }
        principal = known !== undefined ? known : credential ? await this.core.authenticator.authenticate(credential) : null;
        if (!principal) {
          // invalid: unknown, revoked, expired, a refresh token, or a deleted or signed-out player (the authenticator does not say which).
          const outcome = credential ? 'invalid' : authorization === '' ? 'missing' : 'malformed';
          this.metrics.countCredential(credential ? credentialKindOf(credential) : 'unknown', outcome);
          await this.limit(exchange, addressChecks(exchange.ip));
          throw refuse.unauthorized(problem ?? 'The credential is not valid.');
        }
        if (principal.kind === 'licence') {
          // An organisation's licence call counts against the caller's address, not an environment (spec §8).
          await this.limit(exchange, addressChecks(exchange.ip));
        } else {
          env = principal.environment;
          exchange.environment = env;
          // The config and flags reads serve a game's pages and a dashboard's: the credential says which.
          if (route.credential === 'either-or-dashboard') exchange.pages = principal.kind === 'dashboard' ? DASHBOARD_PAGES : GAME_PAGES;
          await this.limit(exchange, this.environmentChecks(env, credentialKeyOf(principal)));
        }
        if (checks.credentialKind && !takesCredential(route, principal.kind)) {
          this.metrics.countCredential(principal.kind, 'wrong-kind');
          throw refuse.forbidden(`This route takes ${CREDENTIALS_TAKEN[route.credential].map((kind) => CREDENTIAL_NAMES[kind]).join(' or ')}.`);
        }
        if (checks.dashboardPermission && principal.kind === 'dashboard' && !principal.permissions.includes(dashboardPermissionOf(route))) {
          this.metrics.countCredential(principal.kind, 'no-permission');
          throw refuse.forbidden(`This dashboard account does not hold ${dashboardPermissionOf(route)} in this environment.`);
        }
        this.metrics.countCredential(principal.kind, 'accepted');
        if (env) this.checkEnvironment(env, compiled);
      } else if (!checks.environmentFromBody) {
        await this.limit(exchange, addressChecks(exchange.ip));
      }

      // Inputs.
      const params = { ...exchange.params };
      if (compiled.params) validate(compiled.params(), params, 'path');
      const query: Record<string, unknown> = exchange.query();
      if (compiled.query) validate(compiled.query(), query, 'query');
      else {
        const unknown = Object.keys(query)[0];
        if (unknown !== undefined) throw refuse.invalid(`query.${unknown}`, `query.${unknown} is not taken by this route.`);
      }
      // A streamed body is left unread for the handler (ctx.bodyStream()), held to the same limit. A
      // request without one (every read) does not wait a turn for it.
      const body = route.bodyMode === 'stream' || !hasBody(exchange) ? undefined : await readBody(exchange, compiled.bodyLimit, route.bodyMode);
      let input: unknown = body;
      if (compiled.body) {
        input = body === undefined ? {} : body;
        if (compiled.trimBody) input = applyTrim(route.body, input);
        validate(compiled.body(), input, 'body');
      } else if (route.bodyMode !== 'ignored' && body !== undefined && !isEmptyObject(body)) {
        const field = typeof body === 'object' && body !== null && !Array.isArray(body) ? `body.${Object.keys(body)[0]}` : 'body';
        throw refuse.invalid(field, `${field} is not taken by this route.`);
      }

      // The identity-provider sign-in names its environment in the body.
      if (checks.environmentFromBody) {
        const appKey = (input as { appKey: string }).appKey;
        env = await this.core.environments.byAppKey(appKey);
        exchange.environment = env;
        await this.limit(exchange, addressChecks(exchange.ip, route.rateLimit === 'idp-sign-in' ? (env ?? undefined) : undefined));
        if (!env) throw new Refusal('service-disabled', 'No environment has that app key.');
        this.checkEnvironment(env, compiled);
      }

      // The crash upload names its environment in its path.
      if (checks.environmentFromPath) {
        env = await this.core.environments.byAppKey((params as { appKey: string }).appKey);
        exchange.environment = env;
        if (!env) throw new Refusal('service-disabled', 'No environment has that app key.');
        this.checkEnvironment(env, compiled);
      }

      // The route's own limits, in an environment that takes the request.
      if (route.routeLimits && env) await this.limitRoute(exchange, route.routeLimits(env, exchange.ip));

      const handlerContext = new RequestContext(this, exchange, compiled, params, query, input, principal, env, this.core.db);

      // Conditional reads: 304 when the client holds the answer, the answer as serialized before when we do.
      let etag: string | undefined;
      if (route.etag) {
        etag = await route.etag(handlerContext as never, handlerContext.ask);
        exchange.setHeader('ETag', etag);
        if (ifNoneMatch(exchange.header('if-none-match'), etag)) {
          exchange.status = 304;
          return;
        }
        const kept = this.answers.get(etag);
        if (kept !== undefined && kept.route === route && kept.environmentId === env?.id) {
          exchange.status = route.success.status;
          exchange.serialized = kept.bytes;
          return;
        }
      }

      const result = await this.runHandler(exchange, compiled, handlerContext);
      exchange.status = result.status ?? route.success.status;
      if (result.headers) exchange.setHeaders(result.headers);
      exchange.body = exchange.status === 204 ? null : result.body;
      if (etag !== undefined && exchange.status === route.success.status && exchange.body != null) {
        // A handler that read its body and ETag from one snapshot names that ETag (the content may have
        // moved on since the pipeline's): the answer is kept under the ETag it was read with. An answer
        // with any other header of its own is not kept.
        const keptUnder = keptAnswerEtag(etag, result.headers);
        if (keptUnder !== undefined) {
          // Kept as UTF-8 bytes: a kept answer is sent many times, and bytes are neither measured nor encoded again.
          const bytes = Buffer.from(JSON.stringify(exchange.body));
          exchange.serialized = bytes;
          if (bytes.length <= ANSWER_KEPT_MAX_BYTES) this.answers.set(keptUnder, { route, environmentId: env?.id, bytes });
        }
      }
    } catch (err) {
      // Every request is counted and every answer carries X-RateLimit-* (spec §4, §8): one that ended
      // before it was counted (a sign-in refused on the input that names its environment, a credential
      // that could not be checked because the database is out of reach) counts by address. A 429 from
      // that count answers instead: the address is over its limit either way.
      if (exchange.rate === undefined) await this.limit(exchange, addressChecks(exchange.ip));
      throw err;
    }
  }

  private async runHandler(exchange: Exchange, compiled: CompiledRoute, hc: RequestContext): Promise<HandlerResult> {
    const { route } = compiled;
    if (!compiled.checks.idempotencyKey) return route.handler(hc);
    const key = exchange.header('idempotency-key');
    const field = `header.${IdempotencyKeyHeader.name}`;
    // Only an absent header means "no key": one sent empty (or blank, which node's parser trims to
    // empty) is a malformed key, refused below, not a request without one.
    if (key === '' && exchange.req.headers['idempotency-key'] === undefined) {
      if (route.idempotency === 'required') throw refuse.invalid(field, `${field} is required on this route.`);
      return route.handler(hc);
    }
    if (!validIdempotencyKey(key)) throw refuse.invalid(field, `${field} must be ${IdempotencyKeyHeader.schema.description}.`);
    try {
      const result = await this.runIdempotentHandler(compiled, hc, key);
      this.metrics.idempotency.inc({ outcome: result.headers?.['Idempotent-Replayed'] === 'true' ? 'replayed' : 'first' });
      return result;
    } catch (err) {
      if (err instanceof Refusal && err.code === 'idempotency-conflict') this.metrics.idempotency.inc({ outcome: 'conflict' });
      throw err;
    }
  }

  /** The handler at most once per key (the caller validated the key). */
  private async runIdempotentHandler({ route }: CompiledRoute, hc: RequestContext, key: string): Promise<HandlerResult> {
    const principal = hc.principal;
    // Every idempotent route acts in an environment (its credential's); records are kept per environment.
    if (!hc.env) throw new Error(`${route.operationId}: an idempotent route without an environment`);
    const record: IdempotencyScope = {
      environmentId: hc.env.id,
      scope: principal?.kind === 'player' ? `p:${principal.playerId}` : 'server',
      key,
      fingerprint: fingerprintOf([route.operationId, hc.params, hc.query, hc.body]),
    };
    if (route.idempotencyRecord === 'handler') {
      // The handler's effect keeps the record in its own statement and says whether it replayed.
      const result = await route.handler(hc.withIdempotency(record));
      return { ...result, headers: { ...result.headers, 'Idempotent-Replayed': String(result.replayed === true) } };
    }
    // The handler gets the idempotency transaction as ctx.db and hands it to every core function it
    // calls: its effect, their after-commit announcements and the record commit or roll back together.
    const answer = await runIdempotent(hc.db, record, async (trx) => {
      const result = await route.handler(hc.withDb(trx));
      return { status: result.status ?? route.success.status, body: result.body ?? null };
    });
    const body = answer.replayed && route.onReplay ? route.onReplay(answer.body) : answer.body;
    return { status: answer.status, body: answer.status === 204 ? undefined : body, headers: { 'Idempotent-Replayed': String(answer.replayed) } };
  }
}

/**
 * What a handler sees of its request. A class, so that a request makes one object and no closures; the
 * request's logger and address are made when a handler first asks (most never do).
 */
class RequestContext implements HandlerContext<unknown, unknown, unknown> {
  private logger?: Logger;
  private info?: RequestInfo;

  constructor(
    private readonly pipeline: Pipeline,
    private readonly exchange: Exchange,
    private readonly compiled: CompiledRoute,
    readonly params: unknown,
    readonly query: unknown,
    readonly body: unknown,
    readonly principal: Principal | null,
    readonly env: EnvironmentContext | null,
    readonly db: Queryable,
    readonly idempotency: IdempotencyScope | undefined = undefined,
  ) {}

  get core(): HearthCore {
    return this.pipeline.core;
  }

  get headers(): IncomingHttpHeaders {
    return this.exchange.req.headers;
  }

  get log(): Logger {
    return (this.logger ??= this.core.logger.child({ requestId: this.exchange.requestId }));
  }

  get ask(): string {
    return (this.asked ??= askOf(this.compiled, this.exchange.req.url ?? '', this.params, this.query));
  }
  private asked?: string;

  get request(): RequestInfo {
    const { exchange } = this;
    return (this.info ??= { ip: exchange.ip, host: exchange.host, protocol: exchange.protocol, requestId: exchange.requestId });
  }

  async enterEnvironment(environment: EnvironmentContext, credentialKey: string): Promise<void> {
    this.exchange.environment = environment;
    await this.pipeline.limit(this.exchange, this.pipeline.environmentChecks(environment, credentialKey));
    this.pipeline.checkEnvironment(environment, this.compiled);
  }

  noteLimit(standing: RateOutcome['nearest']): void {
    const current = this.exchange.rate;
    if (!current || nearer(standing, current.nearest)) this.exchange.rate = { allowed: current?.allowed ?? true, nearest: standing };
  }

  bodyStream(): Readable | null {
    if (this.compiled.route.bodyMode !== 'stream') throw new Error(`${this.compiled.route.operationId} does not stream its body`);
    return hasBody(this.exchange) ? limitedBodyStream(this.exchange, this.compiled.bodyLimit) : null;
  }

  get metrics(): ApiMetrics {
    return this.pipeline.metrics;
  }

  /** The same request, writing through the idempotency transaction. */
  withDb(db: Queryable): RequestContext {
    const { pipeline, exchange, compiled, params, query, body, principal, env } = this;
    return new RequestContext(pipeline, exchange, compiled, params, query, body, principal, env, db);
  }

  /** The same request, with the Idempotency-Key record its handler keeps. */
  withIdempotency(record: IdempotencyScope): RequestContext {
    const { pipeline, exchange, compiled, params, query, body, principal, env, db } = this;
    return new RequestContext(pipeline, exchange, compiled, params, query, body, principal, env, db, record);
  }
}

/** The kind a presented credential that did not verify was meant as, for the metrics (its prefix). */
function credentialKindOf(credential: string): PrincipalKind {
  return looksLikeServerKey(credential) ? 'server' : looksLikeLicenceKey(credential) ? 'licence' : looksLikeDashboardToken(credential) ? 'dashboard' : 'player';
}

/** Whether standing `a` is nearer to refusing than `b`: fewer remaining, then the sooner reset. */
function nearer(a: RateOutcome['nearest'], b: RateOutcome['nearest']): boolean {
  return a.remaining < b.remaining || (a.remaining === b.remaining && a.resetSeconds < b.resetSeconds);
}

/** A conditional read's serialized answer, and the route and environment it answers. */
interface KeptAnswer {
  route: AnyRoute;
  environmentId: number | undefined;
  bytes: Buffer;
}

/** The ETag a handler's answer is kept under (its own when it names one), or undefined when it is not kept. */
function keptAnswerEtag(pipelineEtag: string, headers: Record<string, string> | undefined): string | undefined {
  if (headers === undefined) return pipelineEtag;
  const names = Object.keys(headers);
  if (names.length !== 1 || names[0] !== 'ETag') return undefined;
  return headers.ETag;
}

function isEmptyObject(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).length === 0;
}

function ifNoneMatch(header: string, etag: string): boolean {
  if (!header) return false;
  if (header === etag) return true; // what clients send back: the one ETag they were given
  if (header.trim() === '*') return true;
  return header.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}
