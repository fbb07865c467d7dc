import { maxHeaderSize, type IncomingMessage, type ServerResponse } from 'node:http';
import FindMyWay, { type HTTPVersion } from 'find-my-way';
import { Refusal, accessLogOf, randomId } from '@hearth/core';
import type { HearthCore } from '@hearth/core/hearth';
import { type PageKind, allowsOrigin } from '@hearth/core/tenancy';
import { TRUST_NO_PROXY, withoutTrailingSlashes, type ProxyTrust } from '@hearth/core/net';
import { addressChecks } from '@hearth/core/coord';
import { readiness } from '@hearth/core/process';
import type { AnyRoute, Method } from './route';
import { Exchange } from './exchange';
import { INTERNAL_ERROR, answerFor, placeFields } from './errors';
import { clientErrorListener, type ClientErrorListener } from './client-error';
import { ApiMetrics } from './metrics';
import { type CompiledRoute, Pipeline, compileRoute } from './pipeline';
import { isObjectUpload, serveObjectUpload } from './object-upload';
import { ANY_PAGES, answerPreflight, corsHeaders, isPreflight } from './cors';

export const BASE_PATH = '/v1';
const REQUEST_ID = /^[\x21-\x7e]{1,128}$/;
const METHOD_ORDER: readonly Method[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

export interface ApiAppOptions {
  core: HearthCore;
  routes: AnyRoute[];
  metrics?: ApiMetrics;
  /** Which hops in front of us may tell the client's address, host and protocol (default: none). */
  trustedProxies?: ProxyTrust;
}

export type RequestListener = (req: IncomingMessage, res: ServerResponse) => void;

export interface ApiApp {
  handle: RequestListener;
  /** For the server's 'clientError': what the HTTP parser refused, answered in the spec's shape. */
  clientError: ClientErrorListener;
  metrics: ApiMetrics;
  /** Stops the metrics hearing the core (its events, pool and Redis). */
  stopMetrics(): void;
}

/**
 * The API as node's request listener: every route of the table through the pipeline, under /v1.
 * Routing is find-my-way (fastify's router) over the table; see docs/architecture.md for why there is
 * no web framework in between.
 */
export function createApiApp(options: ApiAppOptions): ApiApp {
  const { core, routes } = options;
  const trustedProxies = options.trustedProxies ?? TRUST_NO_PROXY;
  const metrics = options.metrics ?? new ApiMetrics();
  const stopMetrics = metrics.watch(core);
  const pipeline = new Pipeline(core, metrics);
  const accessLog = accessLogOf(core.logger);
  // Request ids only need to be unique: a random prefix per app and a counter (no random bytes per request).
  const requestIdPrefix = `${randomId(12)}-`;
  let requestCount = 0;
  const nextRequestId = () => requestIdPrefix + (++requestCount).toString(36);
  /** Connections with a request in the pipeline: a parse error there closes rather than answers. */
  const answering = new WeakSet<object>();

  // Parameters of any length reach validation, which names them (find-my-way's default cuts at 100).
  const router = FindMyWay<HTTPVersion.V1>({ maxParamLength: 16 * 1024 });
  for (const route of routes) {
    const compiled = compileRoute(route);
    const path = BASE_PATH + route.path;
    router.on(route.method, path, noHandler, compiled);
    if (route.method === 'GET') router.on('HEAD', path, noHandler, compiled);
  }

  /** The methods a preflight may ask about: those of the table (HEAD is GET's), in one order. */
  const methods = METHOD_ORDER.filter((method) => routes.some((route) => route.method === method));

  /**
   * A preflight's path: the methods its routes take (HEAD with GET) and the pages they serve, or null
   * when no route of the table takes the path. Each method is looked up as a request of it would be,
   * so the answer names exactly what would be routed.
   */
  const preflightOf = (path: string): { methods: string; pages: Set<PageKind>; template: string } | null => {
    const taken: string[] = [];
    const pages = new Set<PageKind>();
    let template = '';
    for (const method of methods) {
      const match = find(method, path);
      if (!match) continue;
      taken.push(method === 'GET' ? 'GET, HEAD' : method);
      for (const page of match.compiled.pages) pages.add(page);
      template ||= match.compiled.route.path;
    }
    return taken.length === 0 ? null : { methods: taken.join(', '), pages, template };
  };

  /**
   * A CORS preflight, answered from memory (cors.ts): counted against the caller's address, then 204
   * with the path's methods when the deployment allows the origin for the path's pages, else 404 as any
   * method a path does not take, with no Access-Control-* header.
   */
  const servePreflight = async (exchange: Exchange): Promise<void> => {
    // Its answer depends on the Origin, allowed or not; its Access-Control-* headers are its own (none on a refusal).
    exchange.setHeader('Vary', 'Origin');
    await pipeline.limit(exchange, addressChecks(exchange.ip));
    const origin = exchange.header('origin');
    const preflight = exchange.path.startsWith(`${BASE_PATH}/`) ? preflightOf(exchange.path) : null;
    if (preflight) {
      exchange.routeTemplate = preflight.template;
      if (allowsOrigin(core.origins.origins, origin, [...preflight.pages])) {
        answerPreflight(exchange, origin, preflight.methods);
        return;
      }
    }
    throw new Refusal('not-found', `No route OPTIONS ${exchange.path}.`);
  };

  /** The route of a path, trailing slashes ignored. A path whose escapes cannot be decoded still finds
   * its route, with the undecodable parameter kept as sent, so that validation names it. */
  const find = (method: string, path: string) => {
    const trimmed = withoutTrailingSlashes(path);
    const found = router.find(method as 'GET', trimmed) ?? (trimmed.includes('%') ? router.find(method as 'GET', trimmed.replace(/%/g, '%25')) : null);
    return found ? { compiled: found.store as CompiledRoute, params: found.params as Record<string, string> } : null;
  };

  /**
   * What no route of the table answers: the probes, the embedded default's uploads, and 404 for any
   * other path. A route's request does not come through here: `answer` runs its pipeline itself, one
   * async layer less on every request.
   */
  const serveUnrouted = async (exchange: Exchange): Promise<void> => {
    const { path } = exchange;
    // Probes live outside /v1: they are for the cluster, not for games.
    if (path === '/healthz') {
      exchange.body = { status: 'ok' };
      return;
    }
    if (path === '/readyz') {
      const { ready, checks } = await readiness(core);
      exchange.status = ready ? 200 : 503;
      exchange.body = { status: ready ? 'ready' : 'not-ready', ...checks };
      return;
    }
    // The embedded default's presigned uploads: not a route of the spec (object-upload.ts).
    if (isObjectUpload(exchange)) return serveObjectUpload(exchange, core, pipeline);
    // Anything the table does not name (a known path with another method included) is 404; under /v1
    // a browser game may read it (a page of an origin the deployment allows).
    if (path.startsWith(`${BASE_PATH}/`)) exchange.pages = ANY_PAGES;
    await pipeline.limit(exchange, addressChecks(exchange.ip));
    // HEAD is GET without the body, its refusal too (same message, same Content-Length).
    throw new Refusal('not-found', `No route ${exchange.method === 'HEAD' ? 'GET' : exchange.method} ${path}.`);
  };

  // Around every request: request id, the error shape, X-RateLimit headers, metrics and the access line.
  const answer = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const started = performance.now();
    answering.add(req.socket);
    const exchange = new Exchange(req, res, trustedProxies);
    const incoming = req.headers['x-request-id'];
    exchange.requestId = typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : nextRequestId();
    exchange.setHeader('X-Request-Id', exchange.requestId);
    let found: ReturnType<typeof find> = null;
    try {
      // The uploads' path is not a route of the table (the probes' are outside /v1).
      found = isObjectUpload(exchange) ? null : find(exchange.method, exchange.path);
      if (found) {
        exchange.params = found.params;
        exchange.pages = found.compiled.pages;
        await pipeline.run(exchange, found.compiled);
      } else if (isPreflight(exchange)) await servePreflight(exchange);
      else await serveUnrouted(exchange);
    } catch (err) {
      const answer = answerFor(found ? placeFields(err, found.compiled.route) : err);
      exchange.status = answer.status;
      exchange.body = answer.body;
      if (answer.headers) exchange.setHeaders(answer.headers);
      metrics.refusals.inc({ route: exchange.routeTemplate ?? 'unmatched', error: answer.body.error });
      if (answer.log !== 'none')
        core.logger[answer.log]({ err, requestId: exchange.requestId, method: exchange.method, path: exchange.path }, 'request failed');
    }
    const { rate, status } = exchange;
    if (rate) {
      exchange.setHeader('X-RateLimit-Limit', rate.nearest.limit);
      exchange.setHeader('X-RateLimit-Remaining', rate.nearest.remaining);
      exchange.setHeader('X-RateLimit-Reset', rate.nearest.resetSeconds);
    }
    corsHeaders(exchange, core.origins.origins);
    exchange.send();
    answering.delete(req.socket);
    const ms = performance.now() - started;
    const route = exchange.routeTemplate ?? 'unmatched';
    metrics.countAnswer(route, exchange.method, status, ms / 1000);
    // The access line: one per request, at error for the 5xx answers (whose cause is logged above).
    accessLog({ requestId: exchange.requestId, method: exchange.method, route, status, ms: Math.round(ms * 1000) / 1000 });
  };
  const handle: RequestListener = (req, res) => {
    answer(req, res).catch((err) => {
      // Only a fault in writing the answer itself lands here: never leave the client waiting.
      core.logger.error({ err, method: req.method, url: req.url }, 'answer failed');
      if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'application/json; charset=utf-8' });
      res.end(JSON.stringify(INTERNAL_ERROR));
      answering.delete(req.socket);
    });
  };
  const clientError = clientErrorListener({
    pipeline,
    metrics,
    logger: core.logger,
    trustedProxies,
    maxHeaderSize,
    nextRequestId,
    answering: (socket) => answering.has(socket),
  });

  return { handle, clientError, metrics, stopMetrics };
}

/** find-my-way wants a handler per route; the pipeline is what handles, with the route as the store. */
function noHandler(): void {}
