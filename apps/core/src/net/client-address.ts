/**
 * Who is calling, behind the ingress: the client's address, host and protocol of a request, read
 * from X-Forwarded-* only as far as the proxies in front of us are trusted. `proxy-addr` (what
 * express and fastify use) walks X-Forwarded-For from the nearest hop outwards and stops at the
 * first address it does not trust, so a client cannot choose its own address by sending the header:
 * an appending proxy puts the real peer after whatever the client wrote.
 */
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import proxyaddr from 'proxy-addr';

/** Decides whether the hop at `address` (`hop` 0 is our direct peer) is a proxy of ours. */
export type ProxyTrust = (address: string, hop: number) => boolean;

/** Trusts no proxy: the peer is the client, X-Forwarded-* is ignored. */
export const TRUST_NO_PROXY: ProxyTrust = () => false;

/**
 * HEARTH_TRUSTED_PROXIES: empty (no proxy), a hop count (`1`: the peer is our one proxy, so the
 * client is the last X-Forwarded-For entry it appended), or a comma-separated list of addresses and
 * CIDR ranges, including proxy-addr's names `loopback`, `linklocal` and `uniquelocal`. Throws with
 * the reason when the value is neither.
 */
export function parseTrustedProxies(raw: string | undefined): ProxyTrust {
  const value = (raw ?? '').trim();
  if (value === '') return TRUST_NO_PROXY;
  if (/^\d+$/.test(value)) {
    const hops = Number(value);
    return hops === 0 ? TRUST_NO_PROXY : (_address, hop) => hop < hops;
  }
  const entries = value
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  try {
    return proxyaddr.compile(entries);
  } catch (err) {
    throw new Error(`must be a hop count or a list of addresses and CIDR ranges (${(err as Error).message})`);
  }
}

function firstOf(list: string): string {
  const comma = list.indexOf(',');
  return (comma < 0 ? list : list.slice(0, comma)).trim();
}

function headerOf(req: IncomingMessage, name: string): string {
  const value = req.headers[name];
  return value === undefined ? '' : Array.isArray(value) ? value.join(',') : value;
}

/** The client's address: the nearest X-Forwarded-For entry that no trusted proxy of ours vouches past. */
export function clientAddressOf(req: IncomingMessage, trust: ProxyTrust): string {
  if (trust === TRUST_NO_PROXY) return req.socket.remoteAddress ?? '';
  return proxyaddr(req, trust);
}

/** Whether our direct peer is a trusted proxy, whose X-Forwarded-Host and -Proto then count. */
function fromTrustedProxy(req: IncomingMessage, trust: ProxyTrust): boolean {
  return trust !== TRUST_NO_PROXY && trust(req.socket.remoteAddress ?? '', 0);
}

/** The host the client asked for: X-Forwarded-Host from a trusted proxy, else Host. */
export function requestHostOf(req: IncomingMessage, trust: ProxyTrust): string {
  const forwarded = fromTrustedProxy(req, trust) ? firstOf(headerOf(req, 'x-forwarded-host')) : '';
  return forwarded || firstOf(headerOf(req, 'host'));
}

/** `https` or `http` as the client spoke it: TLS here, else X-Forwarded-Proto from a trusted proxy. */
export function requestProtocolOf(req: IncomingMessage, trust: ProxyTrust): string {
  if ((req.socket as TLSSocket).encrypted) return 'https';
  const forwarded = fromTrustedProxy(req, trust) ? firstOf(headerOf(req, 'x-forwarded-proto')).toLowerCase() : '';
  return forwarded || 'http';
}
