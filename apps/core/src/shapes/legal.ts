/**
 * Legal documents (spec §2 LegalDocument, LegalStanding; §4 Legal): the answers and the acceptance
 * request, declared once for the route's validation, the document and the legal service.
 */
import { Type, type Static } from '@sinclair/typebox';
import { Shape, Timestamp } from './common';

const documentFields = {
  document: Type.String({ description: "the environment's key for it" }),
  title: Type.String(),
  url: Type.String(),
  version: Type.String({ description: 'the current version, the one a player accepts' }),
  required: Type.Boolean(),
};

/** LegalDocument (spec §2). */
export const LegalDocument = Shape('LegalDocument', documentFields);
export type LegalDocument = Static<typeof LegalDocument>;

/** A document with the player's latest acceptance of it. */
export const LegalStandingEntry = Type.Object(
  {
    ...documentFields,
    acceptedVersion: Type.Union([Type.String(), Type.Null()], { description: 'the latest version accepted' }),
    acceptedAt: Type.Union([Timestamp, Type.Null()], { description: 'when that version was first accepted' }),
    current: Type.Boolean({ description: 'whether the current version is accepted' }),
  },
  { additionalProperties: false },
);
export type LegalStandingEntry = Static<typeof LegalStandingEntry>;

/** LegalStanding (spec §2): every document with the player's latest acceptance, and the required ones still to accept. */
export const LegalStanding = Shape('LegalStanding', {
  documents: Type.Array(LegalStandingEntry),
  outstanding: Type.Array(Type.String(), { description: 'keys of required documents not accepted at their current version' }),
});
export type LegalStanding = Static<typeof LegalStanding>;

/** POST /players/:playerId/legal/accept: documents, each at the version the player accepts. */
export const LegalAcceptRequest = Type.Object(
  {
    documents: Type.Array(
      Type.Object(
        { document: Type.String({ minLength: 1, maxLength: 120 }), version: Type.String({ minLength: 1, maxLength: 64 }) },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: 20 },
    ),
  },
  { additionalProperties: false },
);
export type LegalAcceptRequest = Static<typeof LegalAcceptRequest>;
