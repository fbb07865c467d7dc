/**
 * What node's HTTP parser refuses before a request exists (a malformed request line, a URL or
 * headers past `maxHeaderSize`, a broken chunked body, a request that never arrived in full) is
 * answered in the spec's error shape too. There is no request or response object then: the answer is
 * written by hand onto the socket as a complete HTTP/1.1 message, and the connection closed.
 *
 * Every one of them is `400 invalid-request`: the spec's table fixes one status per code and has no
 * 431 or 408, and its `invalid-request` reads "a ... header is missing, malformed, past a limit".
 * So headers past the limit are 400 invalid-request saying so, rather than node's bare 431.
 */
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { Refusal, ERROR_STATUS, type Logger } from '@hearth/core';
import { addressChecks, type RateOutcome } from '@hearth/core/coord';
import type { ProxyTrust } from '@hearth/core/net';
import type { ApiMetrics } from './metrics';
import type { Pipeline } from './pipeline';

/** How long the answer waits for the per-address count; past it, it goes without X-RateLimit-*. */
const RATE_WAIT_MS = 200;
/** How long a refused connection may keep sending after the answer before it is closed hard. */
const LINGER_MS = 2_000;

export interface ClientErrorOptions {
  pipeline: Pipeline;
  metrics: ApiMetrics;
  logger: Logger;
  trustedProxies: ProxyTrust;
  /** node's limit on the request line and headers together, for the message. */
  maxHeaderSize: number;
  nextRequestId(): string;
  /** Whether a request of this connection is in the pipeline, its answer not yet written. */
  answering(socket: Duplex): boolean;
}

export type ClientErrorListener = (err: Error & { code?: string }, socket: Duplex) => void;

export function clientErrorListener(options: ClientErrorOptions): ClientErrorListener {
  const { pipeline, metrics, logger, trustedProxies, maxHeaderSize } = options;
  // node reports every later chunk of a connection whose parser failed again: answer once.
  const refused = new WeakSet<Duplex>();

  const refusalOf = (code: string | undefined): Refusal => {
    if (code === 'HPE_HEADER_OVERFLOW') {
      return new Refusal('invalid-request', `The request line and headers are larger than this server reads (${maxHeaderSize} bytes in all).`);
    }
    if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return new Refusal('invalid-request', 'The request did not arrive in full in time.');
    return new Refusal('invalid-request', 'The request is not well-formed HTTP/1.1.');
  };

  /** The per-address count, as for any request without a credential; only when the peer is the client. */
  const countPeer = async (socket: Duplex): Promise<{ rate?: RateOutcome; limited?: Refusal }> => {
    const peer = (socket as Socket).remoteAddress;
    // Behind a trusted proxy the client's address is in headers that were never read: count nobody
    // (the proxy's own address is everyone's) and answer without X-RateLimit-*.
    if (!peer || trustedProxies(peer, 0)) return {};
    const target: { rate?: RateOutcome } = {};
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        pipeline.limit(target, addressChecks(peer)),
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, RATE_WAIT_MS);
        }),
      ]);
      return target;
    } catch (err) {
      return err instanceof Refusal ? { rate: target.rate, limited: err } : {};
    } finally {
      clearTimeout(timer);
    }
  };

  /** Writes the refusal as a whole HTTP/1.1 message and closes the connection. */
  const write = (socket: Duplex, err: Error & { code?: string }, refusal: Refusal, rate?: RateOutcome): void => {
    const requestId = options.nextRequestId();
    const status = ERROR_STATUS[refusal.code];
    const body = JSON.stringify(refusal.toBody());
    const headers: Record<string, string | number> = {
      Date: new Date().toUTCString(),
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': Buffer.byteLength(body),
      Connection: 'close',
      'X-Request-Id': requestId,
      ...refusal.headers,
    };
    if (rate) {
      headers['X-RateLimit-Limit'] = rate.nearest.limit;
      headers['X-RateLimit-Remaining'] = rate.nearest.remaining;
      headers['X-RateLimit-Reset'] = rate.nearest.resetSeconds;
    }
    const head = Object.entries(headers)
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('');
    // end(), not destroy(): a close with unread input would reset the connection and could take the
    // answer with it. Whatever the client still sends is read and dropped until it closes, or LINGER_MS.
    socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n${head}\r\n${body}`);
    const linger = setTimeout(() => socket.destroy(), LINGER_MS);
    linger.unref();
    socket.once('close', () => clearTimeout(linger));

    metrics.requests.series('unparsed', '-', String(status)).inc();
    logger.info({ requestId, route: 'unparsed', status, parseError: err.code ?? err.message }, 'request');
  };

  return (err, socket) => {
    if (refused.has(socket)) return;
    refused.add(socket);
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy(); // nobody left to answer
      return;
    }
    if (options.answering(socket)) {
      // The pipeline holds a request of this connection whose body broke off (or a pipelined request
      // after it is malformed) and has written nothing yet: as node does, this answer goes instead
      // (the pipeline's own, later, finds the connection ended), at once, the request already counted.
      write(socket, err, refusalOf(err.code));
      return;
    }
    countPeer(socket)
      .then(({ rate, limited }) => {
        if (socket.writable) write(socket, err, limited ?? refusalOf(err.code), rate);
      })
      .catch((fault) => {
        logger.error({ err: fault }, 'client error answer failed');
        socket.destroy();
      });
  };
}
