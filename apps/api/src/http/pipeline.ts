/**
 * The request pipeline every route goes through. Order of checks (DESIGN.md): route match → body
 * size → credential → rate limits → review → service switch → body read and validation → handler.
 */
import type { IncomingHttpHeaders } from 'node:http';
import getRawBody from 'raw-body';
import type { TSchema } from '@sinclair/typebox';
import type { ValidateFunction } from 'ajv';
import {
  ApiError,
  EnvironmentContext,
  HearthCore,
  Logger,
  Queryable,
  Principal,
  RateCheck,
  RateOutcome,
  addressChecks,
  createAjv,
  describe,
  environmentRefusal,
  fieldOf,
  fingerprintOf,
  refuse,
  runIdempotent,
} from '@hearth/core';
import { AnyRoute, BODY_LIMITS, HandlerContext, HandlerResult, RequestInfo } from './route';
import { applyTrim, hasTrim } from './schema-helpers';
import type { ApiMetrics } from './metrics';
import type { Exchange } from './exchange';

const IDEMPOTENCY_KEY = /^[\x20-\x7e]{1,128}$/;

const inputAjv = createAjv({ coerceTypes: true });
const bodyAjv = createAjv();

export interface CompiledRoute {
  route: AnyRoute;
  params?: ValidateFunction;
  query: ValidateFunction | null;
  body?: ValidateFunction;
  trimBody: boolean;
  bodyLimit: number;
}

export function compileRoute(route: AnyRoute): CompiledRoute {
  const compile = (ajv: typeof inputAjv, schema: TSchema | undefined) => (schema ? ajv.compile(schema) : undefined);
  return {
    route,
    params: compile(inputAjv, route.params),
    query: route.query ? inputAjv.compile(route.query) : null,
    body: compile(bodyAjv, route.body),
    trimBody: hasTrim(route.body),
    bodyLimit: route.bodyLimit ?? BODY_LIMITS.default,
  };
}

function validate(fn: ValidateFunction, value: unknown, prefix: string): void {
  if (!fn(value)) {
    const error = fn.errors![0];
    const field = fieldOf(error, prefix);
    throw new ApiError('invalid-request', `${field} ${describe(error)}.`, { field });
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

export function credentialKeyOf(principal: Principal): string {
  return principal.kind === 'server' ? `k:${principal.keyId}` : `p:${principal.playerId}`;
}

export class Pipeline {
  constructor(readonly core: HearthCore, private readonly metrics: ApiMetrics) {}

  /** Checks and counts limits; a refusal throws 429. The outcome feeds the X-RateLimit headers. */
  async limit(exchange: Exchange, checks: RateCheck[]): Promise<void> {
    let outcome: RateOutcome;
    try {
      outcome = await this.core.coordination.rateLimit(checks);
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
      throw new ApiError('rate-limited', `Too many requests (${outcome.nearest.name}); retry in ${retry} s.`, { retryAfterSeconds: retry }, { 'Retry-After': String(retry) });
    }
  }

  /** Review and service switches of the environment a request acts in. */
  checkEnvironment(env: EnvironmentContext, route: AnyRoute): void {
    const refusal = environmentRefusal(env, route.service);
    if (refusal) throw refusal;
  }

  /** Runs one request of a matched route, leaving the answer on the exchange (errors are thrown). */
  async run(exchange: Exchange, compiled: CompiledRoute): Promise<void> {
    const { route } = compiled;
    exchange.routeTemplate = route.path;

    // Body size, before reading a byte of it.
    const declared = exchange.contentLength;
    if (route.bodyMode !== 'ignored' && declared !== undefined && declared > compiled.bodyLimit) {
      // Refused before its credential is read, so it counts like a request without one (and carries X-RateLimit-*).
      await this.limit(exchange, addressChecks(exchange.ip));
      throw refuse.tooLarge(compiled.bodyLimit);
    }

    // Credential, rate limits, review, service switch.
    let principal: Principal | null = null;
    let env: EnvironmentContext | null = null;
    if (route.credential !== 'none') {
      const credential = bearerOf(exchange.header('authorization'));
      // A token whose checks are all cached is answered without waiting (the hot path).
      const known = credential ? this.core.authenticator.peek(credential) : null;
      principal = known !== undefined ? known : await this.core.authenticator.authenticate(credential!);
      if (!principal) {
        await this.limit(exchange, addressChecks(exchange.ip));
        throw refuse.unauthorized(credential ? 'The credential is not valid.' : 'This route needs a credential: Authorization: Bearer <credential>.');
      }
      env = principal.environment;
      await this.limit(exchange, environmentChecks(env, credentialKeyOf(principal)));
      if (route.credential === 'server' && principal.kind !== 'server') throw refuse.forbidden('This route takes a server key.');
      if (route.credential === 'player' && principal.kind !== 'player') throw refuse.forbidden('This route takes a player token.');
      this.checkEnvironment(env, route);
    } else if (route.environmentFrom !== 'body-app-key') {
      await this.limit(exchange, addressChecks(exchange.ip));
    }

    // Inputs.
    const params = { ...exchange.params };
    if (compiled.params) validate(compiled.params, params, 'path');
    const query: Record<string, unknown> = exchange.query();
    if (compiled.query) validate(compiled.query, query, 'query');
    else {
      const unknown = Object.keys(query)[0];
      if (unknown !== undefined) throw refuse.invalid(`query.${unknown}`, `query.${unknown} is not taken by this route.`);
    }
    const body = route.bodyMode === 'ignored' || !hasBody(exchange) ? undefined : await readJsonBody(exchange, compiled.bodyLimit);
    let input: unknown = body;
    if (compiled.body) {
      input = body === undefined ? {} : body;
      if (compiled.trimBody) input = applyTrim(route.body, input);
      validate(compiled.body, input, 'body');
    } else if (route.bodyMode !== 'ignored' && body !== undefined && !isEmptyObject(body)) {
      const field = typeof body === 'object' && body !== null && !Array.isArray(body) ? `body.${Object.keys(body)[0]}` : 'body';
      throw refuse.invalid(field, `${field} is not taken by this route.`);
    }

    // The identity-provider sign-in names its environment in the body.
    if (route.environmentFrom === 'body-app-key') {
      const appKey = (input as { appKey: string }).appKey;
      env = await this.core.environments.byAppKey(appKey);
      await this.limit(exchange, addressChecks(exchange.ip, route.rateLimit === 'idp-sign-in' ? (env ?? undefined) : undefined));
      if (!env) throw new ApiError('service-disabled', 'No environment has that app key.');
      this.checkEnvironment(env, route);
    }

    const handlerContext = new RequestContext(this, exchange, route, params, query, input, principal, env, this.core.db);

    // Conditional reads.
    if (route.etag) {
      const etag = await route.etag(handlerContext as never, JSON.stringify([route.operationId, params, query]));
      exchange.setHeader('ETag', etag);
      if (ifNoneMatch(exchange.header('if-none-match'), etag)) {
        exchange.status = 304;
        return;
      }
    }

    const result = await this.runHandler(exchange, compiled, handlerContext);
    exchange.status = result.status ?? route.success.status;
    if (result.headers) exchange.setHeaders(result.headers);
    exchange.body = exchange.status === 204 ? null : result.body;
  }

  private async runHandler(exchange: Exchange, compiled: CompiledRoute, hc: RequestContext): Promise<HandlerResult> {
    const { route } = compiled;
    const mode = route.idempotency ?? 'none';
    if (mode === 'none') return route.handler(hc as never);
    const key = exchange.header('idempotency-key');
    if (key === '') {
      if (mode === 'required') throw refuse.invalid('header.Idempotency-Key', 'header.Idempotency-Key is required on this route.');
      return route.handler(hc as never);
    }
    if (!IDEMPOTENCY_KEY.test(key)) throw refuse.invalid('header.Idempotency-Key', 'header.Idempotency-Key must be 1-128 printable ASCII characters.');
    const principal = hc.principal;
    const envId = hc.env!.id;
    const answer = await runIdempotent(
      this.core.db,
      {
        environmentId: envId,
        scope: principal?.kind === 'player' ? `p:${principal.playerId}` : 'server',
        key,
        fingerprint: fingerprintOf([route.operationId, hc.params, hc.query, hc.body]),
      },
      async (trx) => {
        const result = await route.handler(hc.withDb(trx) as never);
        return { status: result.status ?? route.success.status, body: result.body ?? null };
      },
    );
    return { status: answer.status, body: answer.status === 204 ? undefined : answer.body, headers: { 'Idempotent-Replayed': String(answer.replayed) } };
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
    private readonly route: AnyRoute,
    readonly params: unknown,
    readonly query: unknown,
    readonly body: unknown,
    readonly principal: Principal | null,
    readonly env: EnvironmentContext | null,
    readonly db: Queryable,
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

  get request(): RequestInfo {
    const { exchange } = this;
    return (this.info ??= { ip: exchange.ip, host: exchange.host, protocol: exchange.protocol, requestId: exchange.requestId });
  }

  async enterEnvironment(environment: EnvironmentContext, credentialKey: string): Promise<void> {
    await this.pipeline.limit(this.exchange, environmentChecks(environment, credentialKey));
    this.pipeline.checkEnvironment(environment, this.route);
  }

  /** The same request, writing through the idempotency transaction. */
  withDb(db: Queryable): RequestContext {
    const { pipeline, exchange, route, params, query, body, principal, env } = this;
    return new RequestContext(pipeline, exchange, route, params, query, body, principal, env, db);
  }
}

function bearerOf(header: string): string | null {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match ? match[1] : null;
}

/** application/json, with or without parameters such as charset. */
function isJson(contentType: string): boolean {
  const semicolon = contentType.indexOf(';');
  return (semicolon < 0 ? contentType : contentType.slice(0, semicolon)).trim().toLowerCase() === 'application/json';
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

/** A request has a body when it declares a length above zero or streams one in chunks. */
function hasBody(exchange: Exchange): boolean {
  const length = exchange.contentLength;
  return (length !== undefined && length > 0) || exchange.header('transfer-encoding') !== '';
}

/** Reads a JSON body, counting bytes as they stream (a body with no Content-Length is held to the limit too). */
async function readJsonBody(exchange: Exchange, limit: number): Promise<unknown> {
  const length = exchange.contentLength;
  let text: string;
  try {
    text = await getRawBody(exchange.req, { length, limit, encoding: 'utf8' });
  } catch (err) {
    const type = (err as { type?: string }).type;
    if (type === 'entity.too.large') throw refuse.tooLarge(limit);
    throw refuse.invalid('body', 'The body could not be read.');
  }
  if (text.length === 0) return undefined;
  if (!isJson(exchange.header('content-type'))) throw refuse.invalid('body', 'The body must be JSON, sent with Content-Type: application/json.');
  try {
    return JSON.parse(text);
  } catch {
    throw refuse.invalid('body', 'The body is not valid JSON.');
  }
}
