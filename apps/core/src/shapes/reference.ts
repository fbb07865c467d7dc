/**
 * The reference routes' answers beside the key sets (./licence JsonWebKeySet): the top level of the
 * API's own OpenAPI document, as GET /openapi.json answers it.
 */
import { Type, type Static } from '@sinclair/typebox';

/**
 * The document's top level, exact in what Hearth sends (the document itself leaves answers open). What is inside each part is OpenAPI 3.1's to
 * define (and test/api/openapi.test.ts validates the whole against it).
 */
export const OpenApiDocumentShape = Type.Object(
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
export type OpenApiDocumentShape = Static<typeof OpenApiDocumentShape>;
