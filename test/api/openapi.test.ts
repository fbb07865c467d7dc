/**
 * GET /openapi.json (spec §4, §9; DESIGN.md): an OpenAPI 3.1 document derived from the route table.
 * It must validate, describe every route with its credential, parameters, body and every refusal
 * the route can answer, and describe what the routes really answer.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { ERROR_STATUS } from '@hearth/core';
import { AnyRoute, refusalsOf, routeTable } from '@hearth/api';
import { Harness, startHarness } from '../support/harness';
import { call, signIn } from '../support/http';
import { gameConfig } from '../support/manifests';

const REPO = path.resolve(__dirname, '../..');

/**
 * The validator is ESM only and jest runs these tests as CommonJS without the VM-modules flag, so it
 * runs in a node process of its own, reading the document on stdin.
 */
function validateOpenApi(doc: unknown): { valid: boolean; version?: string; errors?: unknown } {
  const script = `
    import { Validator } from '@seriousme/openapi-schema-validator';
    let input = '';
    for await (const chunk of process.stdin) input += chunk;
    const validator = new Validator();
    const result = await validator.validate(JSON.parse(input));
    process.stdout.write(JSON.stringify({ valid: result.valid, version: validator.version, errors: result.errors }));
  `;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: REPO, input: JSON.stringify(doc), encoding: 'utf8' });
  return JSON.parse(out);
}

const EXPECTED_SECURITY: Record<AnyRoute['credential'], Record<string, string[]>[]> = {
  none: [],
  server: [{ serverKey: [] }],
  player: [{ playerToken: [] }],
  either: [{ serverKey: [] }, { playerToken: [] }],
  'either-or-dashboard': [{ serverKey: [] }, { playerToken: [] }, { dashboardToken: [] }],
};

let h: Harness;
let doc: any;
const routes = routeTable();

beforeAll(async () => {
  h = await startHarness();
  const reply = await call(h.base, 'GET', '/openapi.json');
  expect(reply.status).toBe(200);
  expect(reply.headers.get('content-type')).toMatch(/^application\/json/);
  doc = reply.body;
});
afterAll(async () => {
  await h.close();
});

function operationOf(route: AnyRoute): any {
  const p = route.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
  return doc.paths[p]?.[route.method.toLowerCase()];
}

/** Follows a local `$ref` (`#/components/...`). */
function deref(node: any): any {
  if (node && typeof node.$ref === 'string') {
    return node.$ref
      .slice(2)
      .split('/')
      .reduce((at: any, part: string) => at?.[part], doc);
  }
  return node;
}

/** The error codes a refusal response names in its schema (an `enum` on `error`). */
function codesOf(response: any): string[] {
  const found: string[] = [];
  const walk = (schema: any) => {
    if (!schema || typeof schema !== 'object') return;
    if (schema.$ref) return;
    const e = schema.properties?.error?.enum;
    if (Array.isArray(e)) found.push(...e);
    for (const part of [...(schema.allOf ?? []), ...(schema.anyOf ?? []), ...(schema.oneOf ?? [])]) walk(part);
  };
  walk(response?.content?.['application/json']?.schema);
  return found;
}

test('the document validates as OpenAPI 3.1 and reports version 1.0.0', () => {
  const result = validateOpenApi(doc);
  expect(result.errors).toBeUndefined();
  expect(result).toEqual(expect.objectContaining({ valid: true, version: '3.1' }));
  expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
  expect(doc.info.version).toBe('1.0.0');
  expect(typeof doc.info.title).toBe('string');

  // The validator is not a yes-machine: a broken document fails it.
  const broken = JSON.parse(JSON.stringify(doc));
  delete broken.info;
  broken.paths['/flags'].get.responses = 'none';
  expect(validateOpenApi(broken).valid).toBe(false);
});

test('paths are relative to a server URL that carries /v1, as the spec writes them', () => {
  expect(doc.servers).toEqual([expect.objectContaining({ url: '/v1' })]);
  expect(Object.keys(doc.paths)).toContain('/config/tables/{key}');
  expect(Object.keys(doc.paths).filter((p) => p.startsWith('/v1/'))).toEqual([]);
});

test('the document holds exactly the routes of the table', () => {
  const inDoc = Object.entries(doc.paths).flatMap(([p, ops]) => Object.keys(ops as object).map((m) => `${m.toUpperCase()} ${p}`));
  const inTable = routes.map((r) => `${r.method} ${r.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}')}`);
  expect(inDoc.sort()).toEqual(inTable.sort());
  const ids = routes.map((r) => operationOf(r).operationId);
  expect(ids).toEqual(routes.map((r) => r.operationId));
  expect(new Set(ids).size).toBe(ids.length);
});

test.each(routes.map((r) => [`${r.method} ${r.path}`, r] as const))('%s: security, parameters and body', (_name, route) => {
  const op = operationOf(route);
  expect(op).toBeDefined();

  expect(op.security).toEqual(EXPECTED_SECURITY[route.credential]);
  for (const requirement of op.security as Record<string, string[]>[]) {
    for (const scheme of Object.keys(requirement)) expect(doc.components.securitySchemes[scheme]).toEqual(expect.objectContaining({ type: 'http', scheme: 'bearer' }));
  }
  if (route.service) expect(op['x-hearth-service']).toBe(route.service);

  const params: any[] = (op.parameters ?? []).map(deref);
  const named = (where: string) => params.filter((p) => p.in === where);

  // Every path parameter of the template, required, with its schema.
  const templateNames = [...route.path.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1]);
  expect(named('path').map((p) => p.name).sort()).toEqual([...templateNames].sort());
  for (const p of named('path')) {
    expect(p.required).toBe(true);
    expect(p.schema).toEqual(expect.objectContaining({ type: 'string' }));
  }

  // Every query parameter the route takes, required as its schema says.
  const query = (route.query ?? { properties: {} }) as any;
  expect(named('query').map((p) => p.name).sort()).toEqual(Object.keys(query.properties ?? {}).sort());
  for (const p of named('query')) {
    expect(p.required).toBe((query.required ?? []).includes(p.name));
    expect(p.schema.type).toBe(query.properties[p.name].type);
  }

  // Headers the route reads.
  const idem = named('header').find((p) => p.name === 'Idempotency-Key');
  if (route.idempotency === 'required' || route.idempotency === 'optional') {
    expect(idem).toEqual(expect.objectContaining({ required: route.idempotency === 'required' }));
    expect(idem.schema).toEqual(expect.objectContaining({ minLength: 1, maxLength: 128 }));
  } else {
    expect(idem).toBeUndefined();
  }
  expect(named('header').some((p) => p.name === 'If-None-Match')).toBe(route.etag !== undefined);

  // The body, as the route validates it: same fields, same required ones, no others allowed.
  if (route.body) {
    expect(op.requestBody.required).toBe(true);
    const schema = op.requestBody.content['application/json'].schema;
    const body = route.body as any;
    expect(Object.keys(schema.properties ?? {}).sort()).toEqual(Object.keys(body.properties ?? {}).sort());
    expect([...(schema.required ?? [])].sort()).toEqual([...(body.required ?? [])].sort());
    expect(schema.additionalProperties).toBe(false);
    expect(JSON.stringify(schema)).not.toContain('x-trim');
  } else {
    expect(op.requestBody).toBeUndefined();
  }
});

test.each(routes.map((r) => [`${r.method} ${r.path}`, r] as const))('%s: answers and every refusal it can give', (_name, route) => {
  const op = operationOf(route);
  const responses = op.responses as Record<string, any>;

  expect(responses[String(route.success.status)]).toBeDefined();
  for (const also of route.success.also ?? []) expect(responses[String(also.status)]).toBeDefined();
  if (route.etag) {
    expect(responses['304']).toBeDefined();
    expect(responses[String(route.success.status)].headers.ETag).toBeDefined();
  }

  const codes = [...refusalsOf(route), 'not-found' as const];
  for (const code of codes) {
    const status = String(ERROR_STATUS[code]);
    const response = responses[status];
    expect({ code, status, documented: response !== undefined }).toEqual({ code, status, documented: true });
    expect({ code, named: codesOf(response).includes(code) }).toEqual({ code, named: true });
  }
  // And nothing a route cannot answer.
  for (const [status, response] of Object.entries(responses)) {
    if (Number(status) < 400) continue;
    for (const code of codesOf(response)) {
      expect(codes).toContain(code);
      expect(String(ERROR_STATUS[code as keyof typeof ERROR_STATUS])).toBe(status);
    }
  }

  // Every answer declares the rate-limit headers; a 429 adds Retry-After.
  for (const response of Object.values(responses)) {
    for (const name of ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset']) {
      expect(deref(response.headers?.[name])).toEqual(expect.objectContaining({ schema: { type: 'integer' } }));
    }
  }
  expect(responses['429'].headers['Retry-After']).toBeDefined();
});

test('every refusal response is in the error shape', () => {
  const error = doc.components.schemas.Error;
  expect(error.required).toEqual(['error', 'message']);
  expect(Object.keys(error.properties).sort()).toEqual(['details', 'error', 'message']);
  for (const code of Object.keys(ERROR_STATUS)) expect(error.properties.error.enum).toContain(code);
});

describe('the document describes what the routes really answer', () => {
  let ajv: Ajv2020;
  beforeAll(() => {
    ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    // The document's components under an id of their own, so `#/components/...` refs resolve.
    ajv.addSchema({ $id: 'doc', components: doc.components });
  });

  /** The response schema of an operation for a status, compiled with the document's components. */
  function responseValidator(method: string, p: string, status: number) {
    const response = doc.paths[p][method].responses[String(status)];
    const schema = JSON.parse(JSON.stringify(response.content['application/json'].schema).replace(/"#\/components\//g, '"doc#/components/'));
    return ajv.compile(schema);
  }

  test('every schema in the document is valid JSON Schema 2020-12', () => {
    const schemas: unknown[] = [];
    const walk = (node: any, key?: string) => {
      if (!node || typeof node !== 'object') return;
      if (key === 'schema') schemas.push(node);
      for (const [k, v] of Object.entries(node)) walk(v, k);
    };
    walk(doc.paths);
    walk(doc.components);
    expect(schemas.length).toBeGreaterThan(50);
    for (const schema of schemas) {
      const ok = ajv.validateSchema(schema as object);
      expect({ ok, errors: ajv.errors ?? null }).toEqual({ ok: true, errors: null });
    }
  });

  test('successful answers match their documented schemas', async () => {
    await h.apply([
      gameConfig('openapi-config', {
        environment: 'alpha-live',
        values: [
          { key: 'motd', type: 'string', value: 'Hi', groupName: 'text' },
          { key: 'party', type: 'int', value: 4 },
          { key: 'gravity', type: 'float', value: 9.8 },
          { key: 'pvp', type: 'bool', value: true },
        ],
        tables: [{ key: 'weapons', name: 'Weapons', columns: [{ key: 'damage', label: 'Damage', type: 'int' }], rows: [{ key: 'sword', cells: { damage: 10 } }] }],
        flags: [{ name: 'shop', enabled: true }],
      }),
    ]);
    const key = h.serverKeys['alpha-live-key'];
    const tokens = await signIn(h.base, key, 'openapi-player', 'Docs');
    const signedIn = await call(h.base, 'POST', '/auth/server', { token: key, body: { subject: 'openapi-player' } });
    const refreshed = await call(h.base, 'POST', '/auth/refresh', { body: { refreshToken: tokens.refreshToken } });
    const checks: [string, string, Awaited<ReturnType<typeof call>>][] = [
      ['get', '/.well-known/jwks.json', await call(h.base, 'GET', '/.well-known/jwks.json')],
      ['post', '/auth/server', signedIn],
      ['post', '/auth/refresh', refreshed],
      ['get', '/players/{playerId}', await call(h.base, 'GET', '/players/me', { token: tokens.accessToken })],
      ['patch', '/players/{playerId}', await call(h.base, 'PATCH', '/players/me', { token: tokens.accessToken, body: { displayName: 'Doc' } })],
      ['get', '/config/values', await call(h.base, 'GET', '/config/values', { token: key })],
      ['get', '/config/tables', await call(h.base, 'GET', '/config/tables', { token: key })],
      ['get', '/config/tables/{key}', await call(h.base, 'GET', '/config/tables/weapons', { token: key })],
      ['get', '/flags', await call(h.base, 'GET', '/flags?limit=1', { token: key })],
    ];
    for (const [method, p, reply] of checks) {
      const validate = responseValidator(method, p, reply.status);
      const ok = validate(reply.body);
      expect({ route: `${method} ${p}`, ok, errors: validate.errors ?? null }).toEqual({ route: `${method} ${p}`, ok: true, errors: null });
    }
  });

  test('refusals match their documented schemas', async () => {
    const key = h.serverKeys['alpha-live-key'];
    const checks: [string, string, Awaited<ReturnType<typeof call>>][] = [
      ['get', '/flags', await call(h.base, 'GET', '/flags?limit=0', { token: key })],
      ['get', '/flags', await call(h.base, 'GET', '/flags')],
      ['get', '/flags', await call(h.base, 'GET', '/flags', { token: h.serverKeys['plain-live-key'] })],
      ['get', '/config/tables/{key}', await call(h.base, 'GET', '/config/tables/none', { token: key })],
      ['post', '/auth/server', await call(h.base, 'POST', '/auth/server', { token: key, body: { subject: 's', extra: 1 } })],
      ['delete', '/players/{playerId}', await call(h.base, 'DELETE', '/players/me', { token: key })],
    ];
    for (const [method, p, reply] of checks) {
      const validate = responseValidator(method, p, reply.status);
      expect({ route: `${method} ${p}`, status: reply.status, ok: validate(reply.body) }).toEqual({ route: `${method} ${p}`, status: reply.status, ok: true });
    }
  });
});
