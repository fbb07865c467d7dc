/**
 * The credential of a request: `Authorization: Bearer <credential>` (spec §5), read strictly as
 * RFC 6750 §2.1 writes it. The npm parsers looked at either accept any text after the scheme
 * (http-auth-utils, parse-bearer-token) or are unmaintained (auth-header), so this is one small
 * function with its own tests (test/http/credentials.test.ts).
 */

/**
 * `credentials = "Bearer" 1*SP b64token`, `b64token = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="`.
 * The scheme is case-insensitive (RFC 9110 §11.1); node has already trimmed the value's outer whitespace.
 */
const BEARER = /^bearer +([A-Za-z0-9\-._~+/]+=*)$/i;

export type Bearer =
  | { credential: string; problem?: undefined }
  /** No usable credential, and the sentence that says why (for the 401's message). */
  | { credential: null; problem: string };

export function bearerOf(authorization: string): Bearer {
  if (authorization === '') return { credential: null, problem: 'This route needs a credential: Authorization: Bearer <credential>.' };
  const match = BEARER.exec(authorization);
  if (match) return { credential: match[1] };
  const scheme = authorization.split(/\s/, 1)[0];
  if (scheme.toLowerCase() !== 'bearer') return { credential: null, problem: 'Credentials are sent as Authorization: Bearer <credential>.' };
  return { credential: null, problem: 'The Authorization header must be Bearer, a space, then the credential alone (RFC 6750).' };
}
