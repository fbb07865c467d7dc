/**
 * What every scenario shares: where Hearth is (from the runner, loadtest/run.ts), a request helper that
 * tags each request with its endpoint (the thresholds are per endpoint tag) and names it by its route
 * template (never a raw path with ids), and the sign-in.
 */
import http, { RefinedResponse, ResponseType } from 'k6/http';
import { check } from 'k6';

declare const __ENV: Record<string, string | undefined>;

function required(name: string): string {
  const value = __ENV[name];
  if (!value) throw new Error(`${name} is not set: run the load tests with \`make loadtest\` (loadtest/run.ts sets it)`);
  return value;
}

/** http://127.0.0.1:<port>/v1 of the `hearth api` process under test */
export const BASE = required('HEARTH_BASE');
/** ws://127.0.0.1:<port> of the `hearth realtime` process: what the ingress sends /v1/realtime/socket to */
export const REALTIME_ORIGIN = required('HEARTH_REALTIME_ORIGIN');
export const SERVER_KEY = required('HEARTH_SERVER_KEY');
export const LIMITED_SERVER_KEY = required('HEARTH_LIMITED_SERVER_KEY');
export const LIMITED_PER_MINUTE = Number(required('HEARTH_LIMITED_PER_MINUTE'));

export type Response = RefinedResponse<ResponseType>;

export interface CallOptions {
  token?: string;
  body?: unknown;
  headers?: Record<string, string>;
  /** the statuses that count as success for http_req_failed (default 200-299) */
  expect?: number[];
  /** the client address the request comes from, as the ingress tells it (X-Forwarded-For) */
  from?: string;
}

/**
 * The address of simulated client `n` (a player's device). Requests without a credential (the
 * refresh) and socket opens are limited per client address (spec §8, 600 a minute), and every request
 * k6 sends leaves from 127.0.0.1; the runner starts Hearth trusting loopback as its proxy
 * (HEARTH_TRUSTED_PROXIES=loopback, as behind the ingress), so these name the player's own address,
 * one per simulated player, as real traffic would.
 */
export function clientAddress(n: number): string {
  return `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;
}

const callbacks = new Map<string, ReturnType<typeof http.expectedStatuses>>();
/** One response callback per set of statuses, made once (k6 advises against one per request). */
function expected(statuses: number[]): ReturnType<typeof http.expectedStatuses> {
  const key = statuses.join(',');
  let callback = callbacks.get(key);
  if (!callback) {
    callback = http.expectedStatuses(...statuses);
    callbacks.set(key, callback);
  }
  return callback;
}

function params(endpoint: string, name: string, options: CallOptions) {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.Authorization = `Bearer ${options.token}`;
  if (options.body !== undefined) headers['Content-Type'] = 'application/json';
  if (options.from) headers['X-Forwarded-For'] = options.from;
  return {
    headers,
    tags: { endpoint, name },
    responseCallback: expected(options.expect ?? [200, 201, 204]),
  };
}

/**
 * One request: `endpoint` is the tag the thresholds select (e.g. `players-me`), `route` the method and
 * template it is named by (`GET /players/me`), `path` the real path under /v1.
 */
export function call(endpoint: string, method: string, route: string, path: string, options: CallOptions = {}): Response {
  const body = options.body === undefined ? null : JSON.stringify(options.body);
  return http.request(method, `${BASE}${path}`, body, params(endpoint, route, options));
}

/** The same, without blocking the VU's event loop (socket frames keep arriving while it waits). */
export function callAsync(endpoint: string, method: string, route: string, path: string, options: CallOptions = {}): Promise<Response> {
  const body = options.body === undefined ? null : JSON.stringify(options.body);
  return http.asyncRequest(method, `${BASE}${path}`, body, params(endpoint, route, options));
}

/** The body as JSON, or undefined when it is not JSON (a check then fails, not the VU). */
export function json(res: Response): any {
  try {
    return res.json();
  } catch {
    return undefined;
  }
}

/** Every answer carries the three X-RateLimit headers (spec §4), each a whole number. */
export function hasRateLimitHeaders(res: Response): boolean {
  return ['X-Ratelimit-Limit', 'X-Ratelimit-Remaining', 'X-Ratelimit-Reset'].every((h) => /^\d+$/.test(res.headers[h] ?? ''));
}

export interface Player {
  id: string;
  accessToken: string;
  refreshToken: string;
}

/** POST /auth/server as `subject`; throws (failing setup loudly) when the answer is not tokens. */
export function signInOrThrow(serverKey: string, subject: string, endpoint = 'setup'): Player {
  const res = call(endpoint, 'POST', 'POST /auth/server', '/auth/server', { token: serverKey, body: { subject } });
  const body = json(res);
  if ((res.status !== 200 && res.status !== 201) || !body?.accessToken) {
    throw new Error(`sign-in of ${subject} answered ${res.status}: ${res.body}`);
  }
  return { id: body.player.id, accessToken: body.accessToken, refreshToken: body.refreshToken };
}

/** check() with the endpoint tag, so failed checks can be told apart per endpoint in the summary. */
export function checkTagged(endpoint: string, value: unknown, sets: Record<string, (v: any) => boolean>): boolean {
  return check(value, sets, { endpoint });
}
