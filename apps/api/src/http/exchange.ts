/**
 * One request and its answer, over node's own HTTP objects. The API does not use a web framework:
 * its route table already says everything a framework would be told, and the hot paths
 * (docs/performance.md) cannot afford a framework's per-request objects.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import querystring from 'node:querystring';
import { clientAddressOf, requestHostOf, requestProtocolOf, type ProxyTrust } from '@hearth/core/net';
import type { EnvironmentContext, PageKind } from '@hearth/core/tenancy';
import type { RateOutcome } from '@hearth/core/coord';

export class Exchange {
  /** The path without the query, as sent (not decoded). */
  readonly path: string;
  private readonly rawQuery: string;
  /** Decoded path parameters of the matched route. */
  params: Record<string, string> = {};
  status = 200;
  /** Sent as JSON; null or undefined sends no body. */
  body: unknown = undefined;
  /** The body already serialized as UTF-8 JSON (a conditional read's kept answer): sent as it is, before `body`. */
  serialized?: Buffer;
  private readonly answerHeaders: Record<string, string | number> = {};

  requestId = '';
  /** The rate-limit outcome nearest to refusing, for the X-RateLimit-* headers. */
  rate?: RateOutcome;
  /** The matched route's template, for metrics and the access line. */
  routeTemplate?: string;
  /** The web pages whose origins may read this answer (cors.ts): none until a route (or a /v1 path) is known. */
  pages: readonly PageKind[] = [];
  /** The environment the request acts in, once known: its origins decide the answer's CORS headers. */
  environment: EnvironmentContext | null = null;

  constructor(
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
    /** Which hops in front of us may tell the client's address, host and protocol (X-Forwarded-*). */
    private readonly trustedProxies: ProxyTrust,
  ) {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    this.path = q < 0 ? url : url.slice(0, q);
    this.rawQuery = q < 0 ? '' : url.slice(q + 1);
  }

  get method(): string {
    return this.req.method ?? 'GET';
  }

  /** A request header's value ('' when absent; repeated headers joined by node). */
  header(name: string): string {
    const value = this.req.headers[name];
    return value === undefined ? '' : Array.isArray(value) ? value.join(', ') : value;
  }

  /** The query string's parameters (repeated names become arrays), a fresh object per call. */
  query(): Record<string, string | string[] | undefined> {
    return this.rawQuery === '' ? {} : querystring.parse(this.rawQuery);
  }

  /** The declared body length, when the request declares one. */
  get contentLength(): number | undefined {
    const value = this.req.headers['content-length'];
    return value === undefined || value === '' ? undefined : Number.parseInt(value, 10) || 0;
  }

  /** The client's address, as far back along X-Forwarded-For as our trusted proxies vouch for it. */
  get ip(): string {
    return (this.address ??= clientAddressOf(this.req, this.trustedProxies));
  }
  private address?: string;

  get host(): string {
    return requestHostOf(this.req, this.trustedProxies);
  }

  get protocol(): string {
    return requestProtocolOf(this.req, this.trustedProxies);
  }

  setHeader(name: string, value: string | number): void {
    this.answerHeaders[name] = value;
  }

  setHeaders(headers: Record<string, string>): void {
    Object.assign(this.answerHeaders, headers);
  }

  /** Writes the answer: JSON when there is a body; 204 and 304 never carry one. */
  send(): void {
    const { res } = this;
    if (res.headersSent) return;
    const headers = this.answerHeaders;
    if (this.status === 204 || this.status === 304 || (this.serialized === undefined && (this.body === undefined || this.body === null))) {
      res.writeHead(this.status, headers);
      res.end();
      return;
    }
    const payload = this.serialized ?? JSON.stringify(this.body);
    headers['Content-Type'] = 'application/json; charset=utf-8';
    headers['Content-Length'] = typeof payload === 'string' ? Buffer.byteLength(payload) : payload.length;
    res.writeHead(this.status, headers);
    res.end(payload); // node leaves the body out of an answer to HEAD
  }
}
