/**
 * Browsers (docs/api-conventions.md "Browsers (CORS)"): which answers a web page of another origin may
 * read, and the preflights a browser sends before a request it may not send on its own.
 *
 * - An answer carries `Access-Control-Allow-Origin: <the Origin sent>` when that origin is allowed for
 *   the pages the route serves (`pagesOf`): by the environment the request acts in when it is known
 *   (its credential's, or the app key its body or path names; the origins ride on the cached
 *   EnvironmentContext), else by any environment of an approved project of the deployment
 *   (`core.origins`, in memory), so that a browser game can read the 401 of its expired token. Any
 *   other origin, `null` included, gets no Access-Control-* header at all: the browser then keeps the
 *   answer from the page. Never `*`, and never Access-Control-Allow-Credentials: the API's
 *   credentials are the Authorization header, which a page sends itself (no cookie, no HTTP
 *   authentication, no client certificate is ever read), so a page's fetch needs no `credentials: 'include'`.
 * - Every answer of a route that may carry them says `Vary: Origin` (caches keep one copy per origin).
 * - A preflight (`OPTIONS` with `Origin` and `Access-Control-Request-Method`) is answered from memory:
 *   the methods of the path's routes, the headers the API reads, for 2 hours, when the deployment
 *   allows the origin for the pages of the path's routes; it is counted against the caller's address
 *   like any request without a credential. An OPTIONS that is not a preflight, or whose origin is not
 *   allowed, is what it was before CORS: 404 not-found, a method the path does not take.
 */
import type { AnyRoute } from './route';
import type { Exchange } from './exchange';
import { allowsOrigin, type BrowserOrigins, type PageKind } from '@hearth/core/tenancy';

export const GAME_PAGES: readonly PageKind[] = ['game'];
export const DASHBOARD_PAGES: readonly PageKind[] = ['dashboard'];
export const ANY_PAGES: readonly PageKind[] = ['game', 'dashboard'];
const NO_PAGES: readonly PageKind[] = [];

/**
 * The pages a route serves, from its credential unless it names them: a game's for the routes of
 * players, game servers and the game's sign-ins; a dashboard's for the dashboard routes; either for
 * the reads both call (config and flags) and for the public documents (the OpenAPI document, the key
 * sets); none for the licence routes, whose key belongs in a client plugin, never in a page.
 */
export function pagesOf(route: AnyRoute): readonly PageKind[] {
  if (route.pages) return route.pages;
  switch (route.credential) {
    case 'licence':
      return NO_PAGES;
    case 'dashboard':
      return DASHBOARD_PAGES;
    case 'either-or-dashboard':
      return ANY_PAGES;
    case 'none':
      return route.environmentFrom === undefined ? ANY_PAGES : GAME_PAGES;
    default:
      return GAME_PAGES;
  }
}

/** What an answer a page of another origin reads may show it besides the CORS-safelisted headers. */
export const EXPOSE_HEADERS = 'ETag, X-Request-Id, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After, Idempotent-Replayed';
/** The request headers the API reads, which a page may send (a preflight's Access-Control-Allow-Headers). */
export const ALLOW_HEADERS = 'Authorization, Content-Type, Idempotency-Key, If-None-Match, X-Request-Id';
/** How long a browser may keep a preflight's answer (Chromium keeps at most 2 hours). */
export const PREFLIGHT_MAX_AGE_SECONDS = 7200;

/**
 * The CORS headers of an answer, set just before it is sent (app.ts): `Vary: Origin` on every answer of
 * a route that serves pages, and the origin allowed back when it is.
 */
export function corsHeaders(exchange: Exchange, deployment: BrowserOrigins): void {
  const pages = exchange.pages;
  if (pages.length === 0) return;
  exchange.setHeader('Vary', 'Origin');
  const origin = exchange.req.headers.origin;
  if (origin === undefined) return; // a native client: nothing to say
  const origins = exchange.environment ? exchange.environment.origins : deployment;
  if (!allowsOrigin(origins, origin, pages)) return;
  exchange.setHeader('Access-Control-Allow-Origin', origin);
  exchange.setHeader('Access-Control-Expose-Headers', EXPOSE_HEADERS);
}

/** Whether a request is a CORS preflight: OPTIONS with an Origin and the method it asks about. */
export function isPreflight(exchange: Exchange): boolean {
  const { headers } = exchange.req;
  return exchange.method === 'OPTIONS' && headers.origin !== undefined && headers['access-control-request-method'] !== undefined;
}

/** A preflight's allowed answer (204): what the path's routes take, for how long. */
export function answerPreflight(exchange: Exchange, origin: string, methods: string): void {
  exchange.status = 204;
  exchange.setHeader('Access-Control-Allow-Origin', origin);
  exchange.setHeader('Access-Control-Allow-Methods', methods);
  exchange.setHeader('Access-Control-Allow-Headers', ALLOW_HEADERS);
  exchange.setHeader('Access-Control-Max-Age', PREFLIGHT_MAX_AGE_SECONDS);
}
