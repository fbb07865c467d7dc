import { JsonWebKeySet, OpenApiDocumentShape } from '@hearth/core/shapes';
import { type AnyRoute, defineRoute } from '../../http/route';

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

/** GET /openapi.json answers the document built from the whole route table (set by the route list). */
export function openApiRoute(document: () => OpenApiDocumentShape) {
  return defineRoute({
    operationId: 'getOpenApi',
    method: 'GET',
    path: '/openapi.json',
    summary: 'This API as an OpenAPI 3.1 document',
    description:
      'Needs no credential. Every operation, shape, refusal and limit of the API, built from the same route table that routes and validates requests, so it cannot drift from what the API answers.',
    tag: 'reference',
    credential: 'none',
    success: { status: 200, description: 'The OpenAPI document', schema: OpenApiDocumentShape },
    refusals: [],
    handler: async () => ({ body: document() }),
  });
}

/** The reference routes, the document's and the key set's: routes/index.ts registers them by this one call. */
export const referenceRoutes = (document: () => OpenApiDocumentShape): AnyRoute[] => [openApiRoute(document), getJwks];
