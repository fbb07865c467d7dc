/**
 * Who is opening a socket, and whether they may. An upgrade is a request without a credential (the
 * token comes later, in the authorize frame), so it counts against the same per-address minute limit
 * as the API's requests without one (spec §8, addressChecks in core): the same counter, in the same
 * coordination, whichever process served which request. The address is the client's own behind the
 * proxies HEARTH_TRUSTED_PROXIES trusts (clientAddressOf), so neither a shared ingress nor a forged
 * X-Forwarded-For entry decides whose limit an upgrade spends.
 */
import http from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { Refusal, ERROR_STATUS, type Logger } from '@hearth/core';
import { ADDRESS_LIMIT_PER_MINUTE, addressChecks, type Coordination, type RateOutcome } from '@hearth/core/coord';
import { clientAddressOf, type ProxyTrust } from '@hearth/core/net';
import type { BrowserOrigins } from '@hearth/core/tenancy';
import type { RealtimeMetrics } from './metrics';

/**
 * Reading a net.Socket's `remoteAddress` makes node keep the peer's address object on the socket (its
 * `_peername`) for the socket's life: about 100 bytes of every idle socket (measured on a bare ws
 * server holding 3,000 sockets: +100 B read, +14 B read and dropped). The socket keeps the one string it needs (HearthSocket.address), so the
 * cache is dropped; node reads the address afresh if anybody asks again.
 */
function forgetPeerAddress(socket: Socket): void {
  (socket as Socket & { _peername?: unknown })._peername = undefined;
}

export interface UpgradeLimitOptions {
  coordination: Coordination;
  trustedProxies: ProxyTrust;
  /** The per-address limit a minute: the product's figure unless a test or bench needs another. */
  perMinute?: number;
  metrics: RealtimeMetrics;
  log: Logger;
}

export interface UpgradeCheck {
  /** The client's address. */
  address: string;
  outcome: RateOutcome;
  /** The refusal to answer instead of upgrading (429), or null. */
  refusal: Refusal | null;
}

export class UpgradeLimit {
  private readonly perMinute: number;

  constructor(private readonly options: UpgradeLimitOptions) {
    this.perMinute = options.perMinute ?? ADDRESS_LIMIT_PER_MINUTE;
  }

  /** Counts the upgrade against its client's address; with the coordination down it is let through (fails open, as the API). */
  async check(req: http.IncomingMessage): Promise<UpgradeCheck> {
    const { coordination, trustedProxies, metrics, log } = this.options;
    const address = clientAddressOf(req, trustedProxies);
    forgetPeerAddress(req.socket);
    const checks = addressChecks(address, undefined, this.perMinute);
    let outcome: RateOutcome;
    try {
      outcome = await coordination.rateLimit(checks);
    } catch (err) {
      metrics.rateLimitFailOpen.inc();
      log.warn({ err: (err as Error).message, address }, 'rate limits unavailable; failing open');
      const first = checks[0];
      outcome = { allowed: true, nearest: { name: first.name, limit: first.limit, remaining: first.limit, resetSeconds: first.windowSeconds } };
    }
    if (outcome.allowed) return { address, outcome, refusal: null };
    metrics.upgradesRefused.inc({ reason: 'rate-limited' });
    const retry = Math.max(1, outcome.nearest.resetSeconds);
    const refusal = new Refusal(
      'rate-limited',
      `Too many requests (${outcome.nearest.name}); retry in ${retry} s.`,
      { retryAfterSeconds: retry },
      { 'Retry-After': String(retry) },
    );
    return { address, outcome, refusal };
  }
}

/**
 * A browser's socket (docs/realtime.md "Browsers"): a browser sends the page's `Origin` with the upgrade
 * and applies no CORS to a socket, so the server checks it. An origin no environment of the deployment
 * allows is refused here, 403 `forbidden`, before the socket is made; the authorize frame then holds it
 * to the token's own environment (Authorization). No Origin (a native client) passes.
 */
export function originRefusal(origin: string | undefined, deployment: BrowserOrigins): Refusal | null {
  if (origin === undefined || deployment.game.has(origin)) return null;
  return new Refusal('forbidden', 'This page’s origin may not open the sessions socket: no environment allows it.');
}

/** X-RateLimit-* of the limit nearest to refusing, as every API answer carries them. */
export function rateLimitHeaders(outcome: RateOutcome): Record<string, string> {
  return {
    'X-RateLimit-Limit': String(outcome.nearest.limit),
    'X-RateLimit-Remaining': String(outcome.nearest.remaining),
    'X-RateLimit-Reset': String(outcome.nearest.resetSeconds),
  };
}

/** Answers an upgrade request with an HTTP error in the spec's shape, and ends the connection. */
export function refuseUpgrade(socket: Duplex, err: Refusal, headers: Record<string, string> = {}): void {
  const body = JSON.stringify(err.toBody());
  const lines = [
    `HTTP/1.1 ${ERROR_STATUS[err.code]} ${http.STATUS_CODES[ERROR_STATUS[err.code]]}`,
    'Connection: close',
    'Content-Type: application/json',
    `Content-Length: ${Buffer.byteLength(body)}`,
    ...Object.entries({ ...headers, ...err.headers }).map(([name, value]) => `${name}: ${value}`),
  ];
  socket.end(`${lines.join('\r\n')}\r\n\r\n${body}`);
}
