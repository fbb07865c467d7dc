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

function toOpenApiPath(path: string): string {
  return BASE_PATH + path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

/** The OpenAPI 3.1 document of the route table: nothing in it is written by hand. */
export function buildOpenApi(routes: AnyRoute[]): Json {
  const paths: Record<string, Record<string, Json>> = {};
  for (const route of routes) {
    const responses: Record<string, Json> = {};
    const ok: Json = { description: route.success.description };
    if (route.success.schema) ok.content = { 'application/json': { schema: clean(route.success.schema) } };
    if (route.etag) ok.headers = { ETag: { schema: { type: 'string' } } };
    responses[String(route.success.status)] = ok;
    for (const also of route.success.also ?? []) {
      responses[String(also.status)] = route.success.schema
        ? { description: also.description, content: { 'application/json': { schema: clean(route.success.schema) } } }
        : { description: also.description };
    }
    if (route.etag) responses['304'] = { description: 'Not modified: the ETag sent in If-None-Match is current.' };

    const byStatus = new Map<number, ErrorCode[]>();
    for (const code of refusalsOf(route)) {
      const status = ERROR_STATUS[code];
      byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
    }
    byStatus.set(404, [...new Set([...(byStatus.get(404) ?? []), 'not-found' as ErrorCode])]);
    for (const [status, codes] of [...byStatus].sort(([a], [b]) => a - b)) {
      responses[String(status)] = {
        description: `Refused: ${codes.join(', ')}`,
        content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
        ...(status === 429 ? { headers: { 'Retry-After': { schema: { type: 'integer' } } } } : {}),
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
    servers: [{ url: '/' }],
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
      securitySchemes: {
        serverKey: { type: 'http', scheme: 'bearer', description: 'A server key: hsk_<keyId>_<secret>' },
        playerToken: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'A player access token' },
        dashboardToken: { type: 'http', scheme: 'bearer', description: 'A custom dashboard token' },
      },
    },
  };
}
