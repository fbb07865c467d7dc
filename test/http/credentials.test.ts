/** bearerOf: the Authorization header read strictly per RFC 6750 §2.1 (apps/api/src/http/credentials.ts). */
import { bearerOf } from '../../apps/api/src/http/credentials';

const JWT = 'eyJhbGciOiJFZERTQSJ9.eyJzdWIiOiJwIn0.c2lnbmF0dXJl';

test.each([
  ['a JWT', `Bearer ${JWT}`, JWT],
  ['a server key', 'Bearer hsk_0123456789abcdef_secret', 'hsk_0123456789abcdef_secret'],
  ['every b64token character', 'Bearer aZ09-._~+/', 'aZ09-._~+/'],
  ['trailing padding', 'Bearer abc==', 'abc=='],
  ['the scheme in any case', `bEaReR ${JWT}`, JWT],
  ['several spaces after the scheme', `Bearer    ${JWT}`, JWT],
])('%s is a credential', (_name, header, credential) => {
  expect(bearerOf(header)).toEqual({ credential });
});

test('no header: a credential is needed', () => {
  expect(bearerOf('')).toEqual({ credential: null, problem: expect.stringMatching(/needs a credential/) });
});

test.each([['Basic dXNlcjpwYXNz'], ['Token abc'], ['Bearerabc'], [JWT]])('%s is another scheme (or none)', (header) => {
  expect(bearerOf(header)).toEqual({ credential: null, problem: expect.stringMatching(/Authorization: Bearer/) });
});

test.each([
  ['the scheme alone', 'Bearer'],
  ['a tab instead of a space', 'Bearer\tabc'],
  ['two tokens', 'Bearer abc def'],
  ['a trailing comma', 'Bearer abc,'],
  ['padding in the middle', 'Bearer ab=c'],
  ['only padding', 'Bearer =='],
  ['auth-params instead of a token', 'Bearer realm="x"'],
  ['a non-ASCII character', 'Bearer abcé'],
  ['a line break', 'Bearer abc\ndef'],
])('%s is malformed', (_name, header) => {
  expect(bearerOf(header)).toEqual({ credential: null, problem: expect.stringMatching(/RFC 6750/) });
});
