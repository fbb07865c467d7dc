/**
 * A thin real-HTTP client for tests (Node's fetch). Every answer it receives is checked against the
 * API's OpenAPI document (contract.ts): an answer the document does not describe fails the test.
 */
import { checkAnswer, type ContractCheck } from './contract';

export interface Reply<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
  /** Whether the answer was held to the document, or why not. */
  contract: ContractCheck;
}

export interface CallOptions {
  token?: string;
  body?: unknown;
  /** Sent as is (not JSON-encoded). */
  rawBody?: string | Buffer;
  headers?: Record<string, string>;
}

export async function call<T = any>(base: string, method: string, path: string, options: CallOptions = {}): Promise<Reply<T>> {
  const headers: Record<string, string> = { ...(options.headers ?? {}) };
  if (options.token) headers.Authorization = `Bearer ${options.token}`;
  let body: string | Buffer | undefined;
  if (options.rawBody !== undefined) body = options.rawBody;
  else if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['Content-Type'] ??= 'application/json';
  }
  const url = base + path;
  const res = await fetch(url, { method, headers, body });
  const text = await res.text();
  const contract = checkAnswer({ method, url, status: res.status, header: (name) => res.headers.get(name), text });
  let parsed: unknown = undefined;
  if (text.length > 0) {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
  }
  return { status: res.status, headers: res.headers, body: parsed as T, text, contract };
}

/** Signs a player in with a server key; answers the tokens and the player. */
export async function signIn(base: string, serverKey: string, subject: string, displayName?: string) {
  const reply = await call(base, 'POST', '/auth/server', { token: serverKey, body: displayName === undefined ? { subject } : { subject, displayName } });
  if (reply.status !== 200 && reply.status !== 201) throw new Error(`sign-in failed: ${reply.status} ${reply.text}`);
  return reply.body as { accessToken: string; refreshToken: string; expiresIn: number; player: { id: string; displayName: string | null; createdAt: string } };
}

/** Asserts the spec's error shape and code; answers the body for further checks. */
export function expectError(reply: Reply, status: number, code: string, field?: string) {
  expect({ status: reply.status, error: reply.body?.error }).toEqual({ status, error: code });
  expect(typeof reply.body.message).toBe('string');
  expect(Object.keys(reply.body).every((k) => ['error', 'message', 'details'].includes(k))).toBe(true);
  if (field !== undefined) expect(reply.body.details?.field).toBe(field);
  return reply.body;
}
