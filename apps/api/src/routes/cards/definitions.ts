/**
 * Card definitions (spec §4 "Definitions"): GET /definitions/card-types and /definitions/card-templates.
 * The domain is apps/core/src/cards/definitions.ts; docs/cards.md "Card types and templates".
 */
import { CardTemplateDefinition, CardTypeDefinition } from '@hearth/core/shapes';
import { definitionsPage } from '../definitions';

export const listCardTypeDefinitions = definitionsPage(
  'cards',
  {
    operationId: 'listCardTypeDefinitions',
    path: '/definitions/card-types',
    summary: "The environment's card types, ordered by key",
    description: 'Switched-off card types are listed with `enabled: false`; deleted ones are not listed.',
    item: CardTypeDefinition,
    pageOf: 'card type definitions',
  },
  {
    etag: (ctx, ask) => ctx.core.cardDefinitions.cardTypesEtag(ctx.env.id, ask),
    list: (ctx) => ctx.core.cardDefinitions.listCardTypes(ctx.db, ctx.env, ctx.query),
  },
);

export const listCardTemplateDefinitions = definitionsPage(
  'cards',
  {
    operationId: 'listCardTemplateDefinitions',
    path: '/definitions/card-templates',
    summary: "The environment's card templates, ordered by key",
    description: 'Switched-off templates are listed with `enabled: false`; deleted ones are not listed.',
    item: CardTemplateDefinition,
    pageOf: 'card template definitions',
  },
  {
    etag: (ctx, ask) => ctx.core.cardDefinitions.cardTemplatesEtag(ctx.env.id, ask),
    list: (ctx) => ctx.core.cardDefinitions.listCardTemplates(ctx.db, ctx.env, ctx.query),
  },
);
