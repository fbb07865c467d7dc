/**
 * OWASP API Security Top 10 (2023), API8 "Security misconfiguration", as it applies to an API that
 * builds its SQL with bound parameters and answers JSON:
 * - header injection: CR/LF (and the other ways to smuggle a line break) in every header the API
 *   reads and could echo (X-Request-Id, Idempotency-Key, If-None-Match, Origin, Authorization) is
 *   refused by the HTTP parser or never reflected raw: no answer ever carries a header the client
 *   wrote;
 * - SQL and JSON metacharacters in EVERY string field of every route (walked from the route table's
 *   TypeBox schemas, so a new route is covered without touching this file): never a 500, and where a
 *   value is stored it reads back exactly as sent;
 * - error answers leak no stack trace, SQL or internal path;
 * - CORS (docs/api-conventions.md "Browsers (CORS)"): an Origin is given back only when it is exactly
 *   one the environment allows, never `*`, never with credentials, never a look-alike, `null` or an
 *   origin with a line break in it; a preflight of an origin not allowed is the 404 it was before.
 */
import { randomBytes } from 'node:crypto';
import type { TSchema } from '@sinclair/typebox';
import { type AnyRoute, routeTable } from '@hearth/api';
import type { AnyManifest } from '@hearth/core/manifests';
import { mintLicenceKey } from '@hearth/core/licence';
import { organisationNamed } from '@hearth/core/tenancy';
import { type Harness, startHarness } from '../support/harness';
import { NAMESPACE, environment, standardManifests } from '../support/manifests';
import { call, expectError, signIn, type Reply } from '../support/http';
import { rawExchange, type RawAnswer } from '../support/raw-http';
import { sampleOf } from '../support/schema-sample';
import { reportFigure } from '../support/figures';

jest.setTimeout(120_000);

type Json = Record<string, any>;

let h: Harness;
let server: string;
let licence: string;
let playerId: string;
let playerToken: string;

/** The one page alpha-live allows (its spec.cors.allowedOrigins). */
const GAME_PAGE = 'https://game.example.com';

beforeAll(async () => {
  const live = environment('alpha-live', 'alpha') as AnyManifest & { spec: Record<string, unknown> };
  h = await startHarness({ manifests: [...standardManifests(), { ...live, spec: { ...live.spec, cors: { allowedOrigins: [GAME_PAGE] } } } as AnyManifest] });
  await h.core.origins.settled();
  server = h.serverKeys['alpha-live-key'];
  // Covering the sampled product name, so the walk's other fields reach the seats.
  licence = (await mintLicenceKey(h.db, (await organisationNamed(h.db, NAMESPACE, 'alpha'))!.id, 'api8', ['sample'])).key;
  const player = await signIn(h.base, server, 'api8-player', 'Original');
  playerId = player.player.id;
  playerToken = player.accessToken;
});
afterAll(async () => {
  await h.close();
});

/** SQL and JSON metacharacters, and the Unicode a careless layer mangles (spec: text is stored as sent). */
const METACHARACTERS: Record<string, string> = {
  quote: "o'brien",
  'double quote': 'say "hi"',
  backslash: 'C:\\path\\',
  'comment terminator': "x';--",
  'statement break': "x'; DROP TABLE players; --",
  'positional parameter': '$1',
  'LIKE percent': '100%',
  'LIKE underscore': 'a_b',
  'line separator U+2028': 'a\u2028b',
  'paragraph separator U+2029': 'a\u2029b',
  'JSON escape text': '\\u0000 \\n',
  'template braces': '{{7*7}} ${7*7}',
  emoji: 'héllo 🎮',
};
/** Not storable as UTF-8: refused (400), never stored mangled and never a 500. */
const LONE_SURROGATES: Record<string, string> = { 'lone high surrogate': 'a\ud800b', 'lone low surrogate': 'a\udc00b' };
/** A NoSQL operator object where a string is expected. */
const OPERATOR_OBJECT = { $ne: 1 };

/** Where a string lives in a request: its place and a path of property names / array indexes. */
interface StringField {
  where: 'body' | 'query' | 'params';
  path: (string | number)[];
  schema: Json;
}

/** Every string node of a TypeBox schema, through objects, arrays and the branches of unions. */
function stringFields(schema: Json | undefined, where: StringField['where'], path: (string | number)[] = []): StringField[] {
  if (!schema) return [];
  if (schema.type === 'string') return [{ where, path, schema }];
  if (schema.type === 'object' && schema.properties) {
    return Object.entries(schema.properties as Record<string, Json>).flatMap(([name, child]) => stringFields(child, where, [...path, name]));
  }
  if (schema.type === 'array' && schema.items) return stringFields(schema.items, where, [...path, 0]);
  const branches = (schema.anyOf ?? schema.oneOf) as Json[] | undefined;
  if (branches) {
    const seen = new Set<string>();
    return branches.flatMap((b) => stringFields(b, where, path)).filter((f) => !seen.has(f.path.join('.')) && seen.add(f.path.join('.')));
  }
  return [];
}

/** A value the schema takes (enough that the request reaches its handler where it can). */
const sample = (schema: Json, name = '') =>
  sampleOf(schema, (field) => (field === 'playerId' ? playerId : field === 'appKey' ? 'alpha-live' : undefined), name);

function withValue(base: unknown, path: (string | number)[], value: unknown): unknown {
  if (path.length === 0) return value;
  const [head, ...rest] = path;
  const copy: any = Array.isArray(base) ? [...base] : { ...(base as Json) };
  copy[head] = withValue(copy[head] ?? (typeof rest[0] === 'number' ? [] : {}), rest, value);
  return copy;
}

function schemaOf(route: AnyRoute, where: StringField['where']): Json | undefined {
  return (route as unknown as Record<string, TSchema | undefined>)[where] as Json | undefined;
}

/**
 * Percent-encodes text for a URL; a lone surrogate (which encodeURIComponent refuses) goes as the
 * three bytes a careless encoder would write (WTF-8), which are not UTF-8: the server must refuse them.
 */
function encodePart(text: string): string {
  let out = '';
  for (const c of text) {
    const code = c.charCodeAt(0);
    if (c.length === 1 && code >= 0xd800 && code <= 0xdfff) {
      out += [0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f)].map((b) => `%${b.toString(16).toUpperCase()}`).join('');
    } else out += encodeURIComponent(c);
  }
  return out;
}

/** The request for `route` with `value` at `field` (or the sample request when no field). */
function requestFor(route: AnyRoute, field: StringField | undefined, value: unknown) {
  const params = sample(schemaOf(route, 'params') ?? { type: 'object' }) as Json;
  const query = sample(schemaOf(route, 'query') ?? { type: 'object' }) as Json;
  let body = schemaOf(route, 'body') ? sample(schemaOf(route, 'body')!) : undefined;
  const pathParams = { ...params };
  const queryParams = { ...query };
  if (field?.where === 'params') pathParams[field.path[0]] = value;
  if (field?.where === 'query') queryParams[field.path[0]] = value;
  if (field?.where === 'body') body = withValue(body ?? {}, field.path, value);
  const path = route.path.replace(/:([A-Za-z0-9_]+)/g, (_, name: string) => encodePart(String(pathParams[name] ?? sample({ type: 'string' }, name))));
  const search = Object.entries(queryParams)
    .map(([k, v]) => `${encodePart(k)}=${encodePart(String(v))}`)
    .join('&');
  const headers: Record<string, string> = {};
  if (route.idempotency === 'required' || route.idempotency === 'optional') headers['Idempotency-Key'] = randomBytes(12).toString('hex');
  const token = route.credential === 'none' ? undefined : route.credential === 'player' ? playerToken : route.credential === 'licence' ? licence : server;
  return { path: search ? `${path}?${search}` : path, options: { token, body, headers } };
}

const routes = routeTable();
const fieldsByRoute = routes.map((route) => ({
  route,
  fields: [
    ...stringFields(schemaOf(route, 'params'), 'params'),
    ...stringFields(schemaOf(route, 'query'), 'query'),
    // A streamed body is not JSON (the crash upload's minidump): its strings are its path's.
    ...(route.bodyMode === 'stream' ? [] : stringFields(schemaOf(route, 'body'), 'body')),
  ],
}));

/** What an error answer must never carry: a stack frame, SQL, a file path of the server, a driver's words. */
const LEAKS = [
  /\bat \S+ \(/,
  /\/work\//,
  /node_modules/,
  /\.ts:\d+/,
  /\bSELECT\b|\bINSERT INTO\b|\bUPDATE \w+ SET\b/i,
  /syntax error at or near/i,
  /violates .* constraint/i,
  /\bpg_|postgres/i,
  /Error: /,
];

function expectNoLeak(reply: Reply | RawAnswer, context: string): void {
  const text = 'text' in reply ? reply.text : reply.body;
  for (const leak of LEAKS)
    expect({ context, leak: String(leak), matched: leak.test(text) ? text.slice(0, 300) : null }).toEqual({ context, leak: String(leak), matched: null });
}

/** Statuses of the walk's answers, printed for docs/reliability.md. */
const walkStatuses: Record<number, number> = {};

describe('SQL and JSON metacharacters in every string field of every route', () => {
  afterAll(() => reportFigure(`api8 walk answers by status: ${JSON.stringify(walkStatuses)}`));
  test('the walk finds the string fields of the route table (a new route is covered by being in it)', () => {
    const count = fieldsByRoute.reduce((n, r) => n + r.fields.length, 0);
    reportFigure(
      `api8: ${routes.length} routes, ${count} string fields, ${count * (Object.keys(METACHARACTERS).length + Object.keys(LONE_SURROGATES).length + 1)} requests`,
    );
    expect(count).toBeGreaterThan(40);
    const names = fieldsByRoute.flatMap((r) => r.fields.map((f) => `${r.route.operationId}:${f.where}.${f.path.join('.')}`));
    expect(names).toEqual(
      expect.arrayContaining(['renamePlayer:body.displayName', 'signInServer:body.subject', 'listSaves:query.cursor', 'getPlayer:params.playerId']),
    );
  });

  const cases = fieldsByRoute.flatMap(({ route, fields }) =>
    fields.map((field) => [`${route.method} ${route.path} ${field.where}.${field.path.join('.')}`, route, field] as const),
  );
  test.each(cases)('%s: never a 500, every answer documented, no leak', async (_name, route, field) => {
    const payloads: [string, unknown][] = [...Object.entries(METACHARACTERS), ...Object.entries(LONE_SURROGATES)];
    if (field.where === 'body') payloads.push(['operator object', OPERATOR_OBJECT]);
    const seen: Record<string, number> = {};
    for (const [label, value] of payloads) {
      const { path, options } = requestFor(route, field, value);
      let reply: Reply;
      try {
        // call() holds the answer to the document: a 500 (never documented) throws here.
        reply = await call(h.base, route.method, path, options);
      } catch (err) {
        throw new Error(`${label}: ${(err as Error).message}`);
      }
      expect({ label, status: reply.status < 500 }).toEqual({ label, status: true });
      if (reply.status >= 400) expectNoLeak(reply, `${route.operationId} ${label}`);
      if (label in LONE_SURROGATES && field.where === 'body') {
        // Text that is not Unicode cannot be stored as sent: refused, naming the field.
        expect({ label, status: reply.status, error: reply.body?.error }).toEqual({ label, status: 400, error: 'invalid-request' });
      }
      seen[reply.status] = (seen[reply.status] ?? 0) + 1;
      walkStatuses[reply.status] = (walkStatuses[reply.status] ?? 0) + 1;
    }
    expect(Object.keys(seen).length).toBeGreaterThan(0);
  });
});

describe('stored text reads back exactly as sent', () => {
  test.each(Object.entries(METACHARACTERS).filter(([, v]) => v.length <= 40))('display name: %s', async (_label, value) => {
    const renamed = await call(h.base, 'PATCH', '/players/me', { token: playerToken, body: { displayName: value } });
    expect(renamed.status).toBe(200);
    expect(renamed.body.displayName).toBe(value);
    expect((await call(h.base, 'GET', '/players/me', { token: playerToken })).body.displayName).toBe(value);
    expect((await call(h.base, 'GET', `/players/${playerId}`, { token: server })).body.displayName).toBe(value);
  });

  test('a save holding every metacharacter as values and as keys reads back exactly', async () => {
    const data = { values: METACHARACTERS, keys: Object.fromEntries(Object.values(METACHARACTERS).map((v, i) => [v, i])), operator: OPERATOR_OBJECT };
    const written = await call(h.base, 'PUT', `/players/${playerId}/data/meta`, { token: server, body: { data } });
    expect(written.status).toBe(201);
    expect((await call(h.base, 'GET', `/players/${playerId}/data/meta`, { token: server })).body.data).toEqual(data);
  });

  test.each(Object.entries(LONE_SURROGATES))('a save holding a %s (as a value, as a key) is 400 naming where, nothing written', async (_label, value) => {
    for (const [data, field] of [
      [{ text: value }, 'body.data.text'],
      [{ [value]: 1 }, 'body.data'],
    ] as const) {
      const reply = await call(h.base, 'PUT', `/players/${playerId}/data/surrogate`, { token: server, body: { data } });
      expectError(reply, 400, 'invalid-request', field);
      expectError(await call(h.base, 'GET', `/players/${playerId}/data/surrogate`, { token: server }), 404, 'not-found');
    }
  });

  test('a sign-in subject with every metacharacter makes one player per subject, found again by it', async () => {
    for (const value of Object.values(METACHARACTERS)) {
      // Prefixed: the walk above signed in with the bare values already.
      const subject = `stored:${value}`;
      const first = await call(h.base, 'POST', '/auth/server', { token: server, body: { subject } });
      expect({ value, status: first.status }).toEqual({ value, status: 201 });
      const again = await call(h.base, 'POST', '/auth/server', { token: server, body: { subject } });
      expect({ value, status: again.status, id: again.body.player.id }).toEqual({ value, status: 200, id: first.body.player.id });
    }
    // The LIKE characters matched nothing but themselves: 'a_b' did not find 'axb', '100%' not '1000'.
    const other = await call(h.base, 'POST', '/auth/server', { token: server, body: { subject: 'stored:axb' } });
    expect(other.status).toBe(201);
    expect((await call(h.base, 'POST', '/auth/server', { token: server, body: { subject: 'stored:1000' } })).status).toBe(201);
  });
});

/** A raw request with `headerLines` inserted, on a connection the server closes after answering. */
function rawGet(path: string, headerLines: string): Promise<RawAnswer> {
  return rawExchange(h.base, `GET /v1${path} HTTP/1.1\r\nHost: hearth\r\nAuthorization: Bearer ${server}\r\n${headerLines}Connection: close\r\n\r\n`);
}

/** Nothing the client wrote after a line break became a header of the answer. */
function expectNotInjected(answer: RawAnswer): void {
  expect(answer.headers['x-injected']).toBeUndefined();
  expect(answer.raw).not.toMatch(/\r\nX-Injected:/i);
  expect(answer.raw).not.toMatch(/\r\nSet-Cookie:/i);
}

describe('header injection: line breaks in headers the API reads are never reflected', () => {
  const HEADERS = ['X-Request-Id', 'Idempotency-Key', 'If-None-Match', 'Origin', 'Authorization'];
  const BREAKS: Record<string, string> = {
    'bare LF': 'abc\nX-Injected: 1',
    'bare CR': 'abc\rX-Injected: 1',
    'obsolete line folding': 'abc\r\n X-Injected: 1',
    NUL: 'abc\u0000X-Injected: 1',
  };
  const cases = HEADERS.flatMap((header) => Object.entries(BREAKS).map(([kind, value]) => [header, kind, value] as const));

  test.each(cases)('%s with a %s: refused by the parser or not reflected', async (header, _kind, value) => {
    const target = header === 'If-None-Match' ? '/config/tables' : header === 'Idempotency-Key' ? `/players/${playerId}/data/hdr` : '/flags';
    const answer = await rawGet(target, `${header}: ${value}\r\n`);
    expectNotInjected(answer);
    expect(answer.status).toBeGreaterThanOrEqual(200);
    expect(answer.status).toBeLessThan(500);
    if (answer.status >= 400) {
      const body = JSON.parse(answer.body);
      expect(Object.keys(body).every((k) => ['error', 'message', 'details'].includes(k))).toBe(true);
      expectNoLeak(answer, `${header}`);
    }
    // The request id answered is one the API made or a single-line one sent: never the broken value.
    expect(answer.headers['x-request-id']).toMatch(/^[\x21-\x7e]{1,128}$/);
  });

  test('percent-encoded CR/LF in the path and query stay in the JSON body, never in a header', async () => {
    for (const path of ['/nowhere%0d%0aX-Injected:%201', `/players/${playerId}/data?cursor=%0d%0aX-Injected:%201`, '/players/a%0d%0aX-Injected:1']) {
      const answer = await rawGet(path, '');
      expectNotInjected(answer);
      expect(answer.status).toBeGreaterThanOrEqual(400);
      expect(answer.status).toBeLessThan(500);
      expectNoLeak(answer, path);
    }
  });

  test('an X-Request-Id that is one printable line is echoed as sent; any other is replaced', async () => {
    const kept = await call(h.base, 'GET', '/flags', { token: server, headers: { 'X-Request-Id': 'trace-1;--\'"' } });
    expect(kept.headers.get('x-request-id')).toBe('trace-1;--\'"');
    const replaced = await call(h.base, 'GET', '/flags', { token: server, headers: { 'X-Request-Id': 'has space' } });
    expect(replaced.headers.get('x-request-id')).not.toBe('has space');
    expect(replaced.headers.get('x-request-id')).toMatch(/^[\x21-\x7e]{8,}$/);
  });

  test('CORS: only the exact allowed origin is given back; no look-alike, null or wildcard; never credentials', async () => {
    const allowed = await call(h.base, 'GET', '/flags', { token: server, headers: { Origin: GAME_PAGE } });
    expect(allowed.headers.get('access-control-allow-origin')).toBe(GAME_PAGE);
    expect(allowed.headers.get('access-control-allow-credentials')).toBeNull();
    const attempts = [
      'https://evil.example',
      'null',
      '*',
      `${GAME_PAGE}.evil.test`,
      'https://evilgame.example.com',
      `${GAME_PAGE}/`,
      'http://game.example.com',
      `${GAME_PAGE}:8443`,
      'https://GAME.EXAMPLE.COM',
    ];
    for (const origin of attempts) {
      for (const reply of [
        await call(h.base, 'GET', '/flags', { token: server, headers: { Origin: origin } }),
        await call(h.base, 'GET', '/players/nobody', { token: server, headers: { Origin: origin } }),
        await call(h.base, 'GET', '/flags', { token: 'hsk_mistyped_key', headers: { Origin: origin } }),
      ]) {
        for (const [name, value] of reply.headers) {
          expect({ origin, name, cors: name.startsWith('access-control-') }).toEqual({ origin, name, cors: false });
          if (origin !== '*' && origin !== 'null') expect(value).not.toContain(origin);
        }
      }
      const preflight = await fetch(`${h.base}/flags`, { method: 'OPTIONS', headers: { Origin: origin, 'Access-Control-Request-Method': 'GET' } });
      expect({ origin, status: preflight.status }).toEqual({ origin, status: 404 });
      expect([...preflight.headers.keys()].some((n) => n.startsWith('access-control-'))).toBe(false);
    }
    // The licence routes serve no page, even the allowed one.
    const licenceCall = await call(h.base, 'POST', '/licence/check', { token: licence, body: {}, headers: { Origin: GAME_PAGE } });
    expect([...licenceCall.headers.keys()].some((n) => n.startsWith('access-control-'))).toBe(false);
  });

  test('CORS: an allowed origin with a line break after it is refused by the parser or not reflected', async () => {
    for (const value of [`${GAME_PAGE}\nX-Injected: 1`, `${GAME_PAGE}\r\n X-Injected: 1`, `${GAME_PAGE}\u0000X-Injected: 1`]) {
      const answer = await rawGet('/flags', `Origin: ${value}\r\n`);
      expectNotInjected(answer);
      expect(answer.headers['access-control-allow-origin']).toBeUndefined();
    }
  });

  test('answers carry nosniff-safe JSON: Content-Type application/json; charset=utf-8, no X-Powered-By', async () => {
    for (const reply of [await call(h.base, 'GET', '/flags', { token: server }), await call(h.base, 'GET', '/nowhere', { token: server })]) {
      expect(reply.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(reply.headers.get('x-powered-by')).toBeNull();
      expect(reply.headers.get('server')).toBeNull();
    }
  });
});

describe('error answers leak nothing of the inside', () => {
  test('malformed JSON, wrong types, unknown routes, bad ids and bad cursors: messages free of stacks, SQL and paths', async () => {
    const replies = [
      await call(h.base, 'PATCH', '/players/me', { token: playerToken, rawBody: '{"displayName": "x"', headers: { 'Content-Type': 'application/json' } }),
      await call(h.base, 'PATCH', '/players/me', { token: playerToken, body: { displayName: 42 } }),
      await call(h.base, 'GET', "/players/1' OR '1'='1", { token: server }),
      await call(h.base, 'GET', `/players/${playerId}/data?cursor=eyJ4IjoxfQ.AAAA`, { token: server }),
      await call(h.base, 'GET', '/../../etc/passwd', { token: server }),
      await call(h.base, 'GET', '/flags', { token: "hk_live_'--" }),
    ];
    for (const reply of replies) {
      expect(reply.status).toBeGreaterThanOrEqual(400);
      expect(reply.status).toBeLessThan(500);
      expectNoLeak(reply, reply.text);
    }
  });
});
