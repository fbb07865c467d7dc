import { Type, type Static } from '@sinclair/typebox';
import { JsonWebKeySet } from '@hearth/core';
import { defineRoute } from '../../http/route';

export const getJwks = defineRoute({
  operationId: 'getJwks',
  method: 'GET',
  path: '/.well-known/jwks.json',
  summary: 'The public keys that verify player tokens',
  description: 'While a key is being replaced the set holds two keys: the new first, the old until its last token expired.',
  tag: 'reference',
  credential: 'none',
  success: {
    status: 200,
    description: 'The key set',
    schema: JsonWebKeySet,
  },
  refusals: [],
  handler: async (ctx) => ({ body: ctx.core.tokens.jwks(), headers: { 'Cache-Control': 'public, max-age=300' } }),
});

/**
 * The document's top level, exact in what Hearth sends (the document itself leaves answers open). What is inside each part is OpenAPI 3.1's to
 * define (and test/api/openapi.test.ts validates the whole against it).
 */
const OpenApiDocument = Type.Object(
  {
    openapi: Type.String({ pattern: '^3\\.1\\.\\d+$' }),
    info: Type.Object({}, { additionalProperties: true }),
    tags: Type.Array(Type.Object({ name: Type.String(), description: Type.String() }, { additionalProperties: false })),
    servers: Type.Array(Type.Object({}, { additionalProperties: true })),
    paths: Type.Record(Type.String({ pattern: '^/' }), Type.Object({}, { additionalProperties: true }), { additionalProperties: false }),
    components: Type.Object({}, { additionalProperties: true }),
  },
  { additionalProperties: false },
);

/** GET /openapi.json answers the document built from the whole route table (set by the route list). */
export function openApiRoute(document: () => Static<typeof OpenApiDocument>) {
  return defineRoute({
    operationId: 'getOpenApi',
    method: 'GET',
    path: '/openapi.json',
    summary: 'This API as an OpenAPI 3.1 document',
    description:
      "Needs no credential. Every operation, shape, refusal and limit of the API, built from the same route table that routes and validates requests, so it cannot drift from what the API answers.",
    tag: 'reference',
    credential: 'none',
    success: { status: 200, description: 'The OpenAPI document', schema: OpenApiDocument },
    refusals: [],
    handler: async () => ({ body: document() }),
  });
}
