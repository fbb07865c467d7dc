import type { TSchema } from '@sinclair/typebox';
import { type ApiDocumentAbout, DEFAULT_API_ABOUT, ERROR_CODES, ERROR_STATUS, type ErrorCode } from '@hearth/core';
import { ERROR_DETAILS, ErrorDetailsShape, detailsSchemaOf } from '@hearth/core/shapes';
import type { AnyRoute, RouteLink } from './route';
import { CREDENTIALS_TAKEN, IdempotencyKeyHeader, type PrincipalKind, bodyLimitOf, refusalsOf } from './checks';
import { BASE_PATH } from './app';
import { API_TAGS } from './tags';
import { SPEC_ROUTE_ORDER, routeOrderKey } from './route-order';

type Json = Record<string, unknown>;

/** The security scheme of each credential the API accepts. */
const SCHEMES: Record<PrincipalKind, { name: string; scheme: Json }> = {
  server: { name: 'serverKey', scheme: { type: 'http', scheme: 'bearer', description: 'A server key: hsk_<keyId>_<secret>' } },
  player: { name: 'playerToken', scheme: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'A player access token' } },
  licence: { name: 'licenceKey', scheme: { type: 'http', scheme: 'bearer', description: "An organisation's licence key, taken by the licence routes only" } },
  dashboard: {
    name: 'dashboardToken',
    scheme: {
      type: 'http',
      scheme: 'bearer',
      bearerFormat: 'JWT',
      description: 'A dashboard token from POST /auth/dashboard (3600 s); each route needs a permission of the member',
    },
  },
};

/** Any one of the credentials the route takes (an empty list: none). */
function securityOf(route: AnyRoute): Json[] {
  return CREDENTIALS_TAKEN[route.credential].map((kind) => ({ [SCHEMES[kind].name]: [] }));
}

const INT32_MAX = 2 ** 31 - 1;

/**
 * The named schemas of the document (components/schemas): every schema of the route table with a
 * `$id` (the answer shapes of apps/core/src/shapes, and the areas' own named ones) is written once
 * there, each use a `$ref`. Two different schemas under one name are a mistake: the document is not
 * built.
 */
class Components {
  readonly schemas: Record<string, Json> = {};

  /**
   * A TypeBox schema as the document's JSON Schema: named schemas taken out, private keywords dropped,
   * a union of constants written as one `enum`. An answer's objects are open (no `additionalProperties:
   * false`): v1 may add fields to answers, and a generated client must take them (docs/api-conventions.md
   * "What may change within v1"). A request stays exact: the API refuses a field it does not know.
   */
  clean(schema: TSchema, use: SchemaUse): Json {
    return this.hoist(JSON.parse(JSON.stringify(schema, (key, value) => (key === 'x-trim' ? undefined : value))), use);
  }

  private hoist(node: unknown, use: SchemaUse): any {
    if (Array.isArray(node)) return node.map((item) => this.hoist(item, use));
    if (node === null || typeof node !== 'object') return node;
    const { $id, ...rest } = node as Json;
    const out: Json = {};
    for (const [key, value] of Object.entries(rest)) out[key] = this.hoist(value, use);
    widenInteger(out);
    asEnum(out);
    if (use === 'answer' && out.type === 'object' && out.additionalProperties === false) delete out.additionalProperties;
    if (typeof $id !== 'string') return out;
    const known = this.schemas[$id];
    if (known && JSON.stringify(known) !== JSON.stringify(out)) throw new Error(`two different schemas are named ${$id}`);
    this.schemas[$id] = out;
    return { $ref: `#/components/schemas/${$id}` };
  }

  /** A schema the document builds itself (a refusal), written once under its name and referred to. */
  name(name: string, schema: Json): Json {
    const known = this.schemas[name];
    if (known && JSON.stringify(known) !== JSON.stringify(schema)) throw new Error(`two different schemas are named ${name}`);
    this.schemas[name] = schema;
    return { $ref: `#/components/schemas/${name}` };
  }
}

/** Whether a schema is read (an answer: open to new fields) or sent (a request: exact). */
type SchemaUse = 'answer' | 'request';

/**
 * A union of constants of one type (TypeBox's `Union([Literal…])`, an `anyOf` of `const`s) as one
 * `enum`: every generator turns that into a real enumeration (Go, Python, Rust), where some give an
 * `anyOf` of constants a wrapper type or a bare string.
 */
function asEnum(schema: Json): void {
  const members = schema.anyOf;
  if (!Array.isArray(members) || members.length < 2) return;
  const type = (members[0] as Json).type;
  const constants = members.every((m: Json) => 'const' in m && m.type === type && Object.keys(m).every((k) => k === 'const' || k === 'type'));
  if (!constants || (type !== 'string' && type !== 'integer' && type !== 'number')) return;
  delete schema.anyOf;
  schema.type = type;
  schema.enum = members.map((m: Json) => m.const);
}

/** The named schema of the stable error codes: `Error.error` refers to it. */
const ERROR_CODE_SCHEMA = 'ErrorCode';

/** The extension on a refusal answer listing the codes it may carry, in the spec's order. */
export const ERROR_CODES_EXTENSION = 'x-hearth-error-codes';
/** The extension on a 413 answer: the most the route takes, in bytes (also its `details.limit`). */
export const BODY_LIMIT_EXTENSION = 'x-hearth-body-limit';

/**
 * An integer whose declared bounds do not fit 32 bits (a balance, a byte count, or one with no bound)
 * says `format: int64`, so that typed clients (Java, C#) give it a 64-bit field.
 */
function widenInteger(schema: Json): void {
  if (schema.type !== 'integer' || schema.format !== undefined) return;
  const { maximum, minimum } = schema as { maximum?: number; minimum?: number };
  if (maximum === undefined || maximum > INT32_MAX || (minimum !== undefined && minimum < -INT32_MAX - 1)) schema.format = 'int64';
}

function parametersOf(components: Components, schema: TSchema | undefined, where: 'path' | 'query' | 'header'): Json[] {
  if (!schema) return [];
  const s = components.clean(schema, 'request');
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
/** Whether a body schema requires any field (an absent body, read as `{}`, then fails validation). */
const bodyRequires = (schema: TSchema): boolean => ((schema as { required?: string[] }).required ?? []).length > 0;

const ETAG_HEADER = { required: true, schema: { type: 'string' } };
/** Seconds until the refusing window restarts: at most a day, the longest window (spec §8). */
const RETRY_AFTER_HEADER = { required: true, schema: { type: 'integer', minimum: 1, maximum: 86_400 } };

/**
 * What each code of a refusal carries in its details (ERROR_DETAILS), for the answer's description:
 * every refusal is one `Error`, and its `details` the one `ErrorDetails` shape.
 */
function detailsNote(codes: ErrorCode[], route: AnyRoute): string {
  const notes = codes.flatMap((code) => {
    const declared = ERROR_DETAILS[code];
    if (!declared) return [];
    const fields = [...declared.required, ...(declared.optional ?? []).map((field) => `${field}?`)];
    const limit = code === 'payload-too-large' ? `, limit ${bodyLimitOf(route)} bytes` : '';
    return fields.length ? [`\`${code}\`: details ${fields.join(', ')}${limit}`] : [];
  });
  return notes.length ? ` (${notes.join('; ')})` : '';
}

function pathParametersOf(route: AnyRoute): string[] {
  return [...route.path.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1]);
}

/**
 * The OpenAPI links of a route's success answer (RouteSpec.links), one per target operation, named by
 * it. A link naming an operation the table lacks or a parameter its target does not take is a mistake
 * in the table: the document is not built.
 */
function linksOf(route: AnyRoute, routes: AnyRoute[]): Json | undefined {
  if (!route.links?.length) return undefined;
  const byId = new Map(routes.map((r) => [r.operationId, r]));
  const links: Json = {};
  const linkTo = (target: AnyRoute, link: RouteLink) => {
    const takes = new Set([...pathParametersOf(target), ...Object.keys(((target.query ?? {}) as { properties?: object }).properties ?? {})]);
    // A player token names its own player `me` (routes/players/target.ts): a player-only route under
    // /players/:playerId takes no id from an answer.
    if (target.credential === 'player' && target.path.startsWith('/players/:playerId')) takes.delete('playerId');
    const parameters = Object.fromEntries(Object.entries(link.parameters).filter(([name]) => takes.has(name)));
    if (Object.keys(parameters).length === 0) {
      if (link.to) throw new Error(`${route.operationId} links to ${target.operationId}, which takes none of ${Object.keys(link.parameters).join(', ')}`);
      return;
    }
    links[target.operationId] = { operationId: target.operationId, parameters };
  };
  for (const link of route.links) {
    if (link.to) {
      for (const id of link.to) {
        const target = byId.get(id);
        if (!target) throw new Error(`${route.operationId} links to ${id}, which is not in the route table`);
        linkTo(target, link);
      }
      continue;
    }
    const wanted = Object.keys(link.parameters);
    for (const target of routes) {
      const takes = pathParametersOf(target);
      if (target !== route && !(target.operationId in links) && wanted.every((name) => takes.includes(name))) linkTo(target, link);
    }
  }
  return links;
}

/** The OpenAPI 3.1 document of the route table: nothing in it is written by hand. */
export interface OpenApiDocument {
  openapi: string;
  info: Json;
  tags: { name: string; description: string }[];
  servers: Json[];
  paths: Record<string, Record<string, Json>>;
  components: Json;
}

const SPEC_POSITION = new Map(SPEC_ROUTE_ORDER.map((key, position) => [key, position]));

/**
 * The routes in the spec's order (SPEC_ROUTE_ORDER), whatever order they were registered in; a route
 * the list does not name (a test's own) comes after, in the order given.
 */
function inSpecOrder(routes: AnyRoute[]): AnyRoute[] {
  const position = (route: AnyRoute) => SPEC_POSITION.get(routeOrderKey(route)) ?? SPEC_ROUTE_ORDER.length;
  return [...routes].sort((a, b) => position(a) - position(b));
}

/**
 * `about` is the deployment's contact and terms (HEARTH_API_CONTACT, HEARTH_API_LICENSE). The paths,
 * the tags and the named schemas come in the spec's order of the routes, not the table's.
 */
export function buildOpenApi(registered: AnyRoute[], about: ApiDocumentAbout = DEFAULT_API_ABOUT): OpenApiDocument {
  const routes = inSpecOrder(registered);
  const paths: Record<string, Record<string, Json>> = {};
  const components = new Components();
  const answer = (schema: TSchema) => components.clean(schema, 'answer');
  const request = (schema: TSchema) => components.clean(schema, 'request');
  // Named first, so the document's components open with the error shape.
  const errorDetails = answer(ErrorDetailsShape);
  for (const route of routes) {
    const responses: Record<string, Json> = {};
    const ok: Json = { description: route.success.description, headers: { ...RATE_LIMIT_HEADERS } };
    if (route.success.schema) ok.content = { 'application/json': { schema: answer(route.success.schema) } };
    const links = linksOf(route, routes);
    if (links) ok.links = links;
    if (route.etag) ok.headers = { ...RATE_LIMIT_HEADERS, ETag: ETAG_HEADER };
    responses[String(route.success.status)] = ok;
    for (const also of route.success.also ?? []) {
      responses[String(also.status)] = route.success.schema
        ? { description: also.description, headers: RATE_LIMIT_HEADERS, content: { 'application/json': { schema: answer(route.success.schema) } } }
        : { description: also.description, headers: RATE_LIMIT_HEADERS };
    }
    if (route.etag) {
      responses['304'] = { description: 'Not modified: the ETag sent in If-None-Match is current.', headers: { ...RATE_LIMIT_HEADERS, ETag: ETAG_HEADER } };
    }

    // The route's own refusals and those of the pipeline's checks that apply to it (checks.ts).
    const byStatus = new Map<number, ErrorCode[]>();
    // Any operation may fail on our side: 500 internal-error, with nothing of the fault in it.
    for (const code of new Set<ErrorCode>([...refusalsOf(route), 'internal-error'])) {
      const status = ERROR_STATUS[code];
      byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
    }
    for (const [status, listed] of [...byStatus].sort(([a], [b]) => a - b)) {
      // In the spec's order of codes, so that two operations refusing alike share one named schema.
      const codes = [...listed].sort((a, b) => ERROR_CODES.indexOf(a) - ERROR_CODES.indexOf(b));
      // One error type for every refusal: the codes a status may carry are listed on the answer
      // (x-hearth-error-codes, which the TypeScript SDK reads) and in its description.
      responses[String(status)] = {
        description: `${status >= 500 ? 'Failed' : 'Refused'}: ${codes.join(', ')}${detailsNote(codes, route)}`,
        headers: status === 429 ? { ...RATE_LIMIT_HEADERS, 'Retry-After': RETRY_AFTER_HEADER } : RATE_LIMIT_HEADERS,
        content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
        [ERROR_CODES_EXTENSION]: codes,
        ...(status === 413 ? { [BODY_LIMIT_EXTENSION]: bodyLimitOf(route) } : {}),
      };
    }

    const parameters = [...parametersOf(components, route.params, 'path'), ...parametersOf(components, route.query, 'query')];
    if (route.etag) parameters.push({ name: 'If-None-Match', in: 'header', required: false, schema: { type: 'string' } });
    if (route.idempotency === 'optional' || route.idempotency === 'required') {
      parameters.push({
        name: IdempotencyKeyHeader.name,
        in: 'header',
        required: route.idempotency === 'required',
        description: 'Identical on every retry: a retry answers what the first request answered and does nothing again.',
        schema: request(IdempotencyKeyHeader.schema),
      });
    }

    const operation: Json = {
      operationId: route.operationId,
      summary: route.summary,
      ...(route.description ? { description: route.description } : {}),
      tags: [route.tag],
      security: securityOf(route),
      ...(parameters.length ? { parameters } : {}),
      // An absent body counts as `{}` (docs/api-conventions.md): a body is required only where its
      // schema requires a field, as the API refuses an absent one only there.
      ...(route.body ? { requestBody: { required: bodyRequires(route.body), content: { 'application/json': { schema: request(route.body) } } } } : {}),
      // A streamed body is bytes (the crash upload): any content, within the route's limit.
      ...(route.bodyMode === 'stream'
        ? {
            requestBody: {
              required: true,
              content: { 'application/octet-stream': { schema: { type: 'string', contentMediaType: 'application/octet-stream' } } },
            },
          }
        : {}),
      responses,
      ...(route.service ? { 'x-hearth-service': route.service } : {}),
    };
    const path = toOpenApiPath(route.path);
    paths[path] = { ...(paths[path] ?? {}), [route.method.toLowerCase()]: operation };
  }

  return {
    openapi: '3.1.0',
    info: {
      title: 'Hearth platform API',
      version: '1.0.0',
      // The route-match check answers no operation's request, so it is said here once.
      description:
        'The game platform API, version 1. A request no operation here takes (an unknown path, or a known path with another method) answers 404 `not-found`.',
      contact: about.contact,
      license: about.license,
    },
    // A whole URL with a default, as generators need one; a client sets `origin` to its deployment.
    // Every area the routes name, in the order they first appear, with what it holds.
    tags: [...new Set(routes.map((route) => route.tag))].map((name) => ({ name, description: API_TAGS[name] })),
    servers: [
      {
        url: `{origin}${BASE_PATH}`,
        description: 'this API, version 1',
        variables: { origin: { default: 'http://127.0.0.1:8080', description: "the deployment's scheme, host and port (the default: `hearth dev`)" } },
      },
    ],
    paths,
    components: {
      schemas: {
        Error: {
          type: 'object',
          description: 'Every refusal and failure: a stable code, a sentence for people, and details for some codes.',
          required: ['error', 'message'],
          properties: {
            error: { $ref: `#/components/schemas/${ERROR_CODE_SCHEMA}` },
            message: { type: 'string', description: 'a sentence for people; may be reworded' },
            details: errorDetails,
          },
        },
        [ERROR_CODE_SCHEMA]: {
          type: 'string',
          description: 'A stable code saying why a request was refused; v1 may add codes, which a client treats as a refusal of its status.',
          enum: [...ERROR_CODES],
        },
        ...components.schemas,
      },
      headers: {
        'X-RateLimit-Limit': {
          description: 'the limit nearest to refusing the caller',
          required: true,
          schema: { type: 'integer', format: 'int64', minimum: 0 },
        },
        'X-RateLimit-Remaining': {
          description: 'requests left of that limit in its window',
          required: true,
          schema: { type: 'integer', format: 'int64', minimum: 0 },
        },
        'X-RateLimit-Reset': { description: 'seconds until that window restarts', required: true, schema: { type: 'integer', format: 'int64', minimum: 0 } },
      },
      securitySchemes: Object.fromEntries(Object.values(SCHEMES).map(({ name, scheme }) => [name, scheme])),
    },
  };
}
