/**
 * Card definitions (spec §4 "Definitions"): GET /definitions/card-types and /definitions/card-templates.
 * The domain is apps/core/src/cards/definitions.ts; docs/cards.md "Card types and templates".
 */
import { CardTemplateDefinition, CardTypeDefinition } from '@hearth/core/shapes';
import { BODY_LIMITS, defineRoute } from '../../http/route';
import { PageOf, PageOnlyQuery } from '../../http/schema-helpers';

export const listCardTypeDefinitions = defineRoute({
  operationId: 'listCardTypeDefinitions',
  method: 'GET',
  path: '/definitions/card-types',
  summary: "The environment's card types, ordered by key",
  description: 'Switched-off card types are listed with `enabled: false`; deleted ones are not listed.',
  tag: 'definitions',
  credential: 'server',
  service: 'cards',
  query: PageOnlyQuery,
  etag: (ctx, ask) => ctx.core.cardDefinitions.cardTypesEtag(ctx.env.id, ask),
  bodyLimit: BODY_LIMITS.gameService,
  success: { status: 200, description: 'A page of card type definitions', schema: PageOf(CardTypeDefinition) },
  refusals: [],
  handler: async (ctx) => ({ body: await ctx.core.cardDefinitions.listCardTypes(ctx.db, ctx.env, ctx.query) }),
});

export const listCardTemplateDefinitions = defineRoute({
  operationId: 'listCardTemplateDefinitions',
  method: 'GET',
  path: '/definitions/card-templates',
  summary: "The environment's card templates, ordered by key",
  description: 'Switched-off templates are listed with `enabled: false`; deleted ones are not listed.',
  tag: 'definitions',
  credential: 'server',
  service: 'cards',
  query: PageOnlyQuery,
  etag: (ctx, ask) => ctx.core.cardDefinitions.cardTemplatesEtag(ctx.env.id, ask),
  bodyLimit: BODY_LIMITS.gameService,
  success: { status: 200, description: 'A page of card template definitions', schema: PageOf(CardTemplateDefinition) },
  refusals: [],
  handler: async (ctx) => ({ body: await ctx.core.cardDefinitions.listCardTemplates(ctx.db, ctx.env, ctx.query) }),
});
