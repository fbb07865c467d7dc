/**
 * Browser origins (docs/api-conventions.md "Browsers (CORS)"): the grammar of an origin a
 * GameEnvironment or a Project's dashboard allows, as a browser writes its `Origin` header. A browser
 * compares origins as exact strings, so an allowed origin is written exactly as a browser sends it:
 * `scheme://host[:port]`, http or https, the host in lower case, no path, no trailing slash, no
 * wildcard, and no port when it is the scheme's default (a browser leaves :443 and :80 out).
 */
import { Type } from '@sinclair/typebox';
import { celRules } from './rules';

/** The most origins one environment (or one dashboard) allows. */
export const MAX_ALLOWED_ORIGINS = 32;

const LABEL = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
/** 1-65535 without leading zeros. */
const PORT = '(6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[1-9][0-9]{0,3})';
/**
 * A lower-case DNS name or IPv4 address, or a bracketed IPv6 address, and an optional port. Written
 * without look-arounds: Kubernetes checks CRD patterns with Go's RE2.
 */
export const ORIGIN_PATTERN = `^https?://(${LABEL}(\\.${LABEL})*|\\[[0-9a-f:.]+\\])(:${PORT})?$`;
const ORIGIN = new RegExp(ORIGIN_PATTERN);

export const BrowserOrigin = Type.String({
  minLength: 8,
  maxLength: 270,
  pattern: ORIGIN_PATTERN,
  description: 'an origin exactly as a browser sends it: http(s)://host[:port], host in lower case, no path, no trailing slash, no wildcard',
  ...celRules({
    rule: "!(self.startsWith('https://') && self.endsWith(':443')) && !(self.startsWith('http://') && self.endsWith(':80'))",
    message: "must leave out the scheme's default port (a browser sends https://host, never https://host:443)",
  }),
});

/** A list of allowed origins, each once. */
export function OriginList(description: string) {
  return Type.Array(BrowserOrigin, { maxItems: MAX_ALLOWED_ORIGINS, uniqueItems: true, 'x-kubernetes-list-type': 'set', description });
}

/**
 * The origin of a URL as a browser would send it (`https://dash.example.com` of
 * `https://dash.example.com/callback`), or null when it has none a browser could send (not http(s), or
 * a host outside the grammar above).
 */
export function originOf(url: string): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return null;
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return null;
  const origin = parsed.origin; // WHATWG: lower-case host, the default port left out
  return ORIGIN.test(origin) ? origin : null;
}
