import { LegalAcceptRequest, LegalDocument, LegalStanding, PageOf, PageOnlyQuery, PlayerPath } from '@hearth/core/shapes';
import type { AnyRoute } from '../../http/route';
import { answeredForPlayer, listedForPlayer, playerPage } from '../players/target';
import { legalRoute } from './area';

export const listLegalDocuments = legalRoute({
  operationId: 'listLegalDocuments',
  method: 'GET',
  path: '/legal/documents',
  summary: "The environment's legal documents, ordered by key",
  description:
    "Pages through the environment's legal documents (terms, privacy policy...), each with its current version. Cached by ETag (304 while unchanged).",
  credential: 'either',
  query: PageOnlyQuery,
  etag: (ctx, ask) => ctx.core.legal.etag(ctx.env.id, ask),
  success: { status: 200, description: 'A page of legal documents', schema: PageOf(LegalDocument) },
  refusals: [],
  handler: async (ctx) => {
    // The body and its ETag from one catalog (never a new body under an old ETag).
    const { page, etag } = await ctx.core.legal.listDocuments(ctx.env, ctx.query, ctx.ask);
    return { body: page, headers: { ETag: etag } };
  },
});

export const getLegalStanding = legalRoute({
  operationId: 'getLegalStanding',
  method: 'GET',
  path: '/players/:playerId/legal',
  summary: "A player's standing with the environment's legal documents",
  description:
    "For each of the environment's legal documents, what the player has accepted, and the documents whose current version the player has yet to accept (`outstanding`). A player token reads its own standing (`me`); a server key any player's.",
  credential: 'either',
  success: { status: 200, description: 'The standing', schema: LegalStanding },
  ...answeredForPlayer({ params: PlayerPath }, (ctx, playerId) => ctx.core.legal.standing(ctx.db, ctx.env, playerId)),
});

export const listOutstandingLegal = legalRoute({
  ...playerPage('legal'),
  ...listedForPlayer((ctx, playerId) => ctx.core.legal.outstanding(ctx.db, ctx.env, playerId, ctx.query)),
  operationId: 'listOutstandingLegal',
  path: '/players/:playerId/legal/outstanding',
  summary: 'Required documents whose current version the player has not accepted',
  description: 'An empty list means the player may play.',
  success: { status: 200, description: 'A page of legal documents, ordered by key', schema: PageOf(LegalDocument) },
});

export const acceptLegal = legalRoute({
  operationId: 'acceptLegal',
  method: 'POST',
  path: '/players/:playerId/legal/accept',
  summary: 'Accept the current version of legal documents',
  description:
    'Each entry names a document and its current version; a document that does not exist or a version that is not current is refused with `invalid-request` naming the entry, and nothing is recorded. Re-accepting changes nothing (acceptedAt stays the first).',
  credential: 'player',
  success: { status: 200, description: 'The standing after accepting', schema: LegalStanding },
  ...answeredForPlayer({ params: PlayerPath, body: LegalAcceptRequest }, (ctx, playerId) => ctx.core.legal.accept(ctx.db, ctx.env, playerId, ctx.body)),
});

/** The legal area's routes: routes/index.ts registers them by this one name. */
export const legalRoutes: AnyRoute[] = [listLegalDocuments, getLegalStanding, listOutstandingLegal, acceptLegal];
