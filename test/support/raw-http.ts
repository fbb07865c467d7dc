/**
 * Requests fetch will not make: over node:http for chunked bodies, bodies cut short and bodies that
 * stream on; over node:net for bytes that are not well-formed HTTP at all.
 */
import http from 'node:http';
import net from 'node:net';
import type { Reply } from './http';
import { checkAnswer } from './contract';

/** A request over node:http whose body `write` sends; resolves with the answer as soon as it is complete. */
export function rawRequest(
  base: string,
  method: string,
  path: string,
  headers: Record<string, string | number>,
  write: (req: http.ClientRequest) => Promise<void>,
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const url = new URL(base + path);
    const req = http.request({ host: url.hostname, port: url.port, path: url.pathname + url.search, method, headers });
    let answered = false;
    req.on('response', (res) => {
      answered = true;
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const responseHeaders = new Headers();
        for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') responseHeaders.set(k, v);
        // Held to the document like every answer fetch gets (test/support/contract.ts); a violation fails the request.
        try {
          const contract = checkAnswer({ method, url: url.href, status: res.statusCode!, header: (name) => responseHeaders.get(name), text });
          resolve({ status: res.statusCode!, headers: responseHeaders, body: text ? JSON.parse(text) : undefined, text, contract });
        } catch (err) {
          reject(err);
        }
        req.destroy();
      });
    });
    // The server may answer and close before the client has written everything: only a failure
    // before any answer is an error.
    req.on('error', (err) => {
      if (!answered) reject(err);
    });
    write(req).catch((err) => {
      if (!answered) reject(err);
    });
  });
}

/** Writes `body` in pieces with pauses, then ends: no Content-Length, so node sends it chunked. */
export function chunked(body: string, pieces = 4) {
  return async (req: http.ClientRequest): Promise<void> => {
    const size = Math.ceil(body.length / pieces);
    for (let i = 0; i < body.length; i += size) {
      if (req.destroyed) return;
      req.write(body.slice(i, i + size));
      await new Promise((r) => setTimeout(r, 5));
    }
    req.end();
  };
}

/**
 * Streams chunks of `chunkBytes` until the server answers (or `maxBytes` went out, then ends), and
 * reports how many bytes were written: a body that never ends, as far as the server can tell. It
 * writes as a real client does, no faster than the connection takes them (a write the socket's
 * buffer refuses waits for `drain`), so what it counts is at most a socket buffer ahead of what the
 * server has read, however slow the server is to answer.
 */
export function endless(chunkBytes: number, maxBytes: number, sent: { bytes: number }) {
  const chunk = ' '.repeat(chunkBytes);
  return async (req: http.ClientRequest): Promise<void> => {
    let answered = false;
    req.on('response', () => (answered = true));
    while (!answered && !req.destroyed && sent.bytes < maxBytes) {
      const taken = req.write(chunk);
      sent.bytes += chunkBytes;
      await new Promise<void>((resolve) => {
        if (taken) {
          setTimeout(resolve, 2);
          return;
        }
        const go = () => {
          for (const event of ['drain', 'response', 'close']) req.off(event, go);
          resolve();
        };
        for (const event of ['drain', 'response', 'close']) req.once(event, go);
      });
    }
    if (!req.destroyed) req.end();
  };
}

/** JSON padded with trailing spaces to exactly `bytes` bytes (still valid JSON). */
export function padded(value: unknown, bytes: number): string {
  const json = JSON.stringify(value);
  return json + ' '.repeat(bytes - Buffer.byteLength(json));
}

export interface RawAnswer {
  /** Everything the server sent before closing. */
  raw: string;
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * Sends `bytes` over a plain TCP connection and reads until the server closes it (bounded by
 * `withinMs`). The answer's head is split by hand: the point is to see exactly what went out.
 */
export function rawExchange(base: string, bytes: string | Buffer, withinMs = 5000): Promise<RawAnswer> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(url.port), url.hostname);
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`the server did not close the connection within ${withinMs} ms; got: ${Buffer.concat(chunks).toString('latin1').slice(0, 500)}`));
    }, withinMs);
    socket.on('connect', () => socket.write(bytes));
    socket.on('data', (c: Buffer) => chunks.push(c));
    // A reset after the answer arrived still leaves the answer to read.
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      const raw = Buffer.concat(chunks).toString('utf8');
      const split = raw.indexOf('\r\n\r\n');
      const head = split < 0 ? raw : raw.slice(0, split);
      const [statusLine, ...lines] = head.split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      resolve({ raw, status: Number(/^HTTP\/1\.1 (\d{3}) /.exec(statusLine ?? '')?.[1] ?? 0), headers, body: split < 0 ? '' : raw.slice(split + 4) });
    });
  });
}

/**
 * Opens a raw connection to `port` on 127.0.0.1, sends `first`, then `piece` every 100 ms until the
 * server closes it or `giveUpMs` passes: a slow client. Answers what the server sent and when it
 * closed (ms after opening; null when it never did).
 */
export function trickle(port: number, first: string, piece: string, giveUpMs: number): Promise<{ answer: string; closedAfterMs: number | null }> {
  return new Promise((resolve) => {
    const started = Date.now();
    const socket = net.connect(port, '127.0.0.1');
    let answer = '';
    let timer: NodeJS.Timeout | undefined;
    const done = (closedAfterMs: number | null) => {
      clearInterval(timer);
      clearTimeout(giveUp);
      socket.destroy();
      resolve({ answer, closedAfterMs });
    };
    const giveUp = setTimeout(() => done(null), giveUpMs);
    socket.on('connect', () => {
      socket.write(first);
      timer = setInterval(() => socket.write(piece), 100);
    });
    socket.on('data', (chunk) => (answer += chunk.toString('latin1')));
    socket.on('error', () => undefined);
    socket.on('close', () => done(Date.now() - started));
  });
}

/**
 * A connection of our own to the server of `base`, to write by hand: what the server sent so far
 * (`answers`, split at each status line), and whether it closed. Bounded by the caller's waits.
 */
export function openConnection(base: string) {
  const url = new URL(base);
  const socket = net.connect(Number(url.port), url.hostname);
  const seen = { text: '', closed: false };
  socket.on('data', (chunk: Buffer) => (seen.text += chunk.toString('latin1')));
  socket.on('error', () => undefined); // a cut connection shows as closed
  socket.on('close', () => (seen.closed = true));
  return { socket, seen, answers: () => seen.text.split('HTTP/1.1 ').slice(1) };
}
