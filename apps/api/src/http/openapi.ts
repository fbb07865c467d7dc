import type { TSchema } from '@sinclair/typebox';
import { ERROR_STATUS, ErrorCode } from '@hearth/core';
import { AnyRoute, CredentialKind, refusalsOf } from './route';
import { BASE_PATH } from './app';

type Json = Record<string, unknown>;

const SECURITY: Record<CredentialKind, Json[]> = {
  none: [],
  server: [{ serverKey: [] }],
  player: [{ playerToken: [] }],
  either: [{ serverKey: [] }, { playerToken: [] }],
  'either-or-dashboard': [{ serverKey: [] }, { playerToken: [] }, { dashboardToken: [] }],
};

/** TypeBox schemas are JSON Schema already; drop our private keywords. */
function clean(schema: TSchema): Json {
  return JSON.parse(JSON.stringify(schema, (key, value) => (key === 'x-trim' ? undefined : value))) as Json;
}

function parametersOf(schema: TSchema | undefined, where: 'path' | 'query' | 'header'): Json[] {
  if (!schema) return [];
  const s = clean(schema);
  const props = (s.properties ?? {}) as Record<string, Json>;
  const required = new Set((s.required ?? []) as string[]);
  return Object.entries(props).map(([name, prop]) => ({
    name,
    in: where,
    required: where === 'path' ? true : required.has(name),
    ...(prop.description ? { description: prop.description } : {}),
    schema: prop,
  }));
}

/** Paths are relative to the server URL, which carries the version segment (as the spec's {base_url} does). */
function toOpenApiPath(path: string): string {
  return path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

/** Every answer carries these (spec §4). */
const RATE_LIMIT_HEADERS = Object.fromEntries(
  ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'].map((name) => [name, { $ref: `#/components/headers/${name}` }]),
);

/** The OpenAPI 3.1 document of the route table: nothing in it is written by hand. */
export function buildOpenApi(routes: AnyRoute[]): Json {
  const paths: Record<string, Record<string, Json>> = {};
  for (const route of routes) {
    const responses: Record<string, Json> = {};
    const ok: Json = { description: route.success.description, headers: { ...RATE_LIMIT_HEADERS } };
    if (route.success.schema) ok.content = { 'application/json': { schema: clean(route.success.schema) } };
    if (route.etag) ok.headers = { ...RATE_LIMIT_HEADERS, ETag: { schema: { type: 'string' } } };
    responses[String(route.success.status)] = ok;
    for (const also of route.success.also ?? []) {
      responses[String(also.status)] = route.success.schema
        ? { description: also.description, headers: RATE_LIMIT_HEADERS, content: { 'application/json': { schema: clean(route.success.schema) } } }
        : { description: also.description, headers: RATE_LIMIT_HEADERS };
    }
    if (route.etag) {
      responses['304'] = { description: 'Not modified: the ETag sent in If-None-Match is current.', headers: { ...RATE_LIMIT_HEADERS, ETag: { schema: { type: 'string' } } } };
    }

    const byStatus = new Map<number, ErrorCode[]>();
    for (const code of refusalsOf(route)) {
      const status = ERROR_STATUS[code];
      byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
    }
    byStatus.set(404, [...new Set([...(byStatus.get(404) ?? []), 'not-found' as ErrorCode])]);
    for (const [status, codes] of [...byStatus].sort(([a], [b]) => a - b)) {
      // The codes are in the schema too, so a client generator knows exactly what each status may carry.
      const schema = { allOf: [{ $ref: '#/components/schemas/Error' }, { type: 'object', properties: { error: { enum: codes } } }] };
      responses[String(status)] = {
        description: `Refused: ${codes.join(', ')}`,
        headers: status === 429 ? { ...RATE_LIMIT_HEADERS, 'Retry-After': { schema: { type: 'integer' } } } : RATE_LIMIT_HEADERS,
        content: { 'application/json': { schema } },
      };
    }

    const parameters = [...parametersOf(route.params, 'path'), ...parametersOf(route.query, 'query')];
    if (route.etag) parameters.push({ name: 'If-None-Match', in: 'header', required: false, schema: { type: 'string' } });
    if (route.idempotency && route.idempotency !== 'none') {
      parameters.push({
        name: 'Idempotency-Key',
        in: 'header',
        required: route.idempotency === 'required',
        schema: { type: 'string', minLength: 1, maxLength: 128, pattern: '^[\\x20-\\x7E]+$' },
      });
    }

    const operation: Json = {
      operationId: route.operationId,
      summary: route.summary,
      ...(route.description ? { description: route.description } : {}),
      tags: [route.tag],
      security: SECURITY[route.credential],
      ...(parameters.length ? { parameters } : {}),
      ...(route.body
        ? { requestBody: { required: true, content: { 'application/json': { schema: clean(route.body) } } } }
        : {}),
      responses,
      ...(route.service ? { 'x-hearth-service': route.service } : {}),
    };
    const path = toOpenApiPath(route.path);
    paths[path] = { ...(paths[path] ?? {}), [route.method.toLowerCase()]: operation };
  }

  return {
    openapi: '3.1.0',
    info: { title: 'Hearth platform API', version: '1.0.0', description: 'The game platform API, version 1.' },
    servers: [{ url: BASE_PATH, description: 'this API, version 1' }],
    paths,
    components: {
      schemas: {
        Error: {
          type: 'object',
          required: ['error', 'message'],
          properties: {
            error: { type: 'string', enum: Object.keys(ERROR_STATUS) },
            message: { type: 'string' },
            details: { type: 'object' },
          },
        },
      },
      headers: {
        'X-RateLimit-Limit': { description: 'the limit nearest to refusing the caller', schema: { type: 'integer' } },
        'X-RateLimit-Remaining': { description: 'requests left of that limit in its window', schema: { type: 'integer' } },
        'X-RateLimit-Reset': { description: 'seconds until that window restarts', schema: { type: 'integer' } },
      },
      securitySchemes: {
        serverKey: { type: 'http', scheme: 'bearer', description: 'A server key: hsk_<keyId>_<secret>' },
        playerToken: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'A player access token' },
        dashboardToken: { type: 'http', scheme: 'bearer', description: 'A custom dashboard token' },
      },
    },
  };
}
