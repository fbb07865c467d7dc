/**
 * Request bodies: the size limit (from Content-Length before reading, counted while streaming), the
 * JSON media type (`content-type`), and JSON parsing that refuses prototype keys (`secure-json-parse`,
 * fastify's parser). Every route's body goes through here, those that ignore theirs and those that
 * stream theirs too: every body is held to its route's limit, so no route is a way to stream without end.
 */
import { Transform, type Readable } from 'node:stream';
import contentType from 'content-type';
import getRawBody from 'raw-body';
import secureJson from 'secure-json-parse';
import { refuse } from '@hearth/core';
import type { Exchange } from './exchange';

/** Whether the declared Content-Length alone is over `limit` (then refused before a byte is read). */
export function declaredTooLarge(exchange: Exchange, limit: number): boolean {
  const declared = exchange.contentLength;
  return declared !== undefined && declared > limit;
}

/** A request has a body when it declares a length above zero or streams one in chunks. */
export function hasBody(exchange: Exchange): boolean {
  const length = exchange.contentLength;
  return (length !== undefined && length > 0) || exchange.header('transfer-encoding') !== '';
}

/**
 * The request's body as JSON (`undefined` when there is none), or, for a route that ignores its
 * body, `undefined` once the body has been read and dropped within the limit.
 */
export async function readBody(exchange: Exchange, limit: number, mode: 'json' | 'ignored' = 'json'): Promise<unknown> {
  if (!hasBody(exchange)) return undefined;
  const bytes = await readBytes(exchange, limit);
  if (mode === 'ignored' || bytes.length === 0) return undefined;
  if (!isJsonMediaType(exchange.header('content-type'))) {
    throw refuse.invalid('body', 'The body must be JSON, sent with Content-Type: application/json.');
  }
  return parseJsonBody(decodeUtf8(bytes));
}

/** Reads the whole body, counting bytes as they stream (a body with no Content-Length is held to the limit too). */
async function readBytes(exchange: Exchange, limit: number): Promise<Buffer> {
  try {
    return await getRawBody(exchange.req, { length: exchange.contentLength, limit });
  } catch (err) {
    dropTheRest(exchange);
    if ((err as getRawBody.RawBodyError).type === 'entity.too.large') throw refuse.tooLarge(limit);
    throw refuse.invalid('body', 'The body could not be read.');
  }
}

/** How long the rest of a refused body is read and dropped before the connection is cut. */
const DROP_REST_MS = 2_000;

/**
 * A body refused before its end: the rest the client still sends is read and dropped, as node does
 * for a body nobody began to read, so the request ends and the connection is free for the next one.
 * Left unread, the connection would hold a request that never ends (a graceful close would wait for
 * it until the request timeout, a minute), and closing at once would reset a client still sending
 * before it read the answer. A client that sends on past DROP_REST_MS is cut off.
 */
export function dropTheRest(exchange: Exchange): void {
  const { req } = exchange;
  if (req.complete) return;
  const cut = setTimeout(() => req.socket.destroy(), DROP_REST_MS).unref();
  req.once('end', () => clearTimeout(cut));
  req.once('close', () => clearTimeout(cut));
  req.resume();
}

/**
 * The body as a stream, unread, for a route that takes it as it arrives (`bodyMode: 'stream'`): it
 * counts the bytes as they pass and fails with payload-too-large past `limit` (the declared length was
 * checked before, declaredTooLarge), and with invalid-request when the client cuts the body off, so
 * whatever it is piped into sees a failed stream rather than a short one. Nothing is buffered here.
 */
export function limitedBodyStream(exchange: Exchange, limit: number): Readable {
  const { req } = exchange;
  let seen = 0;
  const counted = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      seen += chunk.length;
      if (seen > limit) {
        req.unpipe(counted); // the answer goes out while the client may still be sending
        dropTheRest(exchange);
        done(refuse.tooLarge(limit));
        return;
      }
      done(null, chunk);
    },
  });
  const cutOff = () => {
    if (!req.complete) counted.destroy(refuse.invalid('body', 'The body was cut off before its end.'));
  };
  req.once('error', cutOff);
  req.once('close', cutOff);
  req.pipe(counted);
  return counted;
}

/**
 * `application/json`, with or without parameters; a charset, when given, must be UTF-8 (RFC 8259 §8.1:
 * JSON exchanged between systems is UTF-8). A header `content-type` cannot parse is not JSON.
 */
export function isJsonMediaType(header: string): boolean {
  if (header === '') return false;
  let parsed: contentType.ParsedMediaType;
  try {
    parsed = contentType.parse(header);
  } catch {
    return false;
  }
  if (parsed.type !== 'application/json') return false;
  const charset = parsed.parameters.charset;
  return charset === undefined || charset.toLowerCase() === 'utf-8';
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** Bytes that are not UTF-8 are not JSON text: refused rather than patched with U+FFFD. */
function decodeUtf8(bytes: Buffer): string {
  try {
    return UTF8.decode(bytes);
  } catch {
    throw refuse.invalid('body', 'The body is not valid UTF-8.');
  }
}

/**
 * Parses JSON text, refusing `__proto__` keys and `constructor.prototype` anywhere in it: such a body
 * is not stripped but refused, so what a handler sees is always exactly what was sent.
 */
export function parseJsonBody(text: string): unknown {
  refuseDeepNesting(text);
  let value: unknown;
  try {
    // `safe` answers null for a forbidden key; malformed JSON still throws.
    value = secureJson.parse(text, null, { protoAction: 'error', constructorAction: 'error', safe: true });
  } catch {
    throw refuse.invalid('body', 'The body is not valid JSON.');
  }
  if (value === null && text.trim() !== 'null') {
    throw refuse.invalid('body', 'The body may not hold a "__proto__" key or a "constructor" with a "prototype".');
  }
  return value;
}

/**
 * The deepest a JSON body may nest (arrays and objects), far past any real save or request. Without a
 * bound, a save of `[[[[...` (a 512 KB body holds 260,000 levels) parsed fine but overflowed the stack
 * of every recursive walk after it (the NUL check, the validator, JSON.stringify): a 500, found by
 * test/security/api4-resource-consumption.test.ts. Refused on the text, before anything is built.
 */
export const MAX_JSON_DEPTH = 128;

/** Counts bracket depth outside strings, in one pass over the text; past MAX_JSON_DEPTH is 400 naming body. */
function refuseDeepNesting(text: string): void {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c /* \\ */)
        i++; // an escape: the next character is never a closing quote
      else if (c === 0x22 /* " */) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b /* [ */ || c === 0x7b /* { */) {
      if (++depth > MAX_JSON_DEPTH) throw refuse.invalid('body', `The body nests deeper than ${MAX_JSON_DEPTH} levels of arrays and objects.`);
    } else if (c === 0x5d /* ] */ || c === 0x7d /* } */) depth--;
  }
}
